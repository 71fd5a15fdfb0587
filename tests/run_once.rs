//! The program runs once by default (stdin read, side effects made and output
//! written once), the engine is chosen for it, and the report says which run
//! its time comes from; `--runs N --warmup K` adds timed runs on request.

use crate::support::{output_with_input, FLOPSCOPE};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn reader() -> std::path::PathBuf {
    crate::support::build("workflow/reader.c", &["-O2"])
}

/// `flopscope count ARGS -o DIR/r.json -- EXE TRACE` with `input` on stdin;
/// the output and the report.
fn count(args: &[&str], exe: &Path, dir: &Path, input: &str) -> (Output, Value) {
    let json = dir.join("r.json");
    let mut cmd = Command::new(FLOPSCOPE);
    cmd.arg("count")
        .args(args)
        .arg("-o")
        .arg(&json)
        .arg("--")
        .arg(exe)
        .arg(dir.join("trace"));
    let out = output_with_input(&mut cmd, input.as_bytes());
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out, serde_json::from_str(&text).unwrap())
}

fn trace(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("trace"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_program_reading_stdin_runs_once_under_the_native_engine_and_is_timed_by_that_run() {
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = count(&[], &reader(), dir.path(), "100000\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{r}");
    // The default engine for a dynamically linked program.
    assert_eq!(r["engine"], "native");
    // N additions, N read from stdin by the one run.
    assert_eq!(r["flop"]["total"], 100_000);
    assert_eq!(trace(dir.path()), ["100000"], "one run, one side effect");
    assert_eq!(stdout.matches("reader: 100000").count(), 1, "{stdout}");
    // The time is the counted run's, and the report says so.
    let t = &r["timing"];
    assert_eq!(t["source"], "counted_run", "{r}");
    assert_eq!(t["engine"], "native");
    assert_eq!(t["runs_s"].as_array().unwrap().len(), 1);
    assert_eq!(r["native_time_s"], r["engine_time_s"]);
    assert!(r["gflops"].as_f64().unwrap() > 0.0, "{r}");
    // The engine's fixed limits are noted in the JSON, not warned about.
    assert!(r["notes"][0].as_str().unwrap().contains("dynamic loader"));
    assert!(!r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("dynamic loader")));
}

#[test]
fn runs_and_warmups_are_timed_apart_with_the_same_input_and_their_output_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = count(
        &["--runs", "3", "--warmup", "2"],
        &reader(),
        dir.path(),
        "2000\n",
    );
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["flop"]["total"], 2000, "counted from the same input");
    // The counted run, 2 warm-ups and 3 timed runs, all with the same input.
    assert_eq!(trace(dir.path()), ["2000"; 6]);
    // Only the counted run's output reaches the user.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("reader: 2000").count(), 1, "{stdout}");
    let t = &r["timing"];
    assert_eq!(t["source"], "native_runs", "{r}");
    assert_eq!(t["warmup"], 2);
    let runs: Vec<f64> = t["runs_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(runs.len(), 3);
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(t["min_s"].as_f64().unwrap(), sorted[0]);
    assert_eq!(t["median_s"].as_f64().unwrap(), sorted[1]);
    assert_eq!(t["max_s"].as_f64().unwrap(), sorted[2]);
    assert_eq!(r["native_time_s"].as_f64().unwrap(), sorted[1]);
}

#[test]
fn a_static_program_runs_once_under_the_native_engine_and_is_timed_by_that_run() {
    let exe = crate::support::build("workflow/reader.c", &["-O2", "-static"]);
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = count(&[], &exe, dir.path(), "1000\n");
    assert_eq!(out.status.code(), Some(0), "{r}");
    // Statically linked programs are the native engine's too (loaded by its
    // runtime): no fallback, nothing to warn about.
    assert_eq!(r["engine"], "native");
    assert_eq!(r["complete"], true);
    assert_eq!(r["flop"]["total"], 1000);
    assert_eq!(trace(dir.path()), ["1000"]);
    assert_eq!(r["warnings"], serde_json::json!([]), "{r}");
    assert_eq!(r["timing"]["source"], "counted_run", "{r}");
    assert!(r["gflops"].as_f64().unwrap() > 0.0, "{r}");
    // Nothing of it runs before the counts start: no loader to note.
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("statically linked program"))
            && !notes.iter().any(|n| n.contains("dynamic loader")),
        "{notes:?}"
    );
}

