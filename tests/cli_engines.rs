//! Engines through the CLI: QEMU setup errors named with their fix, the perf
//! engine's no-PMU path on this machine end to end, and an SDE mix imported to
//! exact totals.

use crate::support::FLOPSCOPE;
use std::path::Path;
use std::process::Command;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../import-sde/tests/fixtures")
        .join(name)
}

/// Whether this machine lets a process open a hardware cycle counter.
fn pmu_usable() -> bool {
    flopscope_engine_perf::probe_hardware_counter().is_ok()
}

#[test]
fn perf_engine_without_a_pmu_exits_2_and_names_the_cause_and_the_remedy() {
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--engine", "perf", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if pmu_usable() {
        assert!(out.status.success(), "{stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--engine emulate"),
        "the remedy is named: {stderr}"
    );
    assert!(
        stderr.contains("no hardware performance counters")
            || stderr.contains("perf_event_paranoid"),
        "the cause is named: {stderr}"
    );
}

#[test]
fn events_names_a_known_set_and_rejects_an_unknown_one() {
    let out = Command::new(FLOPSCOPE)
        .args(["events", "--arch", "skx"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fp64.256 = FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE * 4"),
        "{text}"
    );
    let out = Command::new(FLOPSCOPE)
        .args(["events", "--arch", "no-such-cpu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--uarch` and `--arch` are one option with one set of names in every
/// command: the peak's table names and the event sets' (`peak --uarch zen4`
/// was taken while `peak --arch skx` and `events --uarch "Zen 4"` were not).
#[test]
fn peak_and_events_take_either_option_and_either_kind_of_name() {
    let stdout = |args: &[&str]| {
        let out = Command::new(FLOPSCOPE).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let uarch_line = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("uarch"))
            .unwrap_or_else(|| panic!("no uarch line in {text}"))
            .to_string()
    };
    let by_table = uarch_line(&stdout(&["peak", "--uarch", "Skylake-SP"]));
    assert!(
        by_table.contains("Skylake-SP: 2 x 512-bit FMA"),
        "{by_table}"
    );
    for args in [
        ["peak", "--arch", "skx"],
        ["peak", "--uarch", "skx"],
        ["peak", "--arch", "skylake-sp"],
    ] {
        assert_eq!(uarch_line(&stdout(&args)), by_table, "{args:?}");
    }
    assert!(uarch_line(&stdout(&["peak", "--arch", "hsw"])).contains("Haswell"));
    // The table's own entry first, where it has one.
    let clx = uarch_line(&stdout(&["peak", "--arch", "cascadelake"]));
    assert!(clx.contains("Cascade Lake"), "{clx}");
    let zen4 = stdout(&["events", "--arch", "zen4"]);
    assert!(zen4.starts_with("zen4: AMD Zen 4"), "{zen4}");
    for args in [
        ["events", "--uarch", "Zen 4"],
        ["events", "--uarch", "ZEN-4"],
        ["events", "--arch", "Zen 4"],
    ] {
        assert_eq!(stdout(&args), zen4, "{args:?}");
    }
    assert!(stdout(&["events", "--arch", "Sandy Bridge"]).starts_with("snb:"));
    // A set the peak table has no entry for is refused by name, with where
    // the names are listed.
    let out = Command::new(FLOPSCOPE)
        .args(["peak", "--arch", "lnl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nor is \"lnl\" an event set with an entry in that table")
            && err.contains("flopscope events --list"),
        "{err}"
    );
}

#[test]
fn an_sde_mix_imports_to_the_parse_sde_totals() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sde.json");
    let ranks: Vec<_> = std::fs::read_dir(fixture("ranks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let out = Command::new(FLOPSCOPE)
        .args(["import", "sde"])
        .args(&ranks)
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // NERSC's published parse-sde.sh totals for its two-rank STREAM example.
    assert_eq!(r["engine"], "sde-import");
    assert_eq!(r["flop"]["total"], 4000000400u64);
    assert_eq!(r["bytes"]["read"], 33752339756u64);
    assert_eq!(r["bytes"]["written"], 16117466472u64);
}

#[test]
fn a_file_that_is_not_sde_output_is_named_with_its_line() {
    let out = Command::new(FLOPSCOPE)
        .args(["import", "sde"])
        .arg(fixture("not-sde.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not-sde.txt:"), "{stderr}");
}

#[test]
fn a_qemu_without_plugin_support_is_named_with_the_fix() {
    // `true` stands in for a static QEMU build: it runs, but loads no plugin.
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--no-native", "--qemu", "/bin/true", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/bin/true has no plugin support"),
        "{stderr}"
    );
    assert!(stderr.contains("qemu-user 7.2"), "{stderr}");
}

#[test]
fn a_missing_qemu_is_named() {
    let out = Command::new(FLOPSCOPE)
        .args([
            "count",
            "--no-native",
            "--qemu",
            "/no/such/qemu",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/no/such/qemu"), "{stderr}");
}
