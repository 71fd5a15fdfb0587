//! Where the work is: `functions[]`, `loops[]` and `lines[]` of real
//! programs against their closed forms, under both counting engines. (That
//! functions and lines sum to the totals is checked on every report the
//! tests read: `support::sums`.)

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const ENGINES: [&str; 2] = ["emulate", "native"];

pub fn source(name: &str) -> PathBuf {
    kernel_dir().join("attribution").join(name)
}

/// The line of `file` holding `tag` (a `/* LOOP ... */` or `/* LINE ... */`).
fn line_of(file: &str, tag: &str) -> u64 {
    let text = std::fs::read_to_string(source(file)).unwrap();
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&format!("/* {tag} */")))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "tag {tag} in {file}");
    hits[0] as u64
}

/// Builds where.c against libwhere.so (both with -g) with `flags`, in a
/// directory of its own per flag set, once per test process (three tests
/// use the -O2 build: rebuilt by one while another symbolized it, the
/// library's functions came out unnamed).
fn build_where(flags: &[&str]) -> PathBuf {
    built_once(format!("where {}", flags.join(" ")), || {
        build_where_now(flags)
    })
}

fn build_where_now(flags: &[&str]) -> PathBuf {
    let tag: String = flags
        .join("_")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("where{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut lib: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    lib.extend(["-g", "-shared", "-fPIC", "-o"].map(String::from));
    lib.push(dir.join("libwhere.so").display().to_string());
    lib.push(source("libwhere.c").display().to_string());
    gcc(&lib);
    let exe = dir.join("where");
    let mut main: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    main.extend(["-g", "-o"].map(String::from));
    main.push(exe.display().to_string());
    main.push(source("where.c").display().to_string());
    main.push(format!("-L{}", dir.display()));
    main.push("-lwhere".into());
    main.push(format!("-Wl,-rpath,{}", dir.display()));
    gcc(&main);
    exe
}

fn flop(v: Option<&Value>) -> u64 {
    v.and_then(|f| f["flop"]["total"].as_u64()).unwrap_or(0)
}

fn loop_at<'a>(r: &'a Report, file: &str, line: u64) -> Option<(usize, &'a Value)> {
    r.0["loops"]
        .as_array()?
        .iter()
        .enumerate()
        .find(|(_, l)| l["line"] == line && l["file"].as_str().is_some_and(|f| f.ends_with(file)))
}

