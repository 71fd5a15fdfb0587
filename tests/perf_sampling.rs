//! `flopscope count --engine perf --sample-period N`: FLOP per function by
//! sampling. This machine has no PMU, so the end-to-end run samples a kernel
//! software clock (the hidden `--sample-clock`) through the same machinery:
//! crates/engine-perf/tests/programs/two_functions.c, whose `heavy` and
//! `light` take CPU time 3:1, run through `sh` (a fork and an exec).

use crate::support::FLOPSCOPE;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let src = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../engine-perf/tests/programs/two_functions.c");
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_sampling");
            std::fs::create_dir_all(&dir).unwrap();
            let exe = dir.join(format!("two_functions.{}", std::process::id()));
            let out = Command::new("gcc")
                .args(["-O2", "-g", "-o"])
                .arg(&exe)
                .arg(&src)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "gcc: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            exe
        })
        .clone()
}

fn samples(report: &Value, name: &str) -> u64 {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name}: {report:#}"))["samples"]
        .as_u64()
        .unwrap()
}

#[test]
fn sampling_a_clock_splits_two_functions_3_to_1() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let script = format!("{} 20 2000000; true", program().display());
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--engine", "perf", "--sample-clock", "task-clock"])
        .args(["--sample-period", "200000", "-o"])
        .arg(&json)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (heavy, light) = (samples(&report, "heavy"), samples(&report, "light"));
    let n = heavy + light;
    assert!(n >= 500, "only {n} samples");
    let share = heavy as f64 / n as f64;
    let sigma = (0.75 * 0.25 / n as f64).sqrt();
    assert!(
        (share - 0.75).abs() <= 4.0 * sigma,
        "heavy's share {share:.4} of {n} samples is not 0.75 +- {:.4}",
        4.0 * sigma
    );
    let f = &report["functions"][0];
    assert_eq!(f["name"], "heavy");
    assert!(f["time_s"].as_f64().unwrap() > 0.0, "{f:#}");
    assert!(
        stderr.contains("sampled the software clock task-clock") && stderr.contains("1/sqrt(n)"),
        "the warnings say what the rows are: {stderr}"
    );
}

#[test]
fn sample_period_needs_the_perf_engine_and_a_pmu() {
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--sample-period", "1000003", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--engine perf"), "{stderr}");

    // Hardware sampling on this VM fails as counting does: no PMU, exit 2.
    let out = Command::new(FLOPSCOPE)
        .args([
            "count",
            "--engine",
            "perf",
            "--sample-period",
            "1000003",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if flopscope_engine_perf::probe_hardware_counter().is_ok() {
        assert!(out.status.success(), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("no hardware performance counters")
                || stderr.contains("perf_event_paranoid"),
            "{stderr}"
        );
    }

    let out = Command::new(FLOPSCOPE)
        .args(["count", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--sample-period <N>") && help.contains("1000003 -- ./app"),
        "{help}"
    );
}
