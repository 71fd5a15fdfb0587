//! The kernels of `tests/kernels`, built with real compilers for several
//! instruction sets and precisions, counted under the real QEMU, and compared
//! exactly with the closed forms derived in each kernel's header comment.

use crate::support::*;

/// The legacy-SSE builds of the kernels that need more than SSE2.
const SSE3: &[&str] = &["-O2", "-msse3"];
const SSE41: &[&str] = &["-O2", "-msse4.1"];

/// Double, and single with `-DSINGLE`: (precision, extra flags, element bytes).
const PRECISIONS_BUILT: [(&str, &[&str], u64); 2] = [("fp64", &[], 8), ("fp32", &["-DSINGLE"], 4)];

/// A triad-shaped update (a + s * b per element) done `elements` times: one
/// multiply and one add, or one 2-FLOP FMA when the flags allow contraction.
fn mul_add(e: Expect, flags: &[&str], elements: u64) -> Expect {
    if has_fma(flags) {
        e.op("fma", 2 * elements)
    } else {
        e.op("add", elements).op("mul", elements)
    }
}

fn name(source: &str, flags: &[&str], args: &[u64]) -> String {
    format!("{source} [{}] {args:?}", flags.join(" "))
}

fn args(values: &[u64]) -> Vec<String> {
    values.iter().map(u64::to_string).collect()
}

#[test]
fn matmul_ikj_is_2n3() {
    let mut f = Failures::default();
    for base in FLAG_SETS {
        for (precision, extra, _) in PRECISIONS_BUILT {
            let flags = flags_with(base, extra);
            let exe = build("matmul.c", &flags);
            // An odd n exercises the vector remainder paths.
            for (n, reps) in [(17, 2), (40, 1)] {
                let r = count_ok(&exe, &args(&[n, reps]), &[]);
                let e = mul_add(
                    Expect::new().flop(precision, 2 * n * n * n * reps),
                    &flags,
                    n * n * n * reps,
                );
                f.expect(&name("matmul.c", &flags, &[n, reps]), &r, &e);
            }
        }
    }
    f.assert_none();
}

#[test]
fn triad_flop_and_bytes() {
    // Same digit count, so argument parsing costs the same (see triad.c).
    let (n1, n2, reps) = (1001, 3003, 10);
    let mut f = Failures::default();
    for base in FLAG_SETS {
        for (precision, extra, size) in PRECISIONS_BUILT {
            let flags = flags_with(base, extra);
            let exe = build("triad.c", &flags);
            let r1 = count_ok(&exe, &args(&[n1, reps]), &[]);
            let r2 = count_ok(&exe, &args(&[n2, reps]), &[]);
            for (n, r) in [(n1, &r1), (n2, &r2)] {
                let e = mul_add(
                    Expect::new().flop(precision, 2 * n * reps),
                    &flags,
                    n * reps,
                );
                f.expect(&name("triad.c", &flags, &[n, reps]), r, &e);
            }
            let what = name("triad.c", &flags, &[n1, n2, reps]);
            let dn = (n2 - n1) as i64 * reps as i64;
            f.bytes_delta(&what, (&r1, &r2), 2 * size as i64 * dn, size as i64 * dn);
        }
    }
    f.assert_none();
}

