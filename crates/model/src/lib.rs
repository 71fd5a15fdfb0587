//! The flopscope output model: one [`Report`] shape for every engine and importer.
//!
//! Engines that instrument (emulate, native) accumulate exact [`Counts`] and
//! turn them into a [`Summary`]; engines that read hardware counters fill a
//! [`Summary`] directly and leave out what their events cannot tell.
//!
//! ```
//! use flopscope_model::{Counts, FlopOp, FpKey, FpTally, OpClass, Precision, Report, Summary};
//! let mut c = Counts::default();
//! // 1000 executions of vfmadd231pd ymm: 4 lanes x 2 FLOP each.
//! c.fp_instructions.insert(FpKey { precision: Precision::Fp64, width_bits: 256, lanes: 4, op: OpClass::Fma, masked: false }, FpTally { count: 1000, flop: 8000 });
//! c.flop.insert((Precision::Fp64, FlopOp::Fma), 8000);
//! let mut r = Report::new("emulate", vec!["./app".into()]);
//! r.summary = Summary::from_counts(&c);
//! assert_eq!(r.summary.flop.total, 8000);
//! assert_eq!(r.summary.fp_elements["elements_fp_double_4"], 1000);
//! ```

pub mod attribution;
pub mod ceilings;
pub mod counts;
pub mod diff;
pub mod diff_where;
pub mod engine;
pub mod io;
pub mod machine_record;
pub mod markdown;
pub mod matching;
pub mod merge;
pub mod render;
pub mod render_where;
pub mod report;
pub mod rows_json;
pub mod sde_mix;
pub mod started;
pub mod status;
pub mod tally_map;
pub mod times;
pub mod timing;
pub mod units;
pub mod vocab;

pub use attribution::{FunctionRow, Inclusive, LineRow, LoopRow, Sampling};
pub use ceilings::{BandwidthCeiling, Ceilings, ComputeCeiling};
pub use counts::{Counts, FpKey, FpTally};
pub use engine::{Engine, EngineError};
pub use io::{write_atomic, write_atomic_with, IoError};
pub use machine_record::MachineRecord;
pub use report::{
    width_key, ByteTotals, ExitStatus, FlopTotals, FpInstructionRow, Intensity, MemAccesses,
    PeakRef, RankInfo, Region, Report, Summary, ThreadRow, WidthRow, SCHEMA,
};
pub use tally_map::TallyMap;
pub use units::{gflops, intensity, Bytes, Flop, Seconds};
pub use vocab::{FlopOp, OpClass, Precision};