/// where.c: every function's FLOP (exclusive, and inclusive of callees and
/// inlined code), every loop's iterations, entries, FLOP and nesting, and
/// the inlined function's line, exactly, under both engines, for SSE2 and
/// AVX2+FMA builds.
#[test]
fn functions_loops_and_lines_of_known_counts_are_exact() {
    let (n, reps) = (1000u64, 3u64);
    let mut bad = Vec::new();
    for flags in [&["-O2"][..], &["-O2", "-mavx2", "-mfma"]] {
        let exe = build_where(flags);
        let fma = has_fma(flags);
        for engine in ENGINES {
            let r = count_ok_with(engine, &exe, &[n.to_string(), reps.to_string()], &[]);
            let what = format!("where {flags:?} under {engine}");
            let check = |bad: &mut Vec<String>, item: &str, got: u64, want: u64| {
                if got != want {
                    bad.push(format!("{what}: {item}: got {got}, expected {want}"));
                }
            };
            check(
                &mut bad,
                "triad FLOP",
                flop(r.function("triad")),
                2 * n * reps,
            );
            check(
                &mut bad,
                "nested FLOP",
                flop(r.function("nested")),
                16 * n * reps,
            );
            check(&mut bad, "rec FLOP", flop(r.function("rec")), 16 * reps);
            check(&mut bad, "scale FLOP", flop(r.function("scale")), n * reps);
            let (norm2, sq) = (flop(r.function("norm2")), flop(r.function("sq")));
            if fma {
                // GCC contracts the inlined multiply and the add into one FMA.
                check(&mut bad, "norm2 + sq FLOP", norm2 + sq, 2 * n * reps);
            } else {
                check(&mut bad, "norm2 FLOP (the adds)", norm2, n * reps);
                check(&mut bad, "sq FLOP (inlined multiplies)", sq, n * reps);
                let inlined = r.function("sq").map(|f| f["inlined_into"].clone());
                if inlined != Some(serde_json::json!(["norm2"])) {
                    bad.push(format!("{what}: sq inlined_into {inlined:?}"));
                }
                let sq_line = line_of("where.c", "LINE sq");
                let line_flop: u64 = r.0["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|l| l["line"] == sq_line)
                    .map(|l| l["flop"]["total"].as_u64().unwrap_or(0))
                    .sum();
                check(&mut bad, "the sq line's FLOP", line_flop, n * reps);
            }
            // Inclusive: main's tree holds every FLOP of the program (scale
            // through its PLT stub, sq inlined into norm2).
            let inclusive = |name: &str| {
                r.function(name)
                    .and_then(|f| f["inclusive"]["flop"]["total"].as_u64())
                    .unwrap_or(0)
            };
            check(
                &mut bad,
                "main inclusive FLOP",
                inclusive("main"),
                r.flop("total"),
            );
            check(
                &mut bad,
                "norm2 inclusive FLOP",
                inclusive("norm2"),
                2 * n * reps,
            );
            check(&mut bad, "rec inclusive FLOP", inclusive("rec"), 16 * reps);
            if let Some(m) = r.function("scale").and_then(|f| f["module"].as_str()) {
                if !m.ends_with("libwhere.so") {
                    bad.push(format!("{what}: scale's module is {m}"));
                }
            }
            // (file, tag, iterations, entries, FLOP)
            let loops = [
                ("where.c", "LOOP triad", n * reps, reps, 2 * n * reps),
                (
                    "where.c",
                    "LOOP nested outer",
                    8 * reps,
                    reps,
                    16 * n * reps,
                ),
                (
                    "where.c",
                    "LOOP nested inner",
                    8 * n * reps,
                    8 * reps,
                    16 * n * reps,
                ),
                ("where.c", "LOOP norm2", n * reps, reps, 2 * n * reps),
                ("libwhere.c", "LOOP scale", n * reps, reps, n * reps),
            ];
            for (file, tag, iterations, entries, flop) in loops {
                expect_loop(&mut bad, &what, &r, file, tag, [iterations, entries, flop]);
            }
            let outer = loop_at(&r, "where.c", line_of("where.c", "LOOP nested outer"));
            let inner = loop_at(&r, "where.c", line_of("where.c", "LOOP nested inner"));
            if let (Some((o, ol)), Some((_, i))) = (outer, inner) {
                if i["parent"] != o {
                    bad.push(format!(
                        "{what}: the inner loop's parent is {}, expected {o}",
                        i["parent"]
                    ));
                }
                // Every FLOP of the nest is the inner loop's own: none is
                // the outer loop's alone.
                let own = |l: &Value| l["self_counts"]["flop"]["total"].as_u64();
                if (own(ol), own(i)) != (Some(0), Some(16 * n * reps)) {
                    bad.push(format!(
                        "{what}: the nest's own FLOP (outer, inner): {:?}, expected (0, {})",
                        (own(ol), own(i)),
                        16 * n * reps
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Checks the loop tagged `tag` in `file`: its [iterations, entries, FLOP].
fn expect_loop(
    bad: &mut Vec<String>,
    what: &str,
    r: &Report,
    file: &str,
    tag: &str,
    want: [u64; 3],
) {
    let line = line_of(file, tag);
    let Some((_, l)) = loop_at(r, file, line) else {
        bad.push(format!("{what}: no loop at {file}:{line} ({tag})"));
        return;
    };
    let got =
        [&l["iterations"], &l["entries"], &l["flop"]["total"]].map(|v| v.as_u64().unwrap_or(0));
    for ((item, got), want) in ["iterations", "entries", "FLOP"].iter().zip(got).zip(want) {
        if got != want {
            bad.push(format!("{what}: {tag} {item}: got {got}, expected {want}"));
        }
    }
}

/// trips.c: a one-block loop left after every trip count from 1 to 17 (the
/// native engine counts such loops in rounds of copies and adds the
/// unfinished round on the way out, so every way out is taken), exact in
/// the totals and in the loop's row under both engines, for SSE2 and
/// AVX2+FMA builds.
#[test]
fn a_loop_left_after_any_number_of_iterations_counts_exactly() {
    let (top, reps) = (17u64, 3u64);
    let mut bad = Vec::new();
    for (flags, out) in [
        (&["-O2", "-g"][..], "trips_sse2"),
        (&["-O2", "-g", "-mavx2", "-mfma"], "trips_fma"),
    ] {
        let exe = compile("gcc", "trips.c", flags, out);
        for engine in ENGINES {
            let r = count_ok_with(engine, &exe, &[top.to_string(), reps.to_string()], &[]);
            let what = format!("trips {flags:?} under {engine}");
            let flop = reps * top * (top + 1);
            if r.flop("total") != flop || r.flop("fp64") != flop {
                bad.push(format!(
                    "{what}: FLOP total {} fp64 {}, expected {flop}",
                    r.flop("total"),
                    r.flop("fp64")
                ));
            }
            expect_loop(
                &mut bad,
                &what,
                &r,
                "trips.c",
                "LOOP trips",
                [flop / 2, reps * top, flop],
            );
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// entered.c: a loop gcc -O0 enters by a jump to its test (the native
/// engine translates on through such jumps), and one whose early exit is a
/// forward branch falling through back to the test (the native engine
/// counts the fall-through side of backward branches only). Entries are the
/// calls under both engines, and the two engines' rows for them
/// (iterations, FLOP, instructions) the same.
#[test]
fn loops_entered_by_a_jump_or_left_early_count_their_entries_under_both_engines() {
    let (reps, stop) = (5u64, 37u64);
    let mut bad = Vec::new();
    for (flags, out) in [
        (&["-O0", "-g"][..], "entered_o0"),
        (&["-O2", "-g"], "entered_o2"),
    ] {
        let exe = compile("gcc", "entered.c", flags, out);
        let mut rows = Vec::new();
        for engine in ENGINES {
            let r = count_ok_with(engine, &exe, &[reps.to_string(), stop.to_string()], &[]);
            let what = format!("entered {flags:?} under {engine}");
            let mut both = Vec::new();
            for tag in ["LOOP scan", "LOOP search"] {
                let line = line_of("entered.c", tag);
                let Some((_, l)) = loop_at(&r, "entered.c", line) else {
                    bad.push(format!("{what}: no loop at entered.c:{line} ({tag})"));
                    continue;
                };
                let get = |k: &str| l[k].as_u64().unwrap_or(0);
                if get("entries") != reps {
                    bad.push(format!(
                        "{what}: {tag}: entries {}, expected {reps}",
                        get("entries")
                    ));
                }
                let flop = l["flop"]["total"].as_u64().unwrap_or(0);
                both.push((tag, get("iterations"), flop, get("instructions")));
            }
            rows.push(both);
        }
        if rows[0] != rows[1] {
            bad.push(format!(
                "entered {flags:?}: (loop, iterations, FLOP, instructions) {:?} under {}, {:?} under {}",
                rows[0], ENGINES[0], rows[1], ENGINES[1]
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A process image attributed in parts on several threads (a large one is:
/// crates/attribution/src/split.rs) has the rows of one pass, with every
/// function a part of its own (FLOPSCOPE_ATTRIBUTION_PARTS far above their
/// number), under both engines: where.c's functions, loops and lines, and
/// fall.c's, whose loop is entered both by a call and by falling in from
/// the function before it (its count exact: 2 x REPS entries, 2 x N x REPS
/// iterations). The C library's rows are left out: its string functions'
/// counts follow the data's alignment, which moves between runs.
#[test]
fn rows_attributed_in_parts_equal_those_of_one_pass() {
    let (n, reps) = (1000u64, 3u64);
    let args = [n.to_string(), reps.to_string()];
    let programs = [
        (build_where(&["-O2"]), &["/where", "/libwhere.so"][..]),
        (compile("gcc", "fall.c", &["-O2", "-g"], "fall"), &["/fall"]),
    ];
    for (exe, modules) in programs {
        for engine in ENGINES {
            let count = |parts: &str| {
                let env = [("FLOPSCOPE_ATTRIBUTION_PARTS", parts)];
                count_ok_with(engine, &exe, &args, &env)
            };
            let (one, split) = (count("1"), count("100000"));
            let (one, rows) = (own_rows(&one, modules), own_rows(&split, modules));
            let what = format!("{} under {engine}", exe.display());
            for kind in ["functions", "loops", "lines"] {
                assert!(
                    one[kind].as_array().is_some_and(|a| !a.is_empty()),
                    "{what}: no rows of its own in {kind}"
                );
            }
            assert_eq!(one, rows, "{what}: rows in one part, then in parts");
            if modules == ["/fall"] {
                let fall_loop = split.0["loops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|l| l["function"] == "fall_loop")
                    .unwrap_or_else(|| panic!("{what}: no loop in fall_loop"));
                let got = ["entries", "iterations"].map(|k| fall_loop[k].as_u64());
                let flop = fall_loop["flop"]["total"].as_u64();
                assert_eq!(
                    (got, flop),
                    ([Some(2 * reps), Some(2 * n * reps)], Some(2 * n * reps)),
                    "{what}: fall_loop's loop (entries, iterations), FLOP"
                );
            }
        }
    }
}

/// A program whose DWARF is compressed (gcc -gz=zlib): its sections are
/// inflated once and kept in the cache directory (`inflated/`), a second
/// count takes the kept copies without writing them again, and both give
/// the same rows, with source lines.
#[test]
fn compressed_debug_sections_are_kept_and_give_the_same_rows() {
    let exe = compile("gcc", "fall.c", &["-O2", "-g", "-gz=zlib"], "fall_gz");
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap().to_string();
    let env = [("FLOPSCOPE_CACHE_DIR", dir.as_str())];
    let kept = || -> Vec<(String, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(cache.path().join("inflated"))
            .map(|d| {
                d.map(|e| {
                    let e = e.unwrap();
                    let when = e.metadata().unwrap().modified().unwrap();
                    (e.file_name().to_string_lossy().into_owned(), when)
                })
                .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let first = count_ok_with("native", &exe, &["1000", "3"], &env);
    let copies = kept();
    assert!(
        copies.iter().any(|(n, _)| n.contains(".debug_info-")),
        "the program's .debug_info kept: {copies:?}"
    );
    let second = count_ok_with("native", &exe, &["1000", "3"], &env);
    assert_eq!(kept(), copies, "the copies were taken, not written again");
    let (a, b) = (
        own_rows(&first, &["/fall_gz"]),
        own_rows(&second, &["/fall_gz"]),
    );
    let with_line = a["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["line"].is_u64())
        .count();
    assert!(
        with_line > 0,
        "no source line: the comparison tells nothing"
    );
    assert_eq!(
        a, b,
        "rows from inflated sections, then from the kept copies"
    );
}

/// The rows of `modules` (file name endings), without what differs between
/// runs (the sampled time, load addresses), a loop's parent as its line.
fn own_rows(r: &Report, modules: &[&str]) -> Value {
    let own = |row: &Value| {
        row["module"]
            .as_str()
            .is_some_and(|m| modules.iter().any(|end| m.ends_with(end)))
    };
    let loops = r.0["loops"].as_array().unwrap();
    let mut out = serde_json::Map::new();
    for kind in ["functions", "loops", "lines"] {
        let rows: Vec<Value> = r.0[kind]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| own(row))
            .map(|row| {
                let mut row = row.clone();
                let o = row.as_object_mut().unwrap();
                for k in ["time_s", "samples", "gflops", "address", "header"] {
                    o.remove(k);
                }
                if let Some(inclusive) = o.get_mut("inclusive") {
                    // Callees in the C library: only their FLOP are fixed.
                    *inclusive = inclusive["flop"].clone();
                }
                if let Some(p) = o.get("parent").and_then(Value::as_u64) {
                    o.insert("parent".into(), loops[p as usize]["line"].clone());
                }
                row
            })
            .collect();
        out.insert(kind.into(), Value::Array(rows));
    }
    Value::Object(out)
}

/// Compiles `source` (tests/kernels/attribution) with `compiler` and
/// `flags` into the test's directory as `out`.
fn compile(compiler: &str, source: &str, flags: &[&str], out: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attribution");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(out);
    let mut cmd = Command::new(compiler);
    if compiler == "gfortran" {
        cmd.arg("-J").arg(&dir); // its .mod files, out of the source tree
    }
    let o = cmd
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(super::attribution::source(source))
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        o.status.success(),
        "{compiler} {source}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// FLOP of the functions whose name satisfies `pick`.
fn flop_where(r: &Report, pick: impl Fn(&str) -> bool) -> u64 {
    r.0["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"].as_str().is_some_and(&pick))
        .map(|f| f["flop"]["total"].as_u64().unwrap())
        .sum()
}

/// C++ (template instantiations, virtual calls), gfortran module
/// procedures, Rust and an OpenMP outlined region: each function's FLOP
/// under its demangled name, under both engines.
#[test]
fn languages_name_their_functions_demangled_with_exact_flop() {
    let (n, reps) = (1000u64, 2u64);
    let args = [n.to_string(), reps.to_string()];
    let cpp = compile("g++", "shapes.cpp", &["-O2", "-g"], "shapes");
    let f90 = compile("gfortran", "modproc.f90", &["-O2", "-g"], "modproc");
    let rs = compile("rustc", "rusty.rs", &["-C", "opt-level=2", "-g"], "rusty");
    let omp = build("omp_triad.c", &["-O2", "-g", "-fopenmp"]);
    let mut bad = Vec::new();
    for engine in ENGINES {
        let mut expect = |what: &str, got: u64, want: u64| {
            if got != want {
                bad.push(format!("{what} under {engine}: got {got}, expected {want}"));
            }
        };
        let r = count_ok_with(engine, &cpp, &args, &[]);
        let exact = |name: &'static str| move |f: &str| f == name;
        expect(
            "Axpy<double>::run",
            flop_where(
                &r,
                exact("Axpy<double>::run(double const*, double*, double, int)"),
            ),
            2 * n * reps,
        );
        expect(
            "Axpy<float>::run",
            flop_where(
                &r,
                exact("Axpy<float>::run(float const*, float*, float, int)"),
            ),
            2 * n * reps,
        );
        expect(
            "Square::area",
            flop_where(&r, exact("Square::area(double) const")),
            n * reps,
        );
        expect(
            "Circle::area",
            flop_where(&r, exact("Circle::area(double) const")),
            2 * n * reps,
        );
        let r = count_ok_with(engine, &f90, &args, &[]);
        expect(
            "kernels::daxpy",
            flop_where(&r, exact("kernels::daxpy")),
            2 * n * reps,
        );
        expect(
            "kernels::dscal",
            flop_where(&r, exact("kernels::dscal")),
            n * reps,
        );
        let r = count_ok_with(engine, &rs, &args, &[]);
        expect(
            "rusty::dot",
            flop_where(&r, exact("rusty::dot")),
            2 * n * reps,
        );
        expect(
            "rusty::Scaler::apply",
            flop_where(&r, exact("rusty::Scaler::apply")),
            n * reps,
        );
        // omp_triad.c: 2 N REPS FLOP, all in the region gcc outlines from triad().
        let r = count_ok_with(engine, &omp, &["1000", "4"], &[("OMP_NUM_THREADS", "2")]);
        expect(
            "triad._omp_fn.0",
            flop_where(&r, exact("triad._omp_fn.0")),
            8000,
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A stripped where.c: its functions are named `where+0x...` after the
/// .eh_frame entry that covers them, with the same FLOP as with symbols.
#[test]
fn stripped_code_is_named_module_plus_offset() {
    let (n, reps) = (1000u64, 3u64);
    let exe = build_where(&["-O2"]);
    let stripped = exe.with_file_name("where-stripped");
    std::fs::copy(&exe, &stripped).unwrap();
    let s = Command::new("strip").arg(&stripped).status().unwrap();
    assert!(s.success(), "strip");
    for engine in ENGINES {
        let r = count_ok_with(engine, &stripped, &[n.to_string(), reps.to_string()], &[]);
        let mut ours: Vec<(String, u64)> = r.0["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["name"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("where-stripped+0x"))
            })
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["flop"]["total"].as_u64().unwrap(),
                )
            })
            .filter(|(_, flop)| *flop > 0)
            .collect();
        ours.sort_by_key(|(_, f)| std::cmp::Reverse(*f));
        let flops: Vec<u64> = ours.iter().map(|(_, f)| *f).collect();
        // nested, then triad and norm2 (sq inlined: one function without
        // debug info), rec, main's adds.
        assert_eq!(
            flops[..4],
            [16 * n * reps, 2 * n * reps, 2 * n * reps, 16 * reps],
            "{engine}: {ours:?}"
        );
        assert!(
            r.function("triad").is_none(),
            "{engine}: a stripped binary has no `triad`"
        );
    }
}

/// Debian's OpenBLAS through cblas_dgemm (one thread): the FLOP are in
/// OpenBLAS's dgemm kernel functions, 2 n^3 plus the n^2 to 2 n^2 of
/// applying alpha and adding into C (tests/kernels/attribution/gemm.c).
/// Which kernel runs depends on the processor: `dgemm_kernel_*` for the
/// blocked path, `dgemm_small_kernel_*` for the small-matrix path OpenBLAS
/// takes on Intel processors with AVX-512 (SKYLAKEX).
#[test]
fn openblas_dgemm_flop_are_in_its_kernels() {
    let n = 64u64;
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attribution/gemm");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    // -lopenblas after the source.
    let o = Command::new("gcc")
        .args(["-O2", "-g", "-o"])
        .arg(&exe)
        .arg(source("gemm.c"))
        .arg("-lopenblas")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "gcc gemm.c -lopenblas: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for engine in ENGINES {
        let r = count_ok_with(
            engine,
            &exe,
            &[n.to_string()],
            &[("OPENBLAS_NUM_THREADS", "1")],
        );
        let in_kernels: u64 = r.0["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["module"].as_str().is_some_and(|m| m.contains("openblas"))
                    && f["name"].as_str().is_some_and(|s| {
                        s.starts_with("dgemm_kernel") || s.starts_with("dgemm_small_kernel")
                    })
            })
            .map(|f| f["flop"]["total"].as_u64().unwrap())
            .sum();
        let product = 2 * n * n * n;
        assert!(
            (product + n * n..=product + 2 * n * n).contains(&in_kernels),
            "{engine}: {in_kernels} FLOP in dgemm_kernel* and dgemm_small_kernel*, expected 2n^3 + n^2 to 2n^3 + 2n^2 ({}..={})",
            product + n * n,
            product + 2 * n * n
        );
        let total = r.flop("total");
        assert!(
            total - in_kernels <= 8,
            "{engine}: {total} in all, {in_kernels} in the kernels"
        );
    }
}

/// two_regions.c with --per-region: each region has its own functions, and
/// they sum to the region's counts (axpy's 2 n REPS FLOP in region "axpy",
/// scale's n REPS in region "scale").
#[test]
fn each_region_has_its_own_functions() {
    let (n, reps) = (1000u64, 10u64);
    let exe = crate::reports::two_regions(SSE2);
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let out = Command::new(FLOPSCOPE)
            .args([
                "count",
                "--engine",
                engine,
                "--no-native",
                "--per-region",
                "-o",
            ])
            .arg(&json)
            .arg("--")
            .arg(&exe)
            .args([n.to_string(), reps.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for (region, function, flop) in
            [("axpy", "axpy", 2 * n * reps), ("scale", "scale", n * reps)]
        {
            let g = r["regions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["name"] == region)
                .unwrap_or_else(|| panic!("{engine}: no region {region}"));
            let fs = g["functions"].as_array().expect("the region's functions");
            // gcc names the specialised copy `axpy.constprop.0`.
            let of = |name: &str| -> u64 {
                fs.iter()
                    .filter(|f| {
                        f["name"]
                            .as_str()
                            .is_some_and(|s| s == name || s.starts_with(&format!("{name}.")))
                    })
                    .map(|f| f["flop"]["total"].as_u64().unwrap())
                    .sum()
            };
            assert_eq!(
                of(function),
                flop,
                "{engine}: {function} in region {region}"
            );
            let sum: u64 = fs
                .iter()
                .map(|f| f["flop"]["total"].as_u64().unwrap())
                .sum();
            assert_eq!(
                sum,
                g["flop"]["total"].as_u64().unwrap(),
                "{engine}: region {region}'s functions sum"
            );
            let insns: u64 = fs.iter().map(|f| f["instructions"].as_u64().unwrap()).sum();
            assert_eq!(
                insns,
                g["instructions"].as_u64().unwrap(),
                "{engine}: region {region}'s instructions"
            );
        }
    }
}

/// busy.c: heavy() does three times light()'s work. The two functions' time
/// shares are 0.75 and 0.25 within four standard errors of the sampling
/// error the report states (its signals), whichever run is sampled: the
/// counted run under the native engine (by its runtime), or a timed run
/// after an emulated count (by the preload sampler).
#[test]
fn time_shares_follow_the_work_within_the_stated_sampling_error() {
    for how in [&[][..], &["--engine", "emulate", "--runs", "1"][..]] {
        time_shares_when_counted_with(how);
    }
}

fn time_shares_when_counted_with(how: &[&str]) {
    let exe = compile("gcc", "busy.c", &["-O2", "-g"], "busy");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(FLOPSCOPE)
        .arg("count")
        .args(how)
        .arg("-o")
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .arg("1500")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = Report(serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap());
    let sampling = &r.0["sampling"];
    let (total, signals) = (
        sampling["samples"].as_u64().expect("samples"),
        sampling["signals"].as_f64().expect("signals"),
    );
    let samples = |name: &str| {
        r.function(name)
            .and_then(|f| f["samples"].as_u64())
            .unwrap_or(0)
    };
    let (h, l) = (samples("heavy"), samples("light"));
    let share = h as f64 / (h + l) as f64;
    let n = signals * (h + l) as f64 / total as f64;
    let se = (0.75 * 0.25 / n).sqrt();
    assert!(
        n >= 40.0,
        "{how:?}: too few samples to judge: {n:.1} effective ({h} + {l} of {total})"
    );
    assert!(
        (share - 0.75).abs() <= 4.0 * se,
        "{how:?}: heavy's share {share:.3} (samples {h}, light {l}), expected 0.75 +- {:.3} (4 standard errors of {n:.1} effective samples)",
        4.0 * se
    );
    // Each function's time is its loop's, but for a few instructions
    // around it: the loop rows place the same samples.
    for name in ["heavy", "light"] {
        let in_loop: u64 = r.0["loops"]
            .as_array()
            .expect("loops")
            .iter()
            .filter(|l| l["function"] == name)
            .filter_map(|l| l["samples"].as_u64())
            .sum();
        let all = samples(name);
        assert!(
            in_loop <= all && in_loop as f64 >= 0.95 * all as f64,
            "{how:?}: {name}'s loop has {in_loop} of its {all} samples"
        );
    }
    // Times and GFLOP/s follow from the shares: each did ROUNDS FLOP.
    let time = |name: &str| r.function(name).and_then(|f| f["time_s"].as_f64()).unwrap();
    assert!(time("heavy") > time("light"));
    let g = r
        .function("heavy")
        .and_then(|f| f["gflops"].as_f64())
        .unwrap();
    assert!(
        (g - 1500.0 / time("heavy") / 1e9).abs() < 1e-12,
        "GFLOP/s = FLOP / time"
    );
}

/// A program of 70 C files with `-g` (a DWARF context per compile unit, made
/// as its addresses are first looked up, from 64 units on): each file's
/// function and loop are named with their own file and line, with exact
/// FLOP, under both engines.
#[test]
fn a_program_of_many_compile_units_has_every_unit_s_lines() {
    const UNITS: u64 = 70;
    let exe = built_once("units".to_string(), || {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("units");
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = Vec::new();
        let mut main = String::from("#include <stdio.h>\n");
        for i in 0..UNITS {
            // Its first code on line 3, its loop on line 4, the FLOP on 5.
            let text = format!(
                "/* unit {i} */\ndouble f{i}(const double *a, int n) {{\n  double s = 0;\n  \
                 for (int k = 0; k < n; k++)\n    s += a[k] * {i}.5;\n  return s;\n}}\n"
            );
            let name = dir.join(format!("unit{i}.c"));
            std::fs::write(&name, text).unwrap();
            files.push(name.display().to_string());
            main.push_str(&format!("double f{i}(const double *, int);\n"));
        }
        main.push_str("int main(void) {\n  static double a[1000];\n  double s = 0;\n");
        for i in 0..UNITS {
            main.push_str(&format!("  s += f{i}(a, {});\n", 10 * (i + 1)));
        }
        main.push_str("  printf(\"%g\\n\", s);\n  return 0;\n}\n");
        let name = dir.join("main.c");
        std::fs::write(&name, main).unwrap();
        files.push(name.display().to_string());
        let exe = dir.join("units");
        let tmp = dir.join(format!("units.{}.tmp", std::process::id()));
        // -O1: one scalar multiply and add an iteration, no vector code.
        let mut args: Vec<String> = ["-O1", "-g", "-o"].map(String::from).into();
        args.push(tmp.display().to_string());
        args.extend(files);
        gcc(&args);
        std::fs::rename(&tmp, &exe).unwrap();
        exe
    });
    let no_args: [&str; 0] = [];
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &no_args, &[]);
        for i in 0..UNITS {
            let (name, file) = (format!("f{i}"), format!("/unit{i}.c"));
            let what = format!("{name} under {engine}");
            let f = r
                .function(&name)
                .unwrap_or_else(|| panic!("{what}: no row"));
            assert!(
                f["file"].as_str().is_some_and(|p| p.ends_with(&file)),
                "{what}: file {}",
                f["file"]
            );
            assert_eq!(f["line"], 3, "{what}: its first line");
            let n = 10 * (i + 1);
            assert_eq!(flop(Some(f)), 2 * n, "{what}: FLOP");
            let (_, l) =
                loop_at(&r, &file, 4).unwrap_or_else(|| panic!("{what}: no loop on line 4"));
            assert_eq!(l["iterations"].as_u64(), Some(n), "{what}: iterations");
            let line5 =
                r.0["lines"].as_array().unwrap().iter().find(|l| {
                    l["line"] == 5 && l["file"].as_str().is_some_and(|p| p.ends_with(&file))
                });
            assert_eq!(flop(line5), 2 * n, "{what}: FLOP of line 5");
        }
    }
}
