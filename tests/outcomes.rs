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

/// A jump to where nothing may run faults as it does natively, under both
/// engines (tests/kernels/native/bad_jumps.c): a call through a null or a
/// non-canonical pointer, into a data page, a direct jump there, a call
/// into an unmapped page, a return there and a signal handler's return
/// there (it moves the context's program counter), each survived by a
/// SIGSEGV handler that leaves with siglongjmp, then the same null call
/// without a handler, which kills the program. The native engine stopped
/// the program at the first such jump ("the program jumped to
/// 0x8000000000000000, where no code is mapped", exit 125) where natively
/// the handler ran; it now lets the processor raise the fault the program
/// would get: the program's output (si_code and si_addr included) is the
/// program's alone, its FLOP are N multiplies and N adds a jump, and the
/// report is complete; without a handler the program dies of SIGSEGV after
/// its first N steps, with a partial report.
/// (QEMU reports the non-canonical jump as an unmapped one: the emulate
/// engine's output is not compared, its counts are.)
#[test]
fn jumps_where_nothing_may_run_fault_as_natively() {
    let n = 1000u64;
    let arg = n.to_string();
    let exe = build("native/bad_jumps.c", &["-O1"]);
    let alone = std::process::Command::new(&exe).arg(&arg).output().unwrap();
    let alone_out = String::from_utf8_lossy(&alone.stdout);
    assert_eq!(
        (alone.status.code(), alone_out.lines().count()),
        (Some(0), 8),
        "{alone_out}"
    );
    for engine in ["native", "emulate"] {
        let run = count_with(engine, &exe, &[&arg], &[]);
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        if engine == "native" {
            assert_eq!(run.stdout, alone_out, "{engine}");
        }
        let r = run.report.expect("a report");
        assert_eq!(r.0["complete"], true, "{engine}: {:?}", r.warnings());
        let ops = r.flop_by_op();
        assert_eq!(
            (ops["mul"], ops["add"], r.flop("total")),
            (7 * n, 7 * n, 14 * n),
            "{engine}"
        );
        let run = count_with(engine, &exe, &[&arg, "die"], &[]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (128 + 11, "before\n"),
            "{engine}: {}",
            run.stderr
        );
        let r = run
            .report
            .expect("a report for a program killed by SIGSEGV");
        assert_eq!(
            (&r.0["exit_status"], &r.0["complete"]),
            (
                &serde_json::json!("signal:SIGSEGV"),
                &serde_json::json!(false)
            ),
            "{engine}"
        );
        assert_eq!(r.flop("total"), 2 * n, "{engine}");
    }
}
