use flopscope_bench::buffer::{value_at, Buffer};
use flopscope_bench::kernels::KernelFn;
use flopscope_bench::spec::{self, Kind, StreamOp};
use flopscope_bench::team::Plan;
use flopscope_bench::{flops, gemm, memory, progress::Silent};
use flopscope_machine::{theoretical_peak, Machine, Overrides};
use flopscope_model::Precision;

fn machine() -> Machine {
    Machine::detect()
}

#[test]
fn stream_kernels_compute_their_formula_and_stop_at_n() {
    let m = machine();
    let n = 96;
    for k in spec::all()
        .iter()
        .filter(|k| k.kind == Kind::Stream && k.runs_on(&m.flags))
    {
        let KernelFn::Stream(f) = k.implementation() else {
            unreachable!()
        };
        let mut a = Buffer::new(n + 32, 0, -4.0);
        let b = Buffer::new(n + 32, 5, 1.0);
        let c = Buffer::new(n + 32, 10, 2.0);
        // SAFETY: the CPU has the kernel's flags; arrays hold n + 32 aligned elements.
        unsafe { f(a.as_mut_ptr(), b.as_ptr(), c.as_ptr(), n) };
        let want = |i: usize| {
            let (b, c) = (value_at(1.0, i), value_at(2.0, i));
            match k.op.unwrap() {
                StreamOp::Copy => b,
                StreamOp::Scale => 3.0 * b,
                StreamOp::Add => b + c,
                StreamOp::Triad => b + 3.0 * c,
            }
        };
        let a = a.as_mut_slice();
        for (i, x) in a[..n].iter().enumerate() {
            assert_eq!(*x, want(i), "{} at {i}", k.name);
        }
        assert!(
            (n..n + 32).all(|i| a[i] == value_at(-4.0, i)),
            "{} wrote past n",
            k.name
        );
    }
}

#[test]
fn peak_kernels_run_and_the_runner_reports_gflops() {
    let m = machine();
    let plan = Plan {
        reps: 2,
        rep_seconds: 0.002,
    };
    let ks = flops::peak_kernels(&m);
    assert!(!ks.is_empty());
    for k in &ks {
        let g = flops::measure(k, &[flopscope_bench::affinity::pick_cpus(1)[0]], plan);
        assert_eq!(g.len(), 2);
        assert!(g.iter().all(|x| *x > 0.1), "{}: {g:?}", k.name);
    }
    if m.has_flag("fma") {
        assert!(ks.iter().all(|k| k.is_fma_peak()));
    }
}

#[test]
fn flops_bench_states_percent_of_theoretical() {
    let m = machine();
    let peak = theoretical_peak(&m, &Overrides::default());
    let opts = flops::FlopsOptions {
        threads: vec![1],
        plan: Plan {
            reps: 1,
            rep_seconds: 0.002,
        },
        only: vec!["sse_fp64".into()],
    };
    let rows = flops::bench(&m, &peak, &opts, &mut Silent);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].percent_of_theoretical.is_some());
}

#[test]
fn memory_bench_at_a_given_size() {
    let m = machine();
    let opts = memory::MemoryOptions {
        threads: 1,
        plan: Plan {
            reps: 2,
            rep_seconds: 0.002,
        },
        sizes: vec![64 * 1024],
        ops: vec![StreamOp::Triad, StreamOp::Copy],
        isa: None,
    };
    let rows = memory::bench(&m, &opts, &mut Silent);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert!(
            r.gbs.min > 0.0 && r.gbs.min <= r.gbs.median && r.gbs.median <= r.gbs.max,
            "{r:?}"
        );
        assert!(
            r.working_set_bytes <= 64 * 1024 && r.working_set_bytes > 60 * 1024,
            "{r:?}"
        );
        assert!(!r.nontemporal);
    }
}

#[test]
fn gemm_of_a_small_matrix() {
    let g = gemm::measure(Precision::Fp64, 64, 1, 2).unwrap();
    assert_eq!(g.len(), 2);
    assert!(g.iter().all(|x| *x > 0.01), "{g:?}");
    assert!(gemm::measure(Precision::Bf16, 64, 1, 1)
        .unwrap_err()
        .to_string()
        .contains("bf16"));
}

#[test]
fn teams_of_several_threads_share_each_measurement() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let cpus = flopscope_bench::affinity::pick_cpus(2);
    // More threads than CPUs: the spinning barrier must still let everyone through.
    let team: Vec<usize> = cpus
        .iter()
        .copied()
        .chain(cpus.iter().copied())
        .chain([cpus[0]])
        .collect();
    let work_done = AtomicU64::new(0);
    let plan = Plan {
        reps: 3,
        rep_seconds: 0.001,
    };
    let timed = flopscope_bench::team::run_each(
        &team,
        plan,
        2,
        |tid| tid as u64,
        |_, _, count| {
            work_done.fetch_add(count, Ordering::Relaxed);
            std::hint::black_box(count);
        },
        |_| {},
    );
    assert_eq!(timed.len(), 2);
    assert!(
        timed.iter().all(|t| t.seconds.len() == 3 && t.count >= 1),
        "{timed:?}"
    );
    assert!(work_done.load(Ordering::Relaxed) >= team.len() as u64 * 3);
}
