//! Region counts under the perf engine, the markers' side: the C header and
//! the Rust markers read the events named in FLOPSCOPE_PERF_EVENTS at region
//! boundaries and append `pid \t entries \t v0,... \t name` lines to
//! FLOPSCOPE_PERF_REGIONS. This machine has no hardware PMU, so the programs
//! run directly with a software event: page faults (type 1, config 2), of
//! which touching N fresh pages takes at least N.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_regions");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn check(out: std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// tests/kernels/perf_regions/pages.c, with the C markers.
fn c_program() -> PathBuf {
    let exe = tmp().join(format!("pages-c.{}", std::process::id()));
    let out = Command::new("gcc")
        .args(["-O2", "-Wall", "-Werror", "-I"])
        .arg(repo().join("crates/markers/include"))
        .arg("-o")
        .arg(&exe)
        .arg(repo().join("tests/kernels/perf_regions/pages.c"))
        .output()
        .unwrap();
    check(out, "gcc pages.c");
    exe
}

/// The perf_pages example of flopscope-markers, in its own target directory.
fn rust_program() -> PathBuf {
    let target = tmp().join("target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from(env!("CARGO")));
    let out = Command::new(cargo)
        .current_dir(repo())
        .args([
            "build",
            "-p",
            "flopscope-markers",
            "--example",
            "perf_pages",
        ])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .unwrap();
    check(out, "cargo build --example perf_pages");
    target.join("debug/examples/perf_pages")
}

/// Runs `exe N` with `events`; the region lines by name: (entries, values).
fn run(exe: &Path, n: u64, events: &str) -> BTreeMap<String, (u64, Vec<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("regions");
    let out = Command::new(exe)
        .arg(n.to_string())
        .env("FLOPSCOPE_PERF_EVENTS", events)
        .env("FLOPSCOPE_PERF_REGIONS", &file)
        .env_remove("FLOPSCOPE_REGION_TIMES")
        .env_remove("FLOPSCOPE_COUNTING")
        .output()
        .unwrap();
    check(out, &exe.display().to_string());
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut lines = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let [_pid, entries, values, name] = f[..] else {
            panic!("bad line {line:?}");
        };
        let values = values.split(',').map(|v| v.parse().unwrap()).collect();
        lines.insert(name.to_string(), (entries.parse().unwrap(), values));
    }
    lines
}

fn check_program(exe: &Path) {
    let n = 300;
    let r = run(exe, n, "1:2");
    let (entries, faults) = &r["touch pages"];
    assert_eq!(*entries, 1);
    assert!(
        faults[0] >= n && faults[0] < 2 * n,
        "{faults:?} page faults for {n} pages"
    );
    // Entered twice, once nested: counted once, and nothing faults there.
    assert_eq!(r["empty"], (2, vec![0]));
    // Two events: one value each, in the order listed.
    let r = run(exe, n, "1:2,1:1");
    assert!(
        r["touch pages"].1[0] >= n && r["touch pages"].1[1] > 0,
        "{r:?}"
    );
    // An event this machine cannot open (a hardware one without a PMU, or a
    // malformed list): the program runs on and reports no region.
    assert!(run(exe, n, "1:2,zz").is_empty());
}

#[test]
fn c_markers_read_the_counters_at_region_boundaries() {
    check_program(&c_program());
}

#[test]
fn rust_markers_read_the_counters_at_region_boundaries() {
    check_program(&rust_program());
}
