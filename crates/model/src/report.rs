//! `Report`: the JSON contract of shared/reference/report-schema.md.
//! Keys are never renamed; new keys may be added.

use crate::counts::Counts;
use crate::units::{gflops, intensity, Bytes, Flop, Seconds};
use crate::vocab::{FlopOp, Precision};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "flopscope.report/1";

/// The keys shared/reference/report-schema.md requires of every report; an
/// engine whose events cannot tell a value still writes its key.
pub const CONTRACT_KEYS: [&str; 21] = [
    "schema",
    "tool_version",
    "engine",
    "command",
    "exit_status",
    "complete",
    "flop",
    "flop_by_op",
    "fp_elements",
    "fp_instructions",
    "bytes",
    "mem_accesses",
    "instructions",
    "native_time_s",
    "gflops",
    "arithmetic_intensity",
    "peak",
    "threads",
    "processes",
    "regions",
    "warnings",
];

/// FLOP by precision. `total` is always known; a precision an engine cannot
/// tell apart (hardware counters without an SP/DP split) is absent, not zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlopTotals {
    pub total: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf16: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x87: Option<u64>,
}

impl FlopTotals {
    pub fn get(&self, p: Precision) -> Option<u64> {
        match p {
            Precision::Fp64 => self.fp64,
            Precision::Fp32 => self.fp32,
            Precision::Fp16 => self.fp16,
            Precision::Bf16 => self.bf16,
            Precision::X87 => self.x87,
        }
    }

    pub fn set(&mut self, p: Precision, v: Option<u64>) {
        let slot = match p {
            Precision::Fp64 => &mut self.fp64,
            Precision::Fp32 => &mut self.fp32,
            Precision::Fp16 => &mut self.fp16,
            Precision::Bf16 => &mut self.bf16,
            Precision::X87 => &mut self.x87,
        };
        *slot = v;
    }
}

/// One row of `fp_instructions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FpInstructionRow {
    pub precision: Precision,
    pub width_bits: u32,
    pub lanes: u32,
    pub op: crate::vocab::OpClass,
    pub masked: bool,
    pub count: u64,
    /// FLOP performed by these instructions.
    pub flop: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ByteTotals {
    pub read: u64,
    pub written: u64,
}

impl ByteTotals {
    pub fn total(&self) -> Bytes {
        Bytes(self.read + self.written)
    }
}

/// SDE-style access-size histograms: size in bytes (as a string key) -> accesses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemAccesses {
    pub read: BTreeMap<String, u64>,
    pub write: BTreeMap<String, u64>,
}

impl MemAccesses {
    /// One histogram as (size in bytes, accesses), smallest size first.
    pub fn by_size(h: &BTreeMap<String, u64>) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = h
            .iter()
            .filter_map(|(k, n)| Some((k.parse().ok()?, *n)))
            .collect();
        v.sort();
        v
    }
}

/// One row of the instruction mix: a precision at one width (scalar, or a
/// vector width in bits), its instructions and FLOP, over every op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WidthRow {
    pub precision: Precision,
    /// "scalar" or "256-bit".
    pub label: String,
    pub count: u64,
    pub flop: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Intensity {
    /// FLOP per byte of core-side (L1) traffic.
    pub l1: Option<f64>,
    /// FLOP per byte of DRAM traffic (uncore counters only).
    pub dram: Option<f64>,
}

/// The counted part shared by a report, a region and a thread row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub flop: FlopTotals,
    /// FLOP by category; absent where the engine cannot tell.
    #[serde(default)]
    pub flop_by_op: BTreeMap<String, u64>,
    /// FLOP by precision and width: `fp64.256`, `fp32.scalar`, ... (FMA = 2).
    #[serde(default)]
    pub flop_by_width: BTreeMap<String, u64>,
    #[serde(default)]
    pub fp_elements: BTreeMap<String, u64>,
    #[serde(default)]
    pub fp_instructions: Vec<FpInstructionRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<ByteTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_accesses: Option<MemAccesses>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
}

impl Summary {
    /// The `fp_instructions` rows summed per precision and width, by
    /// precision, then scalar first and widths ascending.
    pub fn width_mix(&self) -> Vec<WidthRow> {
        let mut rows: BTreeMap<(Precision, u32), WidthRow> = BTreeMap::new();
        for r in &self.fp_instructions {
            let (order, label) = if r.lanes == 1 {
                (0, "scalar".to_string())
            } else {
                (r.width_bits, format!("{}-bit", r.width_bits))
            };
            let e = rows.entry((r.precision, order)).or_insert(WidthRow {
                precision: r.precision,
                label,
                count: 0,
                flop: 0,
            });
            e.count += r.count;
            e.flop += r.flop;
        }
        rows.into_values().collect()
    }

