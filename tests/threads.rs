//! Threads: an OpenMP kernel gives its closed-form FLOP whatever the number
//! of threads, every time, and the per-thread rows add up to the total.

use crate::support::*;

const OMP: &[&str] = &["-O2", "-fopenmp"];
const N: u64 = 1000;
const REPS: u64 = 4;

/// omp_triad.c: 2 N REPS FLOP, one multiply and one add per element and rep.
fn expected() -> Expect {
    Expect::new()
        .flop("fp64", 2 * N * REPS)
        .op("add", N * REPS)
        .op("mul", N * REPS)
}

fn run(threads: u32) -> Report {
    let exe = build("omp_triad.c", OMP);
    count_ok(
        &exe,
        &[N.to_string(), REPS.to_string()],
        &[("OMP_NUM_THREADS", &threads.to_string())],
    )
}

/// `threads[].flop.total`, one per row.
fn thread_totals(r: &Report) -> Vec<u64> {
    r.0["threads"]
        .as_array()
        .expect("threads is an array")
        .iter()
        .map(|t| {
            t["flop"]["total"]
                .as_u64()
                .expect("threads[].flop.total is an integer")
        })
        .collect()
}

#[test]
fn omp_triad_same_flop_with_1_2_and_8_threads() {
    let mut f = Failures::default();
    for threads in [1, 2, 8] {
        let r = run(threads);
        f.expect(
            &format!("omp_triad.c OMP_NUM_THREADS={threads}"),
            &r,
            &expected(),
        );
        f.equal(
            &format!("omp_triad.c OMP_NUM_THREADS={threads}: sum of threads[].flop.total"),
            (2 * N * REPS) as i64,
            thread_totals(&r).iter().sum::<u64>() as i64,
        );
    }
    f.assert_none();
}

#[test]
fn omp_triad_8_threads_20_times() {
    let mut f = Failures::default();
    for attempt in 1..=20 {
        let r = run(8);
        let what = format!("omp_triad.c OMP_NUM_THREADS=8, run {attempt}");
        f.expect(&what, &r, &expected());
        let totals = thread_totals(&r);
        if totals.len() < 2 {
            f.equal(
                &format!("{what}: more than one threads[] row"),
                2,
                totals.len() as i64,
            );
        }
        f.equal(
            &format!("{what}: sum of threads[].flop.total"),
            (2 * N * REPS) as i64,
            totals.iter().sum::<u64>() as i64,
        );
    }
    f.assert_none();
}
