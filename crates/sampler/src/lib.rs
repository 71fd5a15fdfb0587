//! Time per function by sampling, where hardware counters are missing (a VM
//! without a PMU) or refused (`kernel.perf_event_paranoid` 3, no root): the
//! program counter, sampled on CPU-time timers.
//!
//! One crate, two sides:
//! - the preload library (`--features preload`, a cdylib loaded with
//!   `LD_PRELOAD`; module `preload`): with [`DIR_ENV`] set, every thread of
//!   the process (and of its forked children and exec'd programs, which
//!   inherit the environment) is sampled every [`HZ_ENV`]-th of a second of
//!   its CPU time, into `samples.<pid>` and `maps.<pid>` in that directory
//!   (layout: [`mod@format`]);
//! - the reader, for the CLI: [`read_dir`] gives one [`ProcessSamples`] per
//!   process image, with counts per runtime address; mapping addresses to
//!   functions is the caller's job (the maps text gives load addresses).
//!
//! What the sampler does to the program: one timer per thread (Linux POSIX
//! CPU-time timers, `SIGEV_THREAD_ID`) sending SIGPROF, a handler for
//! SIGPROF (SA_RESTART), `pthread_create` interposed (one malloc per thread,
//! no frame left on its stack), a fork handler. A program that installs its
//! own SIGPROF handler takes the sampler's signals from then on (sampling
//! stops; [`ProcessSamples::handler_replaced`] says so); a SIGPROF that is
//! not the sampler's gets its default action (termination), as without it.
//!
//! ```
//! use std::path::Path;
//! # let tmp = tempfile::tempdir().unwrap();
//! # let dir: &Path = tmp.path();
//! // After running the program with LD_PRELOAD=<the library> and
//! // FLOPSCOPE_SAMPLE_DIR=<dir> (here: nothing ran, so no process).
//! for p in flopscope_sampler::read_dir(dir)? {
//!     let seconds = p.total as f64 * p.interval_s;
//!     println!("pid {} image {}: {seconds:.3} s of CPU in {} signals", p.pid, p.image, p.signals);
//!     for (&address, &count) in &p.samples {
//!         let _share = count as f64 / p.total as f64; // of this process's CPU time
//!         let _ = address; // a runtime address: see p.maps_text
//!     }
//! }
//! # Ok::<(), flopscope_sampler::SampleError>(())
//! ```

pub mod format;
mod read;
mod text;

#[cfg(all(feature = "preload", target_os = "linux", target_arch = "x86_64"))]
mod preload;

pub use read::{read_dir, ProcessSamples, SampleError};

/// The directory to write into; without it the preload library does nothing.
pub const DIR_ENV: &str = "FLOPSCOPE_SAMPLE_DIR";
/// Samples per second of each thread's CPU time (default [`DEFAULT_HZ`]).
pub const HZ_ENV: &str = "FLOPSCOPE_SAMPLE_HZ";
/// Records each process's file has room for (default [`DEFAULT_CAPACITY`];
/// the file is sparse: disk is used only for records written).
pub const CAPACITY_ENV: &str = "FLOPSCOPE_SAMPLE_CAPACITY";

pub const DEFAULT_HZ: u64 = 1000;
/// 2^23 records (64 MiB of address space): at 1000 Hz on a 250 Hz kernel
/// tick (one record per tick), 9 hours of one busy thread.
pub const DEFAULT_CAPACITY: u64 = 1 << 23;
