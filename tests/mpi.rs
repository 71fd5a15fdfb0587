//! MPI jobs with Debian's Open MPI: `mpirun -n N flopscope count -o out.%r.json`
//! writes one report per rank, each rank's region FLOP is exact, and the
//! ranks' timing runs (`flopscope time`) and counts merge with `flopscope report`.

use crate::support::{kernel_dir, FLOPSCOPE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const N: u64 = 1000;

fn build_ranks() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("ranks");
    let markers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../markers/include");
    let out = Command::new("mpicc")
        .args(["-O2", "-I"])
        .arg(&markers)
        .arg("-o")
        .arg(&exe)
        .arg(kernel_dir().join("mpi/ranks.c"))
        .output()
        .expect("mpicc (Debian's libopenmpi-dev) is installed by scripts/setup.sh");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

fn mpirun(n: usize, args: &[&str]) {
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "-n", &n.to_string()])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "mpirun -n {n} {args:?}:\n{}", String::from_utf8_lossy(&out.stderr));
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn work_flop(r: &Value) -> u64 {
    let regions = r["regions"].as_array().unwrap();
    let work = regions.iter().find(|g| g["name"] == "work").expect("region work");
    work["flop"]["total"].as_u64().unwrap()
}

#[test]
fn every_rank_counts_exactly_with_1_2_and_4_ranks() {
    let exe = build_ranks();
    for size in [1usize, 2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("count.%r.json");
        mpirun(size, &[FLOPSCOPE, "count", "-o", template.to_str().unwrap(), "--", exe.to_str().unwrap(), &N.to_string()]);
        let mut total = 0;
        for rank in 0..size {
            let r = load(&dir.path().join(format!("count.{rank}.json")));
            assert_eq!(r["mpi"]["rank"], rank as u64);
            assert_eq!(r["mpi"]["size"], size as u64);
            assert_eq!(r["exit_status"], 0);
            // Rank r multiplies (r + 1) N times in its region.
            assert_eq!(work_flop(&r), (rank as u64 + 1) * N, "rank {rank} of {size}");
            total += work_flop(&r);
        }
        assert_eq!(total, N * (size * (size + 1) / 2) as u64);
    }
}
