//! Threads: an OpenMP kernel gives its closed-form FLOP whatever the number
//! of threads, every time, and the per-thread rows add up to the total.

use crate::support::*;
use std::path::Path;

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

/// More threads over a run than the native engine keeps states of (4096),
/// and more (thread, region) pairs than the counter file has rows (2048):
/// 5000 threads, at most 4 alive, each adding K doubles in region "work"
/// (tests/kernels/native/many_threads.c). The totals and the region are
/// exact, the rows of `threads` add up to them, and both limits are named
/// in warnings, under both engines where they apply, dynamically and
/// statically linked (whose threads' host blocks the native engine recycles
/// too). A child forked at the end creates 4 threads of its own: its table
/// holds its parent's 4,096 states, all but one gone with the fork (its
/// threads failed with EAGAIN before the free slots were taken).
#[test]
fn thousands_of_short_lived_threads_lose_no_counts() {
    let (threads, k) = (5000u64, 1000u64);
    let inc = crate::support::engines::markers_include();
    let dynamic = build("native/many_threads.c", &["-O2", "-pthread", "-I", &inc]);
    let fixed = build(
        "native/many_threads.c",
        &["-O2", "-pthread", "-static", "-I", &inc],
    );
    for (exe, engine) in [
        (&dynamic, "native"),
        (&dynamic, "emulate"),
        (&fixed, "native"),
    ] {
        // The emulate engine's rows are per vCPU index, which QEMU reuses:
        // neither limit applies to it, the totals are the check, and 1,000
        // threads make them (QEMU 7.2 is slow to start threads, and each
        // start is a chance of its plugin bug, below).
        let threads = if engine == "emulate" { 1000 } else { threads };
        let args = [threads.to_string(), k.to_string(), "fork".into()];
        let r = if engine == "emulate" {
            count_ok_despite_qemus_plugin_bug(exe, &args)
        } else {
            count_ok_with(engine, exe, &args, &[])
        };
        let what = format!("{engine}, {exe:?}: {threads} threads of {k} adds");
        // Each thread's K adds, and main's one add of each thread's sum; then
        // a forked child's 4 threads (its table full of its parent's states).
        let all = threads * k + threads + 4 * k + 4;
        assert_eq!(r.flop("fp64"), all, "{what}: fp64 FLOP");
        assert_eq!(r.flop("total"), all, "{what}: FLOP");
        assert_eq!(r.child_flop(), vec![4 * k + 4], "{what}: the forked child");
        let work = crate::support::engines::region(&r, "work").expect("region work");
        assert_eq!(
            (work["entries"].as_u64(), work["flop"]["total"].as_u64()),
            (Some(threads + 4), Some((threads + 4) * k)),
            "{what}: region work's entries and FLOP"
        );
        let rows = thread_totals(&r);
        assert_eq!(
            rows.iter().sum::<u64>(),
            threads * k + threads,
            "{what}: the parent's thread rows"
        );
        let warnings = r.warnings();
        if engine == "native" {
            let named = |s: &str| warnings.iter().any(|w| w.contains(s));
            assert!(
                named("after the native engine's table of 4096 threads was full")
                    && named("summed in the `threads` row of tid 4294967295"),
                "{what}: {warnings:?}"
            );
            assert!(rows.len() <= 2048, "{what}: {} thread rows", rows.len());
        }
    }
    // Sampled (each thread armed with a timer of its own, by slot): the
    // same totals, and samples placed.
    let run = crate::support::count_sampled_with(
        "native",
        &dynamic,
        &[threads.to_string(), k.to_string()],
        &[],
    );
    let r = run.report.expect("a report");
    assert_eq!(
        (r.0["complete"].as_bool(), r.flop("total")),
        (Some(true), threads * k + threads),
        "sampled: {}",
        run.stderr
    );
    assert!(
        r.0["sampling"]["samples"].as_u64().is_some_and(|n| n > 0),
        "sampled: {}",
        r.0["sampling"]
    );
}

