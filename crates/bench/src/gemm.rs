//! `bench gemm`: Linpack-style DGEMM and SGEMM through faer's matmul,
//! GFLOP/s = 2 n^3 / t, on a rayon pool pinned one thread per core.

use crate::progress::Progress;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use flopscope_machine::{FlopsMeasurement, GemmMeasurement, Peak, Spread};
use flopscope_model::Precision;
use std::time::Instant;

/// The library that runs the GEMM, as recorded with each result.
pub const LIBRARY: &str = "faer 0.24 matmul";

/// What to measure.
#[derive(Debug, Clone)]
pub struct GemmOptions {
    pub sizes: Vec<usize>,
    pub precisions: Vec<Precision>,
    pub threads: usize,
    /// Timed repetitions (after one untimed).
    pub reps: usize,
}

impl Default for GemmOptions {
    fn default() -> GemmOptions {
        GemmOptions {
            sizes: vec![512, 1024, 2048],
            precisions: vec![Precision::Fp64, Precision::Fp32],
            threads: 1,
            reps: 3,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GemmError {
    #[error("cannot start {threads} GEMM threads: {source}")]
    Pool {
        threads: usize,
        source: rayon::ThreadPoolBuildError,
    },
    #[error("GEMM supports fp64 and fp32, not {0}")]
    Precision(&'static str),
}

/// Seconds of each of `reps` timed products C = A B of size `n` (after one untimed).
fn time_matmul<T: faer::traits::ComplexField + Copy>(
    n: usize,
    reps: usize,
    par: Par,
    value: impl Fn(usize, usize) -> T,
) -> Vec<f64> {
    let a = Mat::<T>::from_fn(n, n, &value);
    let b = Mat::<T>::from_fn(n, n, |i, j| value(j, i));
    let mut c = Mat::<T>::zeros(n, n);
    let one = value(usize::MAX, usize::MAX);
    let mut out = Vec::with_capacity(reps);
    for rep in 0..=reps {
        let t = Instant::now();
        matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), one, par);
        if rep > 0 {
            out.push(t.elapsed().as_secs_f64());
        }
    }
    std::hint::black_box(&c);
    out
}

/// GFLOP/s of one GEMM of size `n`, one figure per timed repetition.
pub fn measure(p: Precision, n: usize, threads: usize, reps: usize) -> Result<Vec<f64>, GemmError> {
    let cpus = crate::affinity::pick_cpus(threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cpus.len())
        .start_handler({
            let cpus = cpus.clone();
            move |i| {
                crate::affinity::pin_current_thread(cpus[i % cpus.len()]);
            }
        })
        .build()
        .map_err(|source| GemmError::Pool {
            threads: cpus.len(),
            source,
        })?;
    let par = if cpus.len() == 1 {
        Par::Seq
    } else {
        Par::rayon(cpus.len())
    };
    // Entries in [0.5, 1.5): no denormals, no overflow; `value(MAX, MAX)` is alpha = 1.
    let seconds = pool.install(|| match p {
        Precision::Fp64 => Ok(time_matmul(n, reps, par, |i, j| {
            if i == usize::MAX {
                1.0f64
            } else {
                0.5 + ((i * 7 + j * 13) % 17) as f64 / 17.0
            }
        })),
        Precision::Fp32 => Ok(time_matmul(n, reps, par, |i, j| {
            if i == usize::MAX {
                1.0f32
            } else {
                0.5 + ((i * 7 + j * 13) % 17) as f32 / 17.0
            }
        })),
        other => Err(GemmError::Precision(other.key())),
    })?;
    let flop = 2.0 * (n as f64).powi(3);
    Ok(seconds.iter().map(|s| flop / s / 1e9).collect())
}

/// Measures each size and precision, with percentages of the theoretical
/// peak and of the measured FMA peak (from `measured`, same precision and threads).
pub fn bench(
    opts: &GemmOptions,
    theoretical: &Peak,
    measured: &[FlopsMeasurement],
    progress: &mut dyn Progress,
) -> Result<Vec<GemmMeasurement>, GemmError> {
    let threads = crate::affinity::pick_cpus(opts.threads).len();
    progress.add(opts.sizes.len() * opts.precisions.len());
    let mut out = Vec::new();
    for &p in &opts.precisions {
        let theo = theoretical
            .best(p)
            .map(|r| r.gflops_per_core * threads as f64)
            .filter(|g| *g > 0.0);
        let fma = measured
            .iter()
            .filter(|f| f.precision == p && f.threads as usize == threads)
            .map(|f| f.gflops.median)
            .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))));
        for &n in &opts.sizes {
            progress.step(&format!(
                "gemm: {}gemm n={n} on {threads} threads",
                if p == Precision::Fp64 { "d" } else { "s" }
            ));
            let gflops = Spread::of(&measure(p, n, threads, opts.reps)?);
            out.push(GemmMeasurement {
                precision: p,
                n: n as u32,
                threads: threads as u32,
                gflops,
                library: LIBRARY.into(),
                percent_of_theoretical: theo.map(|t| 100.0 * gflops.median / t),
                percent_of_measured_peak: fma.map(|m| 100.0 * gflops.median / m),
            });
        }
    }
    Ok(out)
}