#[test]
fn triad_vector_widths_and_access_sizes() {
    // Multiples of 8, so every width divides them; same digit count.
    let (n1, n2, reps) = (1000, 3000, 10);
    let mut f = Failures::default();
    for base in FLAG_SETS {
        for (precision, extra, size) in PRECISIONS_BUILT {
            let flags = flags_with(base, extra);
            let exe = build("triad_vec.c", &flags);
            let vector_bytes: u64 = if base == SSE2 { 16 } else { 32 };
            let lanes = vector_bytes / size;
            let r1 = count_ok(&exe, &args(&[n1, reps]), &[]);
            let r2 = count_ok(&exe, &args(&[n2, reps]), &[]);
            for (n, r) in [(n1, &r1), (n2, &r2)] {
                let vectors = n / lanes * reps;
                let width = 8 * vector_bytes;
                let e = if has_fma(&flags) {
                    Expect::new().insn(precision, width, lanes, "fma", vectors, 2 * lanes)
                } else {
                    Expect::new()
                        .insn(precision, width, lanes, "mul", vectors, lanes)
                        .insn(precision, width, lanes, "add", vectors, lanes)
                };
                let e = mul_add(e, &flags, n * reps);
                f.expect(&name("triad_vec.c", &flags, &[n, reps]), r, &e);
            }
            let what = name("triad_vec.c", &flags, &[n1, n2, reps]);
            let d_vectors = ((n2 - n1) / lanes * reps) as i64;
            let reads = histogram_delta(&r1.mem_accesses("read"), &r2.mem_accesses("read"));
            let writes = histogram_delta(&r1.mem_accesses("write"), &r2.mem_accesses("write"));
            f.equal_map(
                &format!("{what}: d mem_accesses.read"),
                &[(vector_bytes, 2 * d_vectors)].into(),
                &reads,
            );
            f.equal_map(
                &format!("{what}: d mem_accesses.write"),
                &[(vector_bytes, d_vectors)].into(),
                &writes,
            );
            let dn = (n2 - n1) as i64 * reps as i64;
            f.bytes_delta(&what, (&r1, &r2), 2 * size as i64 * dn, size as i64 * dn);
        }
    }
    f.assert_none();
}

#[test]
fn sqrt_and_divide_loops() {
    let (n, reps) = (1001, 3);
    let mut f = Failures::default();
    for base in FLAG_SETS {
        for (precision, extra, _) in PRECISIONS_BUILT {
            let flags = flags_with(&flags_with(base, &["-fno-math-errno"]), extra);
            let exe = build("sqrtdiv.c", &flags);
            let r = count_ok(&exe, &args(&[n, reps]), &[]);
            let e = Expect::new()
                .flop(precision, 2 * n * reps)
                .op("div", n * reps)
                .op("sqrt", n * reps);
            f.expect(&name("sqrtdiv.c", &flags, &[n, reps]), &r, &e);
        }
    }
    f.assert_none();
}

#[test]
fn fma_chains_count_two_per_lane() {
    let n = 1000;
    let e = Expect::fma_chains(n);
    let exe = build("fma.c", AVX2_FMA);
    let mut f = Failures::default();
    f.expect(
        &name("fma.c", AVX2_FMA, &[n]),
        &count_ok(&exe, &args(&[n]), &[]),
        &e,
    );
    f.assert_none();
}

#[test]
fn min_max_chains() {
    let n = 1000;
    let k = |i: u64| n + i;
    let mut f = Failures::default();
    for flags in FLAG_SETS {
        // Each iteration is one MAX and one MIN.
        let mut e = Expect::new()
            .insn("fp64", 128, 2, "minmax", 2 * k(0), 2)
            .insn("fp32", 128, 4, "minmax", 2 * k(1), 4)
            .insn("fp64", 64, 1, "minmax", 2 * k(2), 1)
            .insn("fp32", 32, 1, "minmax", 2 * k(3), 1);
        if flags != SSE2 {
            e = e.insn("fp64", 256, 4, "minmax", 2 * k(4), 4).insn(
                "fp32",
                256,
                8,
                "minmax",
                2 * k(5),
                8,
            );
        }
        let total = e.total();
        let e = e.op("minmax", total);
        let exe = build("minmax.c", flags);
        f.expect(
            &name("minmax.c", flags, &[n]),
            &count_ok(&exe, &args(&[n]), &[]),
            &e,
        );
    }
    f.assert_none();
}

