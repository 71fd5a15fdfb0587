//! Where the work is: per function, loop and source line
//! (shared/reference/report-schema.md, attribution section).
//!
//! Every row carries the same counts as the totals (a flattened
//! [`Summary`]). Counts are exclusive for functions and lines: over
//! `functions` (and over `lines`) they sum to the report's totals exactly.
//! A loop's counts include its nested loops (its `self_counts` do not).

use crate::report::{Intensity, Summary};
use serde::{Deserialize, Serialize};

/// The module of code outside every file mapping (a JIT's, the vDSO); a
/// function there that no perf map names is named by its page,
/// `[anonymous]+0x7f3a2c000`.
pub const ANONYMOUS_MODULE: &str = "[anonymous]";

/// One function's counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionRow {
    /// Demangled name; `module+0x1a2b` for code without a symbol.
    pub name: String,
    /// The executable or shared library holding it (path as mapped).
    pub module: String,
    /// Its start address as loaded (informational).
    pub address: String,
    /// Where it is declared (DWARF), when known.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The functions this one's code was inlined into, when it was (its
    /// counts are the inlined copies').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inlined_into: Vec<String>,
    #[serde(flatten)]
    pub summary: Summary,
    /// With its callees, where known.
    #[serde(default)]
    pub inclusive: Option<Inclusive>,
    /// Time from the sampled run, and the samples it rests on.
    pub time_s: Option<f64>,
    pub samples: Option<u64>,
    pub gflops: Option<f64>,
    pub arithmetic_intensity: Intensity,
}

impl FunctionRow {
    /// The order reports list functions in: most FLOP first, then most
    /// instructions, then by name (stable across runs).
    pub fn sort(rows: &mut [FunctionRow]) {
        rows.sort_by(|a, b| {
            b.summary
                .flop
                .total
                .cmp(&a.summary.flop.total)
                .then(b.summary.instructions.cmp(&a.summary.instructions))
                .then(a.name.cmp(&b.name))
        });
    }
}

/// A function's counts with its callees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inclusive {
    #[serde(flatten)]
    pub summary: Summary,
    pub time_s: Option<f64>,
}

/// One natural loop of the executed control flow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopRow {
    /// The function holding the loop's header.
    pub function: String,
    pub module: String,
    /// The loop's source position: the first line of its body.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Address of the header block (the target of the back edges).
    pub header: String,
    /// Index of the enclosing loop in `loops`, if any.
    pub parent: Option<usize>,
    /// Times the loop was entered from outside.
    pub entries: u64,
    /// Executions of the header (average trip count = iterations / entries).
    pub iterations: u64,
    /// Counts of the loop's body, nested loops included.
    #[serde(flatten)]
    pub summary: Summary,
    /// FLOP per iteration (of the header), nested loops included.
    pub flop_per_iteration: Option<f64>,
    /// Bytes read and written per iteration, nested loops included.
    pub bytes_per_iteration: Option<f64>,
    /// Counts of the body without the nested loops.
    pub self_counts: Summary,
    pub time_s: Option<f64>,
    pub samples: Option<u64>,
    pub gflops: Option<f64>,
    pub arithmetic_intensity: Intensity,
}

/// One source line's counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LineRow {
    /// Null for code without line information (then grouped per function).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub module: String,
    /// The function the line belongs to (the inlined one, for inlined code).
    pub function: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// How the time per function and loop was measured (`functions[].time_s`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// Which run was sampled, and how.
    pub source: String,
    /// Seconds of CPU time per sample.
    pub interval_s: f64,
    /// Samples taken (in intervals; a row's `samples` are of these).
    pub samples: u64,
    /// Independent observations behind them (signals; one signal may stand
    /// for several intervals when the kernel's tick is coarser than the
    /// interval): the sampling error of a row's time share p is about
    /// sqrt(p (1 - p) / (signals x p_samples)), p_samples being the row's
    /// share of the samples.
    pub signals: f64,
    /// Samples that fell in no file mapping (and count for no function).
    pub unplaced: u64,
}