/// A run under the emulate engine that must succeed. QEMU 7.2's plugin
/// core sometimes aborts in a run of thousands of short-lived threads
/// ("qemu_plugin_vcpu_mem_cb: code should not be reached": the memory
/// callbacks of an earlier translation block left in place, which later
/// QEMU versions clear): twice in about twenty runs of the suite, never in
/// 135 runs of the command alone. Such a run is made once more, and the
/// test says so on stderr; any other failure fails it.
fn count_ok_despite_qemus_plugin_bug(exe: &Path, args: &[String]) -> Report {
    let run = count_with("emulate", exe, args, &[]);
    if run.code != 0
        && run
            .stderr
            .contains("qemu_plugin_vcpu_mem_cb: code should not be reached")
    {
        eprintln!(
            "NOTE {exe:?} {args:?}: QEMU 7.2 aborted in its plugin core (a QEMU bug, see \
             README, Limits); running it once more"
        );
        return count_ok_with("emulate", exe, args, &[]);
    }
    ok_report(run, exe, args)
}

/// unaligned_atomic.c: QEMU runs an unaligned atomic alone (the other
/// threads stopped) when the program has more than one thread, leaving the
/// block it was in half-way. The emulate engine counted that block whole
/// and then its rest again from the atomic on (with 2 threads, 6,000 FLOP
/// for 4,000 and `work`'s instructions 28,024 for 16,024); now it counts
/// what ran, and both engines give `work` the same row.
#[test]
fn a_block_left_at_an_unaligned_atomic_counts_what_ran() {
    let exe = build("unaligned_atomic.c", &["-O2", "-pthread"]);
    let n = 1000u64;
    let mut f = Failures::default();
    for threads in [1u64, 2, 4] {
        let args = [threads.to_string(), n.to_string()];
        let mut rows = Vec::new();
        for engine in ["native", "emulate"] {
            let what = format!("{threads} threads under {engine}");
            let run = count_with(engine, &exe, &args, &[]);
            let Some(r) = run.report.filter(|_| run.code == 0) else {
                f.push(format!("{what}: exit {}\n{}", run.code, run.stderr));
                continue;
            };
            if run.stdout != format!("{}\n", threads * n) {
                f.push(format!("{what}: the program printed {:?}", run.stdout));
            }
            let e = Expect::new()
                .flop("fp64", 2 * threads * n)
                .op("add", threads * n)
                .op("mul", threads * n);
            f.expect(&what, &r, &e);
            let Some(work) = r.function("work") else {
                f.push(format!("{what}: no row of work"));
                continue;
            };
            let loops: Vec<_> = r.0["loops"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|l| l["function"] == "work")
                .map(|l| (l["entries"].as_u64(), l["iterations"].as_u64()))
                .collect();
            rows.push((
                work["instructions"].as_u64(),
                work["flop"]["total"].as_u64(),
                work["bytes"].to_string(),
                loops,
            ));
        }
        if let [a, b] = &rows[..] {
            if a != b {
                f.push(format!(
                    "{threads} threads: work's (instructions, FLOP, bytes, loops) differ: native {a:?}, emulate {b:?}"
                ));
            }
        }
    }
    f.assert_none();
}

/// OpenBLAS linked into the program (attribution/gemm.c) starts its worker
/// threads in its library constructor, before main. The native engine's
/// constructor runs first now (`-z initfirst`), so those threads start
/// from the code cache: one cblas_dgemm on 2 threads counts what it
/// counts on 1, under both engines, with both threads' rows holding work,
/// and at least the product and alpha's 2 n^3 + n^2. Before, the workers
/// started before the take-over and ran uncounted: 2,113,540 FLOP of
/// 4,227,076 at n = 128, and the report said `complete: true`.
#[test]
fn threads_a_library_starts_in_its_constructor_are_counted() {
    let exe = build(
        "attribution/gemm.c",
        &["-O2", "-Wl,--no-as-needed", "-lopenblas"],
    );
    let n = 128u64;
    let mut f = Failures::default();
    for engine in ["emulate", "native"] {
        let total = |threads: &str| {
            let r = count_ok_with(
                engine,
                &exe,
                &[n.to_string()],
                &[("OPENBLAS_NUM_THREADS", threads)],
            );
            (r.flop("total"), thread_totals(&r))
        };
        let ((one, _), (two, rows)) = (total("1"), total("2"));
        if one != two {
            f.push(format!("{engine}: {one} FLOP on 1 thread, {two} on 2"));
        }
        if two < 2 * n * n * n + n * n {
            f.push(format!("{engine}: {two} FLOP, under 2 n^3 + n^2"));
        }
        if rows.iter().filter(|t| **t > 0).count() < 2 {
            f.push(format!(
                "{engine}: thread rows {rows:?}: the worker's work is missing"
            ));
        }
    }
    f.assert_none();
}