#[test]
fn horizontal_add_sub_and_addsub() {
    let n = 1000;
    let k = |i: u64| n + i;
    let mut f = Failures::default();
    // HADDPD and friends are SSE3: no -msse2 build.
    for flags in [SSE3, AVX, AVX2_FMA] {
        let mut e = Expect::new()
            .insn("fp64", 128, 2, "hadd", k(0), 2)
            .insn("fp32", 128, 4, "hadd", k(1), 4)
            .insn("fp64", 128, 2, "hsub", k(2), 2)
            .insn("fp32", 128, 4, "hsub", k(3), 4)
            .insn("fp64", 128, 2, "addsub", k(4), 2)
            .insn("fp32", 128, 4, "addsub", k(5), 4)
            .op("add", 2 * k(0) + 4 * k(1) + k(4) + 2 * k(5))
            .op("sub", 2 * k(2) + 4 * k(3) + k(4) + 2 * k(5));
        if flags != SSE3 {
            e = e
                .insn("fp64", 256, 4, "hadd", k(6), 4)
                .insn("fp32", 256, 8, "hadd", k(7), 8)
                .insn("fp32", 256, 8, "hsub", k(8), 8)
                .insn("fp64", 256, 4, "addsub", k(9), 4)
                .op("add", 4 * k(6) + 8 * k(7) + 2 * k(9))
                .op("sub", 8 * k(8) + 2 * k(9));
        }
        let exe = build("hadd.c", flags);
        f.expect(
            &name("hadd.c", flags, &[n]),
            &count_ok(&exe, &args(&[n]), &[]),
            &e,
        );
    }
    f.assert_none();
}

#[test]
fn dot_products_follow_imm8() {
    let n = 1000;
    let k = |i: u64| n + i;
    let mut f = Failures::default();
    // DPPS/DPPD are SSE4.1: no -msse2 build.
    for flags in [SSE41, AVX, AVX2_FMA] {
        // (chain, precision, width, lanes, multiplies, adds) per execution.
        let mut chains = vec![
            (0, "fp32", 128, 4, 4, 3), // dpps 0xFF
            (1, "fp32", 128, 4, 3, 2), // dpps 0x71
            (2, "fp32", 128, 4, 2, 1), // dpps 0x31
            (3, "fp64", 128, 2, 2, 1), // dppd 0x31
            (4, "fp64", 128, 2, 1, 0), // dppd 0x11
        ];
        if flags != SSE41 {
            chains.push((5, "fp32", 256, 8, 8, 6)); // vdpps ymm 0xFF: two blocks of 4 + 3
            chains.push((6, "fp32", 256, 8, 4, 2)); // vdpps ymm 0x55: two blocks of 2 + 1
        }
        let mut e = Expect::new();
        for (i, precision, width, lanes, mul, add) in chains {
            e = e
                .insn(precision, width, lanes, "dot", k(i), mul + add)
                .op("mul", mul * k(i))
                .op("add", add * k(i));
        }
        let exe = build("dp.c", flags);
        f.expect(
            &name("dp.c", flags, &[n]),
            &count_ok(&exe, &args(&[n]), &[]),
            &e,
        );
    }
    f.assert_none();
}

#[test]
fn x87_long_double_loop() {
    let n = 1000;
    let mut f = Failures::default();
    for flags in [
        &["-O2", "-fno-math-errno"][..],
        &["-O2", "-mavx2", "-mfma", "-fno-math-errno"],
    ] {
        let mut e = Expect::new();
        for op in ["add", "mul", "div", "sqrt"] {
            e = e.insn("x87", 80, 1, op, n, 1).op(op, n);
        }
        let exe = build("x87.c", flags);
        f.expect(
            &name("x87.c", flags, &[n]),
            &count_ok(&exe, &args(&[n]), &[]),
            &e,
        );
    }
    f.assert_none();
}

#[test]
fn fortran_daxpy_flop_and_bytes() {
    let (n1, n2, reps) = (1001, 3003, 5);
    let mut f = Failures::default();
    for flags in FLAG_SETS {
        let exe = build("daxpy.f90", flags);
        let r1 = count_ok(&exe, &args(&[n1, reps]), &[]);
        let r2 = count_ok(&exe, &args(&[n2, reps]), &[]);
        for (n, r) in [(n1, &r1), (n2, &r2)] {
            let e = mul_add(Expect::new().flop("fp64", 2 * n * reps), flags, n * reps);
            f.expect(&name("daxpy.f90", flags, &[n, reps]), r, &e);
        }
        let what = name("daxpy.f90", flags, &[n1, n2, reps]);
        let dn = (n2 - n1) as i64 * reps as i64;
        f.bytes_delta(&what, (&r1, &r2), 16 * dn, 8 * dn);
    }
    f.assert_none();
}
