//! How a run ends: the program's exit code passes through, a crash still
//! writes a partial report, a missing program and an instruction QEMU cannot
//! execute are errors a user can act on.

use crate::support::*;
use std::path::Path;

#[test]
fn exit_status_passes_through() {
    let exe = build("exit3.c", &["-O2"]);
    let run = count(&exe, &[] as &[&str], &[]);
    assert_eq!(run.code, 3, "flopscope's exit code:\n{}", run.stderr);
    let r = run.report.expect("a report for a program that exited 3");
    assert_eq!(r.0["exit_status"], 3);
    assert_eq!(r.0["complete"], true);
    assert_eq!(r.flop("total"), 0);
}

#[test]
fn segfault_keeps_the_flop_done_so_far() {
    let n = 1000;
    let exe = build("segv.c", AVX2_FMA);
    let run = count(&exe, &[n.to_string()], &[]);
    assert_eq!(run.code, 128 + 11, "flopscope's exit code:\n{}", run.stderr);
    let r = run
        .report
        .unwrap_or_else(|| panic!("no report written for a crashed program:\n{}", run.stderr));
    assert_eq!(r.0["exit_status"], "signal:SIGSEGV");
    assert_eq!(r.0["complete"], false);
    // segv.c: n VFMADD*PD ymm, 8 FLOP each, then the fault.
    let e = Expect::segv(n);
    let mut f = Failures::default();
    f.expect(&format!("segv.c [{}] {n}", AVX2_FMA.join(" ")), &r, &e);
    f.assert_none();
}

#[test]
fn missing_program_is_a_flopscope_error() {
    let missing = Path::new("/nonexistent/flopscope-test/no-such-program");
    let run = count(missing, &[] as &[&str], &[]);
    assert_eq!(run.code, 2, "flopscope's exit code:\n{}", run.stderr);
    assert!(
        run.stderr.contains("no-such-program"),
        "stderr does not name the program:\n{}",
        run.stderr
    );
}

#[test]
fn avx512_stops_with_sigill_and_names_the_instruction() {
    let exe = build("avx512.c", &["-O2", "-mavx512f"]);
    let run = count(&exe, &[] as &[&str], &[]);
    assert_eq!(run.code, 128 + 4, "flopscope's exit code:\n{}", run.stderr);
    let r = run.report.unwrap_or_else(|| {
        panic!(
            "no report written for a program killed by SIGILL:\n{}",
            run.stderr
        )
    });
    assert_eq!(r.0["exit_status"], "signal:SIGILL");
    assert_eq!(r.0["complete"], false);
    assert_eq!(
        r.flop("total"),
        0,
        "avx512.c dies before its only FLOP instruction"
    );
    let explains = |text: &str| {
        text.contains("AVX-512") && text.contains("vaddpd") && text.contains("-march=x86-64-v3")
    };
    assert!(
        r.warnings().iter().any(|w| explains(w)),
        "no warning names AVX-512, vaddpd and -march=x86-64-v3: {:?}",
        r.warnings()
    );
    assert!(
        explains(&run.stderr),
        "stderr does not name AVX-512, vaddpd and -march=x86-64-v3:\n{}",
        run.stderr
    );
}

/// Under `ulimit -s unlimited` a program may recurse far deeper than 8 MiB
/// (tests/kernels/deep_stack.c: 50,000 frames of 1 KiB): QEMU gave the
/// guest an 8 MiB stack then, and the program crashed under the emulate
/// engine only. Both engines run it to its end, with its N adds.
#[test]
fn a_deep_recursion_under_an_unlimited_stack_runs_as_it_does_alone() {
    let n = 50_000u64;
    let exe = build("deep_stack.c", &["-O1"]);
    for engine in ["emulate", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -s unlimited && exec "$@""#)
            .arg("sh")
            .args([FLOPSCOPE, "count", "--engine", engine, "--no-native", "-o"])
            .arg(&json)
            .arg("--")
            .arg(&exe)
            .arg(n.to_string())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{engine}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("{}\n", n + n % 256),
            "{engine}"
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(
            (r["complete"].as_bool(), r["flop"]["total"].as_u64()),
            (Some(true), Some(n)),
            "{engine}"
        );
    }
}