    /// The full summary of exact counts: every field present.
    pub fn from_counts(c: &Counts) -> Summary {
        let mut flop = FlopTotals {
            total: c.flop_total().0,
            ..Default::default()
        };
        for p in Precision::ALL {
            flop.set(p, Some(c.flop_of(p).0));
        }
        let flop_by_op = FlopOp::ALL
            .iter()
            .map(|op| (op.key().to_string(), c.flop_by_op(*op).0))
            .collect();
        let fp_instructions = c
            .fp_instructions
            .iter()
            .filter(|(_, t)| t.count > 0)
            .map(|(k, t)| FpInstructionRow {
                precision: k.precision,
                width_bits: k.width_bits,
                lanes: k.lanes,
                op: k.op,
                masked: k.masked,
                count: t.count,
                flop: t.flop,
            })
            .collect();
        let mut flop_by_width = BTreeMap::new();
        for (k, t) in c.fp_instructions.iter().filter(|(_, t)| t.flop > 0) {
            *flop_by_width
                .entry(width_key(k.precision, k.lanes, k.width_bits))
                .or_default() += t.flop;
        }
        let hist = |m: &crate::TallyMap<u32, u64>| {
            m.iter()
                .filter(|(_, n)| **n > 0)
                .map(|(s, n)| (s.to_string(), *n))
                .collect()
        };
        Summary {
            flop,
            flop_by_op,
            flop_by_width,
            fp_elements: c.fp_elements(),
            fp_instructions,
            bytes: Some(ByteTotals {
                read: c.bytes_read().0,
                written: c.bytes_written().0,
            }),
            mem_accesses: Some(MemAccesses {
                read: hist(&c.mem_read),
                write: hist(&c.mem_write),
            }),
            instructions: Some(c.instructions),
        }
    }

    pub fn flop_total(&self) -> Flop {
        Flop(self.flop.total)
    }

    /// FLOP per byte of the counted (L1) traffic.
    pub fn intensity_l1(&self) -> Option<f64> {
        self.bytes
            .and_then(|b| intensity(self.flop_total(), b.total()))
    }
}

/// The `flop_by_width` key of a kind of instruction: `fp64.scalar` for
/// one-lane forms, else `fp64.<width_bits>`.
pub fn width_key(precision: Precision, lanes: u32, width_bits: u32) -> String {
    if lanes == 1 {
        format!("{}.scalar", precision.key())
    } else {
        format!("{}.{width_bits}", precision.key())
    }
}

/// How the measured program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal (name such as `SIGSEGV`).
    Signal(String),
    /// It did not run to an end (it could not be started, or the engine lost it).
    Unknown,
}

impl Serialize for ExitStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ExitStatus::Code(c) => s.serialize_i32(*c),
            ExitStatus::Signal(name) => s.serialize_str(&format!("signal:{name}")),
            ExitStatus::Unknown => s.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for ExitStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::Null => Ok(ExitStatus::Unknown),
            serde_json::Value::Number(n) => n
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .map(ExitStatus::Code)
                .ok_or_else(|| serde::de::Error::custom("exit_status is not a 32-bit integer")),
            serde_json::Value::String(s) => s
                .strip_prefix("signal:")
                .map(|n| ExitStatus::Signal(n.to_string()))
                .ok_or_else(|| serde::de::Error::custom("exit_status string must be signal:NAME")),
            _ => Err(serde::de::Error::custom(
                "exit_status must be an integer, \"signal:NAME\" or null",
            )),
        }
    }
}

/// The peak a report's percentages refer to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeakRef {
    pub gflops_fp64: f64,
    pub gflops_fp32: f64,
    /// `theoretical` or `measured`.
    pub source: String,
    /// What the figure assumed (frequency, cores, FLOP/cycle source).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
}

/// One thread's counts (an emulated vCPU; its index is the `tid`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadRow {
    pub tid: u64,
    #[serde(flatten)]
    pub summary: Summary,
}