#[test]
fn the_emulate_engine_gives_no_time_unasked() {
    let exe = crate::support::build("workflow/reader.c", &["-O2", "-static"]);
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = count(&["--engine", "emulate"], &exe, dir.path(), "1000\n");
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["engine"], "emulate");
    assert_eq!(r["flop"]["total"], 1000);
    assert_eq!(trace(dir.path()), ["1000"]);
    // The emulated run's time says nothing of the program's speed.
    assert_eq!(r["native_time_s"], Value::Null);
    assert_eq!(r["gflops"], Value::Null);
    assert_eq!(r.get("timing"), None);
    // The table says why there is no FLOP/s and what to do.
    let table = Command::new(FLOPSCOPE)
        .args(["report"])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("No time, so no FLOP/s: the emulate engine's run is far slower than the program's own; time it with --runs N"),
        "{text}"
    );
}

#[test]
fn the_emulate_engine_with_runs_gets_its_time_from_uninstrumented_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = count(
        &["--engine", "emulate", "--runs", "1"],
        &reader(),
        dir.path(),
        "5000\n",
    );
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["engine"], "emulate");
    assert_eq!(r["flop"]["total"], 5000);
    assert_eq!(trace(dir.path()), ["5000"; 2]);
    assert_eq!(r["timing"]["source"], "native_runs");
    assert_eq!(r["timing"]["engine"], "emulate");
    assert!(r["gflops"].as_f64().unwrap() > 0.0);
}

#[test]
fn runs_are_refused_for_an_mpi_rank_before_the_program_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--runs", "2", "--"])
        .arg(reader())
        .arg(dir.path().join("trace"))
        .env("OMPI_COMM_WORLD_RANK", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a rank cannot run its program again"), "{err}");
    assert!(trace(dir.path()).is_empty(), "the program ran");
}

/// `flopscope count ARGS -- two_regions 4096 REPS` (SSE2 build): its report.
fn counted_two_regions(args: &[&str], reps: &str) -> Value {
    let exe = crate::reports::two_regions(crate::support::SSE2);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(FLOPSCOPE)
        .arg("count")
        .args(args)
        .arg("-o")
        .arg(&json)
        .arg("--")
        .arg(&exe)
        .args(["4096", reps])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn region_times_under_the_native_engine_come_from_the_runtime_and_fit_in_the_run() {
    let r = counted_two_regions(&["--engine", "native"], "2000");
    let total = r["native_time_s"].as_f64().unwrap();
    let mut sum = 0.0;
    for name in ["axpy", "scale"] {
        let region = r["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap();
        assert_eq!(region["entries"], 1);
        let t = region["native_time_s"].as_f64().unwrap();
        assert!(t > 0.0, "{name}: {region}");
        assert!(region["gflops"].as_f64().unwrap() > 0.0);
        sum += t;
    }
    assert!(sum <= total, "regions {sum} s in a run of {total} s");
}

#[test]
fn region_times_of_repeated_runs_are_medians_with_their_spread() {
    let r = counted_two_regions(&["--runs", "3"], "500");
    for name in ["axpy", "scale"] {
        let region = r["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap();
        let median = region["native_time_s"].as_f64().unwrap();
        let spread = &r["timing"]["regions_min_max_s"][name];
        let (lo, hi) = (spread[0].as_f64().unwrap(), spread[1].as_f64().unwrap());
        assert!(
            lo > 0.0 && lo <= median && median <= hi,
            "{name}: {lo} {median} {hi}"
        );
    }
}

/// A program that closes every descriptor it did not open, then opens a
/// file of its own under the lowest number (tests/kernels/processes/
/// close_all.c): its file holds only what it wrote, its N adds are counted
/// in its region and attributed in full, under both engines. The emulate
/// engine's plugin, whose files share the program's descriptor numbers,
/// wrote its code table into the program's file there (the program found
/// binary records in it and failed), and its attribution was lost.
#[test]
fn a_program_closing_every_descriptor_keeps_its_files_its_own() {
    let n = 1000u64;
    let inc = crate::support::engines::markers_include();
    let exe = crate::support::build("processes/close_all.c", &["-O2", "-I", &inc]);
    for engine in ["emulate", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own.txt");
        let r = crate::support::count_ok_with(
            engine,
            &exe,
            &[own.to_str().unwrap(), &n.to_string()],
            &[],
        );
        assert_eq!(
            std::fs::read_to_string(&own).unwrap(),
            "the program's own line\n",
            "{engine}"
        );
        let after =
            crate::support::engines::region(&r, "after").and_then(|g| g["flop"]["total"].as_u64());
        assert_eq!((r.flop("total"), after), (n, Some(n)), "{engine}");
        assert_eq!(r.0["warnings"], serde_json::json!([]), "{engine}");
    }
}
