//! `flopscope bench`: the machine's measured ceilings — FLOP peaks, STREAM
//! bandwidth per cache level and DRAM, Linpack-style GEMM — optionally saved
//! as a machine profile for `count --machine`.

use super::peak::OverrideArgs;
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use flopscope_bench::spec::StreamOp;
use flopscope_bench::team::Plan;
use flopscope_bench::{affinity, flops, gemm, memory, progress};
use flopscope_machine::{render, theoretical_peak, Isa, Machine, MachineProfile, Peak};
use flopscope_model::Precision;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  flopscope bench                          # flops, memory and gemm, under a minute\n  \
flopscope bench --save machine.json      # then: flopscope count --machine machine.json -- ./app\n  \
flopscope bench flops --threads 1\n  \
flopscope bench memory --size 1GiB --kernel triad\n  \
flopscope bench gemm --n 1024,2048 --format json"
)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: Option<BenchWhat>,
    /// Save the ceilings with the machine's metadata to FILE (JSON, for
    /// `count --machine`), and keep them as this machine's profile, which
    /// `count` then uses without --machine.
    #[arg(long, value_name = "FILE", global = true)]
    pub save: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table, global = true)]
    pub format: BenchFormat,
    /// Threads of the all-core measurements, each pinned to its own core (default: one per physical core).
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Timed repetitions of each measurement (min, median and max are reported).
    #[arg(long, value_name = "N", default_value_t = 5, global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Seconds each repetition lasts.
    #[arg(long, value_name = "S", default_value_t = 0.05, global = true)]
    pub rep_seconds: f64,
    #[command(flatten)]
    pub overrides: OverrideArgs,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Measured FLOP peak for each ISA and precision the CPU has, on 1 core and all cores.
    Flops(FlopsArgs),
    /// STREAM copy, scale, add, triad over working sets in each cache level and DRAM, all cores.
    Memory(MemoryArgs),
    /// Linpack-style DGEMM and SGEMM (faer), GFLOP/s = 2 n^3 / t and percent of peak.
    Gemm(GemmArgs),
}

#[derive(Args, Debug, Default)]
pub struct FlopsArgs {
    /// Only kernels whose name contains this (repeatable), e.g. avx512_fp64.
    #[arg(long, value_name = "NAME")]
    pub kernel: Vec<String>,
}

#[derive(Args, Debug, Default)]
pub struct MemoryArgs {
    /// Working-set size of all arrays of all threads (repeatable), e.g. 1GiB; default: a sweep over every level.
    #[arg(long, value_name = "SIZE", value_parser = memory::parse_bytes)]
    pub size: Vec<u64>,
    /// Only these operations at the given sizes (repeatable).
    #[arg(long, value_enum)]
    pub kernel: Vec<OpArg>,
    /// Vector width of the kernels (default: the widest the CPU has).
    #[arg(long, value_enum)]
    pub isa: Option<IsaArg>,
}

#[derive(Args, Debug, Default)]
pub struct GemmArgs {
    /// Matrix sizes, comma-separated.
    #[arg(long, value_name = "N", value_delimiter = ',', default_values_t = [512, 1024, 2048])]
    pub n: Vec<usize>,
    /// Precisions, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [PrecisionArg::Fp64, PrecisionArg::Fp32])]
    pub precision: Vec<PrecisionArg>,
}

