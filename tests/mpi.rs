//! MPI jobs with Debian's Open MPI: `mpirun -n N flopscope count -o out.%r.json`
//! (under the emulate and the native engine)
//! writes one report per rank, each rank's region FLOP is exact, and the
//! ranks' timing runs (`flopscope time`) and counts merge with `flopscope report`.

use crate::support::engines::markers_include;
use crate::support::{build_by, FLOPSCOPE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const N: u64 = 1000;

/// Built once per test run: the tests run in parallel, and one must not run
/// the program while another is still writing it.
fn build_ranks() -> PathBuf {
    // mpicc: Debian's libopenmpi-dev, installed by scripts/setup.sh.
    build_by("mpicc", "mpi/ranks.c", &["-O2", "-I", &markers_include()])
}

fn mpirun(n: usize, args: &[&str]) {
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "-n", &n.to_string()])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpirun -n {n} {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn load(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

fn work_flop(r: &Value) -> u64 {
    let regions = r["regions"].as_array().unwrap();
    let work = regions
        .iter()
        .find(|g| g["name"] == "work")
        .expect("region work");
    work["flop"]["total"].as_u64().unwrap()
}

#[test]
fn every_rank_counts_exactly_with_1_2_and_4_ranks() {
    for engine in ["emulate", "native"] {
        ranks_exact(engine);
    }
}

fn ranks_exact(engine: &str) {
    let exe = build_ranks();
    for size in [1usize, 2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("count.%r.json");
        mpirun(
            size,
            &[
                FLOPSCOPE,
                "count",
                "--engine",
                engine,
                "-o",
                template.to_str().unwrap(),
                "--",
                exe.to_str().unwrap(),
                &N.to_string(),
            ],
        );
        let mut total = 0;
        for rank in 0..size {
            let r = load(&dir.path().join(format!("count.{rank}.json")));
            assert_eq!(r["mpi"]["rank"], rank as u64);
            assert_eq!(r["mpi"]["size"], size as u64);
            assert_eq!(r["exit_status"], 0);
            // Open MPI patches libc's code at start (its memory hooks):
            // followed, not flagged.
            assert_eq!(
                r["complete"], true,
                "{engine}: rank {rank} of {size}: {}",
                r["warnings"]
            );
            // Rank r multiplies (r + 1) N times in its region.
            assert_eq!(r["engine"], engine);
            assert_eq!(
                work_flop(&r),
                (rank as u64 + 1) * N,
                "{engine}: rank {rank} of {size}"
            );
            total += work_flop(&r);
        }
        assert_eq!(total, N * (size * (size + 1) / 2) as u64);
    }
}

#[test]
fn counts_and_native_times_of_a_job_merge_into_one_report() {
    let exe = build_ranks();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (count, time) = (d.join("count.%r.json"), d.join("time.%r.json"));
    let n = N.to_string();
    mpirun(
        2,
        &[
            FLOPSCOPE,
            "count",
            "-o",
            count.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
            &n,
        ],
    );
    mpirun(
        2,
        &[
            FLOPSCOPE,
            "time",
            "-o",
            time.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
            &n,
        ],
    );
    let merged = d.join("job.json");
    let out = Command::new(FLOPSCOPE)
        .arg("report")
        .args(["count.0.json", "count.1.json", "time.0.json", "time.1.json"].map(|f| d.join(f)))
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = load(&merged);
    // Ranks 0 and 1 multiply N and 2N times in region work.
    assert_eq!(work_flop(&r), 3 * N);
    let ranks = r["processes"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for p in ranks {
        // Each rank got its own native time from its timing run.
        let t = p["native_time_s"].as_f64().expect("a rank's native time");
        assert!(t > 0.0);
        assert_eq!(
            p["gflops"].as_f64().unwrap(),
            p["flop"]["total"].as_u64().unwrap() as f64 / t / 1e9
        );
    }
    // The job's time is its slowest rank's; FLOP/s follow from it.
    let slowest = ranks
        .iter()
        .map(|p| p["native_time_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(r["native_time_s"].as_f64().unwrap(), slowest);
    assert!(r["gflops"].as_f64().is_some());
}

/// `-o` without `%r` under a launcher: every rank would write the one file,
/// each replacing the others' report, so every rank refuses before its
/// program runs, with a name that works; `flopscope time` alike.
#[test]
fn a_report_name_every_rank_would_share_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("r.json");
    let ran = dir.path().join("ran");
    for command in ["count", "time"] {
        let out = Command::new("mpirun")
            .args(["--oversubscribe", "-n", "2", FLOPSCOPE, command, "-o"])
            .arg(&shared)
            .args(["--", "/bin/sh", "-c"])
            .arg(format!("touch {}", ran.display()))
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command}: {err}");
        let told = format!(
            "each of the job's 2 ranks would write this one file, replacing the others' reports: put %r (the rank) in the name, as in -o {}; the program was not run",
            dir.path().join("r.%r.json").display()
        );
        assert!(err.contains(&told), "{command}: {err}");
        assert!(!ran.exists(), "{command}: the program ran");
        assert!(!shared.exists(), "{command}: a report was written");
    }
}
