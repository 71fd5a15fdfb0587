//! Sampling mode end to end with a kernel software clock, which needs no PMU:
//! per-CPU events inherited by the program, ring buffers, the side-band
//! records (mappings, exec, fork) and the symbols. tests/programs/two_functions.c
//! runs `heavy` and `light` with CPU times 3:1, so their shares of the samples
//! must be 3/4 and 1/4 within the sampling error.

use flopscope_engine_perf::{run_sampled_clock, SoftwareClock};
use flopscope_model::{ExitStatus, FunctionRow};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// tests/programs/two_functions.c built with debug info, once per test run.
fn program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let exe = dir.join(format!("two_functions.{}", std::process::id()));
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs/two_functions.c");
    let out = Command::new("gcc")
        .args(["-O2", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("running gcc");
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn row<'a>(rows: &'a [FunctionRow], name: &str) -> &'a FunctionRow {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows:#?}"))
}

/// `heavy`'s share of the two functions' samples is 3/4 within 4 binomial
/// standard errors, with at least `min` samples; returns the samples.
fn check_shares(rows: &[FunctionRow], min: u64) -> u64 {
    let heavy = row(rows, "heavy").samples.unwrap();
    let light = row(rows, "light").samples.unwrap();
    let n = heavy + light;
    assert!(n >= min, "only {n} samples: {rows:#?}");
    let share = heavy as f64 / n as f64;
    let sigma = (0.75 * 0.25 / n as f64).sqrt();
    assert!(
        (share - 0.75).abs() <= 4.0 * sigma,
        "heavy's share {share:.4} of {n} samples is not 0.75 +- {:.4}",
        4.0 * sigma
    );
    n
}

#[test]
fn two_functions_of_cpu_time_3_to_1_get_3_4_and_1_4_of_the_samples() {
    let _turn = crate::common::one_at_a_time();
    let exe = program();
    // 0.3 s of CPU; a sample every 200 us: some 1500 samples.
    let cmd = vec![exe.display().to_string(), "20".into(), "2000000".into()];
    let run = run_sampled_clock(&cmd, SoftwareClock::Task, 200_000).unwrap();
    assert_eq!(run.exit_status, ExitStatus::Code(0));
    let report = run.clock_report(SoftwareClock::Task);
    let rows = &report.functions;
    check_shares(rows, 500);
    let heavy = row(rows, "heavy");
    assert_eq!(heavy.module, exe.display().to_string());
    assert!(heavy.address.starts_with("0x"), "{}", heavy.address);
    assert!(
        heavy
            .file
            .as_deref()
            .is_some_and(|f| f.ends_with("two_functions.c")),
        "{heavy:?}"
    );
    assert_eq!(heavy.summary.flop.total, 0, "a clock counts no FLOP");
    // The rows split the counted CPU time: it adds up to the task clock's total.
    let counted = run.values.readings["task-clock"]
        .iter()
        .map(|r| r.value)
        .sum::<u64>() as f64
        * 1e-9;
    let split: f64 = rows.iter().filter_map(|r| r.time_s).sum();
    assert!((split - counted).abs() < 1e-6, "{split} vs {counted}");
    // Nothing lost, and (almost) every sample placed in a file's function.
    let profile = run.profile.as_ref().unwrap();
    assert_eq!(profile.lost, 0);
    assert_eq!(profile.malformed, 0);
    let anonymous: u64 = rows
        .iter()
        .filter(|r| r.module == "[anonymous]")
        .filter_map(|r| r.samples)
        .sum();
    assert!(anonymous <= 2, "{anonymous} samples outside every file");
    assert!(
        report.warnings.iter().any(|w| w.contains("1/sqrt(n)")),
        "{:?}",
        report.warnings
    );
}

/// A forked child (no exec) runs in its parent's mappings, an exec'd program
/// (through `sh`) in its own: both are placed, with the CPU clock this time.
#[test]
fn forked_and_execd_processes_are_sampled_in_their_own_mappings() {
    let _turn = crate::common::one_at_a_time();
    let exe = program();
    let script = format!("{} 10 2000000 fork; true", exe.display());
    let cmd = vec!["sh".to_string(), "-c".into(), script];
    let run = run_sampled_clock(&cmd, SoftwareClock::Cpu, 200_000).unwrap();
    assert_eq!(run.exit_status, ExitStatus::Code(0));
    let rows = run.clock_report(SoftwareClock::Cpu).functions;
    let n = check_shares(&rows, 500);
    let all: u64 = rows.iter().filter_map(|r| r.samples).sum();
    assert!(
        n as f64 >= 0.97 * all as f64,
        "{n} of {all} samples in heavy and light: {rows:#?}"
    );
}