#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum BenchFormat {
    #[default]
    Table,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum OpArg {
    Copy,
    Scale,
    Add,
    Triad,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum IsaArg {
    Scalar,
    Sse,
    Avx,
    Avx512,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum PrecisionArg {
    Fp64,
    Fp32,
}

impl From<OpArg> for StreamOp {
    fn from(o: OpArg) -> StreamOp {
        match o {
            OpArg::Copy => StreamOp::Copy,
            OpArg::Scale => StreamOp::Scale,
            OpArg::Add => StreamOp::Add,
            OpArg::Triad => StreamOp::Triad,
        }
    }
}

impl From<IsaArg> for Isa {
    fn from(i: IsaArg) -> Isa {
        match i {
            IsaArg::Scalar => Isa::Scalar,
            IsaArg::Sse => Isa::Sse,
            IsaArg::Avx => Isa::Avx,
            IsaArg::Avx512 => Isa::Avx512,
        }
    }
}

impl From<PrecisionArg> for Precision {
    fn from(p: PrecisionArg) -> Precision {
        match p {
            PrecisionArg::Fp64 => Precision::Fp64,
            PrecisionArg::Fp32 => Precision::Fp32,
        }
    }
}

/// The best-ISA FMA kernels for `precisions`, for the GEMM's "percent of measured peak".
fn best_peak_kernels(machine: &Machine, precisions: &[Precision]) -> Vec<String> {
    precisions
        .iter()
        .filter_map(|p| {
            flops::peak_kernels(machine)
                .into_iter()
                .filter(|k| k.precision == *p)
                .max_by_key(|k| k.isa)
                .map(|k| k.name.clone())
        })
        .collect()
}

pub fn run(a: BenchArgs) -> Result<i32> {
    if !(a.rep_seconds > 0.0 && a.rep_seconds <= 10.0) {
        anyhow::bail!(
            "--rep-seconds must be between 0 and 10, not {}",
            a.rep_seconds
        );
    }
    let overrides = a.overrides.overrides()?;
    let machine = Machine::detect();
    let theoretical: Peak = theoretical_peak(&machine, &overrides);
    let all = a
        .threads
        .map_or_else(affinity::allowed_cores, |t| t as usize);
    let plan = Plan {
        reps: a.reps as usize,
        rep_seconds: a.rep_seconds,
    };
    let mut profile = MachineProfile::new(
        machine.clone(),
        theoretical.clone(),
        std::env::args().collect(),
    );
    let mut progress = progress::Stderr::if_terminal();
    let (do_flops, do_memory, do_gemm) = match &a.what {
        None => (true, true, true),
        Some(BenchWhat::Flops(_)) => (true, false, false),
        Some(BenchWhat::Memory(_)) => (false, true, false),
        Some(BenchWhat::Gemm(_)) => (false, false, true),
    };
    let gemm_args = match &a.what {
        Some(BenchWhat::Gemm(g)) => GemmArgs {
            n: g.n.clone(),
            precision: g.precision.clone(),
        },
        _ => GemmArgs {
            n: vec![512, 1024, 2048],
            precision: vec![PrecisionArg::Fp64, PrecisionArg::Fp32],
        },
    };
    let gemm_precisions: Vec<Precision> = gemm_args.precision.iter().map(|p| (*p).into()).collect();

    if do_flops || do_gemm {
        let (threads, only) = match &a.what {
            Some(BenchWhat::Flops(f)) => {
                let mut t = vec![1, all];
                t.dedup();
                (t, f.kernel.clone())
            }
            // `bench gemm` alone: the all-core peak of the kernels it compares with.
            Some(BenchWhat::Gemm(_)) => (vec![all], best_peak_kernels(&machine, &gemm_precisions)),
            _ => {
                let mut t = vec![1, all];
                t.dedup();
                (t, Vec::new())
            }
        };
        let opts = flops::FlopsOptions {
            threads,
            plan,
            only,
        };
        profile.flops = flops::bench(&machine, &theoretical, &opts, progress.as_mut());
    }
    if do_memory {
        let m = match &a.what {
            Some(BenchWhat::Memory(m)) => MemoryArgs {
                size: m.size.clone(),
                kernel: m.kernel.clone(),
                isa: m.isa,
            },
            _ => MemoryArgs::default(),
        };
        let opts = memory::MemoryOptions {
            threads: all,
            plan,
            sizes: m.size,
            ops: m.kernel.into_iter().map(StreamOp::from).collect(),
            isa: m.isa.map(Isa::from),
        };
        profile.bandwidth = memory::bench(&machine, &opts, progress.as_mut());
        profile.bytes_convention = memory::BYTES_CONVENTION.into();
    }
    if do_gemm {
        let opts = gemm::GemmOptions {
            sizes: gemm_args.n.clone(),
            precisions: gemm_precisions,
            threads: all,
            reps: (a.reps as usize).min(3),
        };
        profile.gemm = gemm::bench(&opts, &theoretical, &profile.flops, progress.as_mut())?;
    }
    progress.finish();

    let cpus = affinity::pick_cpus(all);
    profile.notes = vec![
        format!("all-core runs: {} threads pinned to CPUs {:?} (one per physical core first)", cpus.len(), cpus),
        format!(
            "each figure: {} timed repetitions of about {} s after calibration; min, median and max over them",
            plan.reps, plan.rep_seconds
        ),
        "FLOP and bytes per iteration of every kernel from data/kernels.toml, checked under the emulate engine by the test suite"
            .into(),
        format!(
            "flopscope {} built {}; kernels in inline assembly, GEMM by {}",
            env!("CARGO_PKG_VERSION"),
            if cfg!(debug_assertions) { "without optimisation (debug): GEMM figures are not representative" } else { "optimised (release)" },
            gemm::LIBRARY
        ),
        format!("percentages of theoretical use: {}", theoretical.assumptions.join("; ")),
    ];

    match a.format {
        BenchFormat::Table => print!("{}", render::profile_text(&profile)),
        BenchFormat::Json => print!("{}", profile.to_json()),
    }
    if let Some(path) = &a.save {
        profile
            .save(path)
            .with_context(|| format!("saving the machine profile to {}", path.display()))?;
        eprintln!("flopscope: wrote {}", path.display());
        // Kept under the machine's identity too: `count` on this machine
        // (or one of the same kind) compares with it without --machine.
        match flopscope_machine::store::keep_profile(&profile) {
            Ok(kept) => eprintln!(
                "flopscope: kept as this machine's profile in {} (count and roofline use it from now on)",
                kept.display()
            ),
            Err(e) => eprintln!("flopscope: warning: the profile was not kept for later runs: {e}"),
        }
    }
    Ok(0)
}
