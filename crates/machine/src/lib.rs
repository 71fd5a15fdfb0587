//! The machine's ceilings: what the CPU is, what it could do in theory, and
//! the file that records what it did in practice.
//!
//! - [`Machine`]: vendor, family/model, brand, sockets/cores/threads, FP ISA
//!   flags, frequencies and caches, from CPUID, `/proc/cpuinfo` and sysfs
//!   ([`Machine::detect`]; it measures the clock with a dependent-add loop
//!   when nothing reports a maximum, as in virtual machines).
//! - [`uarch::Table`]: FLOP per cycle per core by microarchitecture, vector
//!   width ([`Isa`]) and precision, parsed from `data/uarch.toml`.
//! - [`theoretical_peak`] -> [`Peak`]: table x cores x GHz with [`Overrides`],
//!   each assumption stated; [`peak_ref`] makes the `peak` of a report and
//!   [`ceilings`] the roofline's theoretical roofs.
//! - [`record()`](record::record): the machine record a report carries.
//! - [`store`]: the machine's identity, its saved profile found by it, and
//!   its measured clock kept between runs (figures that do not move).
//! - [`MachineProfile`]: measured ceilings (FLOP, bandwidth, GEMM) with the
//!   machine and its theoretical peak, saved as `machine.json`;
//!   [`MachineProfile::peak_ref`] and [`MachineProfile::ceilings`] give
//!   `count --machine` and the roofline its measured figures.
//!
//! ```
//! use flopscope_machine::{theoretical_peak, peak_ref, Isa, Machine, Overrides};
//! use flopscope_model::Precision;
//! // A 2-core AMD Genoa (Zen 4) guest at 2.5 GHz.
//! let mut m = Machine::from_sources(None, None, std::path::Path::new("/nonexistent"));
//! m.vendor = flopscope_machine::Vendor::Amd;
//! (m.family, m.model, m.cores, m.sockets, m.threads) = (0x19, 0x11, 2, 1, 2);
//! m.flags = ["sse2", "avx", "fma", "avx2", "avx512f"].map(String::from).to_vec();
//! let peak = theoretical_peak(&m, &Overrides { freq_ghz: Some(2.5), ..Default::default() });
//! // Zen 4 runs 512-bit FMA as two halves: 16 fp64 FLOP/cycle, as with AVX2.
//! let row = peak.row(Isa::Avx512, Precision::Fp64).unwrap();
//! assert_eq!(row.flop_per_cycle, 16);
//! assert_eq!(row.gflops_machine, 16.0 * 2.5 * 2.0);
//! assert_eq!(peak_ref(&peak).gflops_fp32, 32.0 * 2.5 * 2.0);
//! ```

pub mod cpuid;
pub mod detect;
pub mod error;
pub mod freq;
pub mod isa;
pub mod peak;
pub mod procfs;
pub mod profile;
pub mod record;
pub mod render;
pub mod store;
pub mod sysfs;
pub mod uarch;

pub use detect::{Machine, FP_FLAGS};
pub use error::MachineError;
pub use freq::{measure_mhz, FreqSource, Frequencies};
pub use isa::Isa;
pub use peak::{
    ceilings, peak_ref, theoretical_peak, Overrides, Peak, PeakDocument, PeakRow, PEAK_SCHEMA,
};
pub use profile::{
    BandwidthMeasurement, FlopsMeasurement, GemmMeasurement, MachineProfile, Spread, PROFILE_SCHEMA,
};
pub use sysfs::CacheLevel;
pub use uarch::{uarch_named, SetAside, Uarch, Vendor};
