//! The machine benchmarks behind `flopscope bench`: measured FLOP peaks,
//! STREAM bandwidth per cache level and DRAM, and a Linpack-style GEMM.
//!
//! - [`spec`]: every kernel's declaration from `data/kernels.toml` (FLOP and
//!   bytes per iteration, the ISA flags it needs) — the one source the
//!   benchmarks divide by and the accuracy test checks.
//! - [`kernels`]: the implementations, in `asm!` (exactly the declared
//!   instructions at every optimisation level).
//! - [`flops::bench`], [`memory::bench`], [`gemm::bench`]: the three
//!   benchmarks; each returns the ceilings of a
//!   [`flopscope_machine::MachineProfile`].
//! - [`team`]: pinned threads in lockstep, calibrated and timed
//!   (min/median/max over repetitions); [`progress`]: the progress line.
//!
//! ```no_run
//! use flopscope_bench::{flops, progress::Silent, team::Plan};
//! use flopscope_machine::{theoretical_peak, Machine, Overrides};
//! let m = Machine::detect();
//! let peak = theoretical_peak(&m, &Overrides::default());
//! let opts = flops::FlopsOptions { threads: vec![1], plan: Plan::default(), only: vec!["avx_fp64".into()] };
//! for c in flops::bench(&m, &peak, &opts, &mut Silent) {
//!     println!("{} {:.1} GFLOP/s", c.kernel, c.gflops.median);
//! }
//! ```

pub mod affinity;
pub mod buffer;
pub mod flops;
pub mod gemm;
pub mod kernels;
pub mod memory;
pub mod progress;
pub mod spec;
pub mod team;