/// A marked code region.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub name: String,
    pub entries: u64,
    #[serde(flatten)]
    pub summary: Summary,
    pub native_time_s: Option<f64>,
    #[serde(default)]
    pub gflops: Option<f64>,
    /// The region's own attribution rows (`flopscope count --per-region`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::rows_json::rows"
    )]
    pub functions: Vec<crate::FunctionRow>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::rows_json::rows"
    )]
    pub loops: Vec<crate::LoopRow>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::rows_json::rows"
    )]
    pub lines: Vec<crate::LineRow>,
}

/// Where an MPI (or other launcher's) rank ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInfo {
    pub rank: u32,
    pub size: Option<u32>,
    pub host: String,
    pub pid: u32,
}

/// The one report every engine and importer produces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub tool_version: String,
    pub engine: String,
    pub command: Vec<String>,
    pub exit_status: ExitStatus,
    pub complete: bool,
    /// The process id, where an engine recorded it (of the first process at
    /// the top of a counted run; of each process in `processes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    /// A process in `processes` that never started a program of its own (a
    /// fork that did not exec): the pid it was forked from. Its `command`
    /// is then that process's, the program it went on running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<u64>,
    /// Set when a launcher (mpirun, srun) started this process as a rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<RankInfo>,
    #[serde(flatten)]
    pub summary: Summary,
    /// The wall time FLOP/s are computed from (see `timing` for which run).
    pub native_time_s: Option<f64>,
    pub gflops: Option<f64>,
    /// Which run `native_time_s` comes from, and its spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<crate::timing::Timing>,
    /// Wall seconds of the counted run itself (the program under the
    /// engine, start to exit): with `native_time_s`, the cost of counting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_time_s: Option<f64>,
    pub arithmetic_intensity: Intensity,
    /// DRAM traffic from memory-controller counters (perf engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bytes: Option<ByteTotals>,
    pub peak: Option<PeakRef>,
    /// The machine the program ran on (`count`), with its roofs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::MachineRecord>,
    #[serde(default)]
    pub threads: Vec<ThreadRow>,
    #[serde(default)]
    pub processes: Vec<Report>,
    #[serde(default)]
    pub regions: Vec<Region>,
    /// Counts outside every region; present when the program marked regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmarked: Option<Summary>,
    /// How `time_s` of functions and loops was measured, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::Sampling>,
    /// Where the work is (engines that attribute; empty otherwise).
    #[serde(default, serialize_with = "crate::rows_json::rows")]
    pub functions: Vec<crate::FunctionRow>,
    #[serde(default, serialize_with = "crate::rows_json::rows")]
    pub loops: Vec<crate::LoopRow>,
    #[serde(default, serialize_with = "crate::rows_json::rows")]
    pub lines: Vec<crate::LineRow>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// What holds for every run of the engine (its known limits): in the
    /// JSON, not repeated on every run's table and stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report {
    /// An empty report for `engine` running `command`.
    pub fn new(engine: &str, command: Vec<String>) -> Report {
        Report {
            schema: SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            engine: engine.to_string(),
            command,
            exit_status: ExitStatus::Unknown,
            complete: false,
            pid: None,
            fork_of: None,
            mpi: None,
            summary: Summary::default(),
            native_time_s: None,
            gflops: None,
            timing: None,
            engine_time_s: None,
            arithmetic_intensity: Intensity::default(),
            dram_bytes: None,
            peak: None,
            machine: None,
            threads: Vec::new(),
            processes: Vec::new(),
            regions: Vec::new(),
            unmarked: None,
            sampling: None,
            functions: Vec::new(),
            loops: Vec::new(),
            lines: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sets the native wall time and recomputes the rates derived from it.
    pub fn set_native_time(&mut self, t: Option<Seconds>) {
        self.native_time_s = t.map(|s| s.0);
        self.refresh_derived();
    }

    /// Recomputes GFLOP/s and intensity from the counts and the native time.
    pub fn refresh_derived(&mut self) {
        self.gflops = self
            .native_time_s
            .and_then(|t| gflops(self.summary.flop_total(), Seconds(t)));
        self.arithmetic_intensity.l1 = self.summary.intensity_l1();
        for r in &mut self.regions {
            r.gflops = r
                .native_time_s
                .and_then(|t| gflops(r.summary.flop_total(), Seconds(t)));
        }
    }

    /// Percent of the peak for the precision that dominates the FLOP, if known.
    pub fn percent_of_peak(&self) -> Option<f64> {
        let (g, peak) = (self.gflops?, self.peak.as_ref()?);
        let f = &self.summary.flop;
        let p = if f.fp32.unwrap_or(0) > f.fp64.unwrap_or(0) {
            peak.gflops_fp32
        } else {
            peak.gflops_fp64
        };
        (p > 0.0).then(|| 100.0 * g / p)
    }

    /// [`Report::to_json`] written to `w` as it is made: indented, a row of
    /// `functions`, `loops` and `lines` a line (see `rows_json`).
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        // The formatter writes a few bytes at a time (indents, keys,
        // numbers): buffered here, in a writer whose type it knows, they
        // reach `w` in large pieces instead of one dynamic call each.
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
        let mut ser =
            serde_json::Serializer::with_formatter(&mut w, crate::rows_json::RowsFormatter::new());
        serde::Serialize::serialize(self, &mut ser)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    pub fn to_json(&self) -> String {
        let mut bytes = Vec::new();
        self.write_json(&mut bytes)
            .expect("a report always serializes");
        String::from_utf8(bytes).expect("serde_json writes UTF-8")
    }

    pub fn from_json(text: &str) -> Result<Report, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_mix_sums_ops_per_precision_and_width() {
        use crate::vocab::OpClass;
        let row = |precision, width_bits, lanes, op, count, flop| FpInstructionRow {
            precision,
            width_bits,
            lanes,
            op,
            masked: false,
            count,
            flop,
        };
        let s = Summary {
            fp_instructions: vec![
                row(Precision::Fp64, 256, 4, OpClass::Fma, 10, 80),
                row(Precision::Fp64, 64, 1, OpClass::Add, 3, 3),
                row(Precision::Fp64, 256, 4, OpClass::Add, 5, 20),
                row(Precision::Fp32, 512, 16, OpClass::Mul, 2, 32),
            ],
            ..Default::default()
        };
        let got: Vec<(Precision, String, u64, u64)> = s
            .width_mix()
            .into_iter()
            .map(|r| (r.precision, r.label, r.count, r.flop))
            .collect();
        assert_eq!(
            got,
            vec![
                (Precision::Fp64, "scalar".to_string(), 3, 3),
                (Precision::Fp64, "256-bit".to_string(), 15, 100),
                (Precision::Fp32, "512-bit".to_string(), 2, 32),
            ]
        );
        let mut h = BTreeMap::new();
        h.insert("16".to_string(), 2);
        h.insert("8".to_string(), 5);
        h.insert("1".to_string(), 7);
        assert_eq!(MemAccesses::by_size(&h), vec![(1, 7), (8, 5), (16, 2)]);
    }
    use crate::counts::FpKey;
    use crate::vocab::OpClass;

    fn sample() -> Report {
        let mut c = Counts {
            instructions: 100,
            ..Default::default()
        };
        let key = FpKey {
            precision: Precision::Fp64,
            width_bits: 256,
            lanes: 4,
            op: OpClass::Fma,
            masked: false,
        };
        c.fp_instructions.insert(
            key,
            crate::counts::FpTally {
                count: 10,
                flop: 80,
            },
        );
        c.flop.insert((Precision::Fp64, FlopOp::Fma), 80);
        c.mem_read.insert(32, 20);
        c.mem_write.insert(32, 10);
        let mut r = Report::new("emulate", vec!["./app".into()]);
        r.summary = Summary::from_counts(&c);
        r.exit_status = ExitStatus::Signal("SIGSEGV".into());
        r.set_native_time(Some(Seconds(2.0)));
        r
    }

    #[test]
    fn json_has_the_contract_keys_and_round_trips() {
        let r = sample();
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for key in CONTRACT_KEYS {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["exit_status"], "signal:SIGSEGV");
        assert_eq!(v["flop"]["total"], 80);
        assert_eq!(v["flop"]["fp64"], 80);
        assert_eq!(v["flop_by_op"]["fma"], 80);
        assert_eq!(v["flop_by_width"]["fp64.256"], 80);
        assert_eq!(v["fp_elements"]["elements_fp_double_4"], 10);
        assert_eq!(v["bytes"]["read"], 640);
        assert_eq!(v["mem_accesses"]["write"]["32"], 10);
        assert_eq!(v["gflops"], 4e-8);
        assert_eq!(v["arithmetic_intensity"]["l1"], 80.0 / 960.0);
        assert_eq!(Report::from_json(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn unknown_precisions_are_absent_not_zero() {
        let mut r = sample();
        r.summary.flop = FlopTotals {
            total: 5,
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert!(v["flop"].get("fp64").is_none());
    }
}
