//! LIKWID's accuracy-test idea: run each kernel under the emulate engine and
//! compare the FLOP and bytes it counts with the kernel's declaration,
//! exactly. AVX-512 kernels are left out: QEMU 7.2 cannot execute EVEX.

use flopscope_bench::spec::{self, KernelSpec, Kind};
use flopscope_machine::Isa;
use std::path::PathBuf;
use std::process::Command;

/// The flopscope CLI: `$FLOPSCOPE_BIN`, else the workspace's debug build.
fn flopscope() -> PathBuf {
    let p = match std::env::var_os("FLOPSCOPE_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/debug/flopscope"),
    };
    assert!(
        p.is_file(),
        "the accuracy test needs the flopscope CLI at {}: build it with `cargo build -p flopscope` \
         (or point FLOPSCOPE_BIN at one)",
        p.display()
    );
    p
}

/// Features the emulated CPU (QEMU 7.2, `-cpu max`) has.
const EMULATED: &[&str] = &["sse2", "avx", "fma", "avx2"];

struct Counted {
    flop: u64,
    bytes: u64,
}

fn count(flopscope: &PathBuf, k: &KernelSpec, n: u64) -> Counted {
    // Under cargo's per-target temporary directory: nothing is left in /tmp.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-emulate");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{}-{n}.json", k.name));
    let run = Command::new(flopscope)
        .args([
            "count",
            "--engine",
            "emulate",
            "--no-native",
            "--format",
            "json",
            "-o",
        ])
        .arg(&out)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_flopscope-bench-kernel"))
        .args([k.name.as_str(), &n.to_string()])
        .output()
        .expect("running flopscope count");
    assert!(
        run.status.success(),
        "flopscope count of {} {n} failed ({}): {}",
        k.name,
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(r["exit_status"], 0, "{} {n}: {}", k.name, r["warnings"]);
    assert_eq!(r["complete"], true, "{} {n}", k.name);
    let u = |v: &serde_json::Value| {
        v.as_u64()
            .unwrap_or_else(|| panic!("{} {n}: no count in {v}", k.name))
    };
    Counted {
        flop: u(&r["flop"]["total"]),
        bytes: u(&r["bytes"]["read"]) + u(&r["bytes"]["written"]),
    }
}

#[test]
fn every_emulatable_kernel_does_exactly_what_it_declares() {
    let flopscope = flopscope();
    let kernels: Vec<&KernelSpec> = spec::all()
        .iter()
        .filter(|k| {
            k.isa != Isa::Avx512 && k.requires.iter().all(|r| EMULATED.contains(&r.as_str()))
        })
        .collect();
    assert!(
        kernels.len() >= 30,
        "only {} kernels to check",
        kernels.len()
    );
    let mut failures = Vec::new();
    for k in kernels {
        // Two counts with the same number of digits: start-up (argv included) cancels.
        let (n1, n2) = if k.kind == Kind::Peak {
            (1000, 3000)
        } else {
            (1024, 4096)
        };
        let (c1, c2) = (count(&flopscope, k, n1), count(&flopscope, k, n2));
        // The program does no floating-point work but the kernel's.
        for (n, c) in [(n1, &c1), (n2, &c2)] {
            if c.flop != n * k.flop {
                failures.push(format!(
                    "{}: {n} iterations counted {} FLOP, declared {} x {n} = {}",
                    k.name,
                    c.flop,
                    k.flop,
                    n * k.flop
                ));
            }
        }
        let bytes = c2.bytes as i128 - c1.bytes as i128;
        let want = ((n2 - n1) * k.bytes) as i128;
        if bytes != want {
            failures.push(format!(
                "{}: {} more iterations moved {bytes} more bytes, declared {} x {} = {want}",
                k.name,
                n2 - n1,
                k.bytes,
                n2 - n1
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "declarations that the counts contradict:\n{}",
        failures.join("\n")
    );
}
