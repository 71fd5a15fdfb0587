//! `bench flops`: the measured FLOP peak of each ISA and precision the CPU
//! has, on one core and on all cores.

use crate::kernels::KernelFn;
use crate::progress::Progress;
use crate::spec::{self, KernelSpec, Kind};
use crate::team::{self, Plan};
use flopscope_machine::{FlopsMeasurement, Machine, Peak, Spread};

/// What to measure.
#[derive(Debug, Clone)]
pub struct FlopsOptions {
    /// Thread counts to measure at (each thread pinned to its own core).
    pub threads: Vec<usize>,
    pub plan: Plan,
    /// Only kernels whose name contains one of these (all when empty).
    pub only: Vec<String>,
}

/// The peak kernels this CPU runs: the FMA kernels where it has FMA, the
/// add+multiply kernels where it has not, each one the CPU has the ISA for.
pub fn peak_kernels(machine: &Machine) -> Vec<&'static KernelSpec> {
    let fma = machine.has_flag("fma");
    spec::all()
        .iter()
        .filter(|k| k.kind == Kind::Peak && k.is_fma_peak() == fma && k.runs_on(&machine.flags))
        .collect()
}

/// GFLOP/s of `k` on one pinned thread per CPU of `cpus`, one figure per repetition.
pub fn measure(k: &KernelSpec, cpus: &[usize], plan: Plan) -> Vec<f64> {
    let KernelFn::Peak(f) = k.implementation() else {
        panic!("{} is not a peak kernel", k.name)
    };
    let timed = team::run(
        cpus,
        plan,
        |_| (),
        // SAFETY: `peak_kernels` only offers kernels whose required flags the CPU has.
        |_, iters| unsafe { f(iters) },
    );
    let flop = k.flop as f64 * timed.count as f64 * cpus.len() as f64;
    timed.seconds.iter().map(|s| flop / s / 1e9).collect()
}

/// Measures every peak kernel of this CPU (filtered by `opts.only`) at each
/// thread count, with the percentage of the theoretical peak.
pub fn bench(
    machine: &Machine,
    theoretical: &Peak,
    opts: &FlopsOptions,
    progress: &mut dyn Progress,
) -> Vec<FlopsMeasurement> {
    let kernels: Vec<_> = peak_kernels(machine)
        .into_iter()
        .filter(|k| opts.only.is_empty() || opts.only.iter().any(|o| k.name.contains(o.as_str())))
        .collect();
    progress.add(kernels.len() * opts.threads.len());
    let mut out = Vec::new();
    for &threads in &opts.threads {
        let cpus = crate::affinity::pick_cpus(threads);
        for k in &kernels {
            progress.step(&format!(
                "flops: {} on {} thread{}",
                k.name,
                cpus.len(),
                if cpus.len() == 1 { "" } else { "s" }
            ));
            let gflops = Spread::of(&measure(k, &cpus, opts.plan));
            let percent_of_theoretical = theoretical
                .row(k.isa, k.precision)
                .filter(|r| r.gflops_per_core > 0.0)
                .map(|r| 100.0 * gflops.median / (r.gflops_per_core * cpus.len() as f64));
            out.push(FlopsMeasurement {
                kernel: k.name.clone(),
                isa: k.isa,
                precision: k.precision,
                threads: cpus.len() as u32,
                gflops,
                percent_of_theoretical,
            });
        }
    }
    out
}
