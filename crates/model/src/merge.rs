//! Many reports (MPI ranks, separate processes, repeated runs) as one: counts
//! summed exactly, each input kept as a nested row in `processes`, and the
//! load imbalance between them.
//!
//! Choices, stated once here:
//! - Counts add as exact `u64` (an overflow is an error, never a wrap). A
//!   field is summed only when every input has it (a precision split, bytes,
//!   FLOP by operation, access sizes, instruction counts); an input that
//!   cannot tell leaves the merged field absent rather than wrong. An input
//!   with no FLOP at all never makes the FLOP fields unknown.
//! - Regions are merged by name, in the order they first appear; entries and
//!   counts add up.
//! - Time: processes run side by side, so the merged wall time is the
//!   longest input's native time (and a region's, the longest time of that
//!   region), and the merged FLOP/s is the summed FLOP over that time. An
//!   input without a native time leaves the merged time absent.
//! - AI(DRAM) of the merge is the summed FLOP over the summed DRAM bytes
//!   (each input's FLOP / its AI(DRAM)); absent unless every input has one.
//! - Load imbalance: max / mean FLOP (and bytes) over the inputs, returned
//!   as [`Imbalance`] beside the merged report; a warning is added to the
//!   report when the FLOP imbalance reaches [`IMBALANCE_WARNING`].
//! - Thread rows stay inside each input (thread numbers repeat from one
//!   process to the next); the merged report has none of its own.

use crate::report::{
    ByteTotals, ExitStatus, FpInstructionRow, MemAccesses, Region, Report, Summary,
};
use crate::units::{gflops, Flop, Seconds};
use crate::vocab::Precision;
use std::collections::BTreeMap;

/// max/mean FLOP from which the merge warns about load imbalance.
pub const IMBALANCE_WARNING: f64 = 1.10;

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give at least one report")]
    Empty,
    #[error("the sum of {what} over the merged reports does not fit in 64 bits (at {label}): merge fewer reports at a time")]
    Overflow { what: String, label: String },
}

/// One input of a merge: a report and the name to show for it (its file
/// name, or its command).
#[derive(Debug, Clone)]
pub struct Source {
    pub label: String,
    pub report: Report,
}

/// The spread of one quantity over the inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub max: u64,
    /// Label of the input with the most.
    pub max_source: String,
    pub min: u64,
    pub min_source: String,
    pub mean: f64,
}

impl Spread {
    /// max / mean: 1.0 for a perfectly balanced load; `None` when the mean is 0.
    pub fn ratio(&self) -> Option<f64> {
        (self.mean > 0.0).then(|| self.max as f64 / self.mean)
    }

    fn of(values: &[(String, u64)]) -> Option<Spread> {
        let max = values.iter().max_by_key(|(_, v)| *v)?;
        let min = values.iter().min_by_key(|(_, v)| *v)?;
        let sum: u128 = values.iter().map(|(_, v)| u128::from(*v)).sum();
        Some(Spread {
            max: max.1,
            max_source: max.0.clone(),
            min: min.1,
            min_source: min.0.clone(),
            mean: sum as f64 / values.len() as f64,
        })
    }
}

/// Load imbalance between the merged inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Imbalance {
    pub sources: usize,
    pub flop: Spread,
    /// Bytes read + written; `None` when some input has no byte counts.
    pub bytes: Option<Spread>,
}

/// A merge: the summed report (inputs nested under `processes`, in order),
/// the inputs' labels, and the load imbalance.
#[derive(Debug, Clone)]
pub struct Merged {
    pub report: Report,
    /// `labels[i]` names `report.processes[i]`.
    pub labels: Vec<String>,
    pub imbalance: Imbalance,
}

impl Merged {
    /// The per-source rows and the load imbalance as a plain-text table.
    pub fn sources_table(&self) -> String {
        use crate::render::{duration, thousands};
        use std::fmt::Write;
        let mut out = format!(
            "{:<30} {:>20} {:>8} {:>18} {:>18} {:>12}\n",
            format!("Sources ({})", self.labels.len()),
            "FLOP",
            "share",
            "bytes read",
            "bytes written",
            "time"
        );
        let total = self.report.summary.flop.total;
        for (label, p) in self.labels.iter().zip(&self.report.processes) {
            let b = p.summary.bytes;
            let share = crate::render::share(p.summary.flop.total, total);
            let _ = writeln!(
                out,
                "  {:<28} {:>20} {:>8} {:>18} {:>18} {:>12}{}",
                label,
                thousands(p.summary.flop.total),
                share,
                b.map(|b| thousands(b.read)).unwrap_or_else(|| "-".into()),
                b.map(|b| thousands(b.written))
                    .unwrap_or_else(|| "-".into()),
                p.native_time_s.map(duration).unwrap_or_else(|| "-".into()),
                if p.complete { "" } else { "  PARTIAL" },
            );
        }
        let mut spread = |what: &str, s: &Spread| {
            let _ = writeln!(
                out,
                "Load imbalance ({what}): max/mean {} (max {} in {}, min {} in {})",
                s.ratio()
                    .map(|r| format!("{r:.3}"))
                    .unwrap_or_else(|| "-".into()),
                thousands(s.max),
                s.max_source,
                thousands(s.min),
                s.min_source
            );
        };
        spread("FLOP", &self.imbalance.flop);
        if let Some(b) = &self.imbalance.bytes {
            spread("bytes", b);
        }
        out
    }

    /// The per-source rows as CSV (exact integers; empty cells for unknowns).
    pub fn sources_csv(&self) -> String {
        use std::fmt::Write;
        let mut out = String::from("source,flop,bytes_read,bytes_written,native_time_s,complete\n");
        for (label, p) in self.labels.iter().zip(&self.report.processes) {
            let b = p.summary.bytes;
            let quoted = if label.contains([',', '"', '\n']) {
                format!("\"{}\"", label.replace('"', "\"\""))
            } else {
                label.clone()
            };
            let _ = writeln!(
                out,
                "{quoted},{},{},{},{},{}",
                p.summary.flop.total,
                b.map(|b| b.read.to_string()).unwrap_or_default(),
                b.map(|b| b.written.to_string()).unwrap_or_default(),
                p.native_time_s.map(|t| t.to_string()).unwrap_or_default(),
                p.complete
            );
        }
        out
    }
}

type Result<T> = std::result::Result<T, MergeError>;

fn add(a: u64, b: u64, what: &str, label: &str) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| MergeError::Overflow {
        what: what.into(),
        label: label.into(),
    })
}

/// Adds `b` into `a`, keeping a field only if both know it.
fn add_summary(a: &mut Summary, b: &Summary, label: &str) -> Result<()> {
    let a_flop = a.flop.total;
    a.flop.total = add(a.flop.total, b.flop.total, "FLOP", label)?;
    for p in Precision::ALL {
        let v = match (a.flop.get(p), b.flop.get(p)) {
            (Some(x), Some(y)) => Some(add(x, y, p.key(), label)?),
            // A side without FLOP cannot hide a precision's FLOP.
            (Some(x), None) if b.flop.total == 0 => Some(x),
            (None, Some(y)) if a_flop == 0 => Some(y),
            _ => None,
        };
        a.flop.set(p, v);
    }
    let keep_map = |x: &BTreeMap<String, u64>,
                    y: &BTreeMap<String, u64>,
                    what: &str|
     -> Result<BTreeMap<String, u64>> {
        let mut out = BTreeMap::new();
        for k in x.keys().chain(y.keys()) {
            let v = add(
                x.get(k).copied().unwrap_or(0),
                y.get(k).copied().unwrap_or(0),
                &format!("{what}.{k}"),
                label,
            )?;
            out.insert(k.clone(), v);
        }
        Ok(out)
    };
    // FLOP by operation: known only when both sides split their FLOP.
    let by_op_known = |flop: u64, by_op: &BTreeMap<String, u64>| flop == 0 || !by_op.is_empty();
    a.flop_by_op = if by_op_known(a_flop, &a.flop_by_op) && by_op_known(b.flop.total, &b.flop_by_op)
    {
        keep_map(&a.flop_by_op, &b.flop_by_op, "flop_by_op")?
    } else {
        BTreeMap::new()
    };
    // FLOP by width: likewise known only when both sides split theirs.
    a.flop_by_width =
        if by_op_known(a_flop, &a.flop_by_width) && by_op_known(b.flop.total, &b.flop_by_width) {
            keep_map(&a.flop_by_width, &b.flop_by_width, "flop_by_width")?
        } else {
            BTreeMap::new()
        };
    a.fp_elements = keep_map(&a.fp_elements, &b.fp_elements, "fp_elements")?;
    let mut rows: BTreeMap<_, FpInstructionRow> = BTreeMap::new();
    for r in a.fp_instructions.iter().chain(&b.fp_instructions) {
        let key = (r.precision, r.width_bits, r.lanes, r.op, r.masked);
        match rows.get_mut(&key) {
            Some(x) => {
                x.count = add(x.count, r.count, "fp_instructions count", label)?;
                x.flop = add(x.flop, r.flop, "fp_instructions FLOP", label)?;
            }
            None => {
                rows.insert(key, r.clone());
            }
        }
    }
    a.fp_instructions = rows.into_values().collect();
    a.bytes = match (a.bytes, b.bytes) {
        (Some(x), Some(y)) => Some(ByteTotals {
            read: add(x.read, y.read, "bytes read", label)?,
            written: add(x.written, y.written, "bytes written", label)?,
        }),
        _ => None,
    };
    a.mem_accesses = match (&a.mem_accesses, &b.mem_accesses) {
        (Some(x), Some(y)) => Some(MemAccesses {
            read: keep_map(&x.read, &y.read, "mem_accesses.read")?,
            write: keep_map(&x.write, &y.write, "mem_accesses.write")?,
        }),
        _ => None,
    };
    a.instructions = match (a.instructions, b.instructions) {
        (Some(x), Some(y)) => Some(add(x, y, "instructions", label)?),
        _ => None,
    };
    Ok(())
}

/// The sum of several summaries, under the rules of the module docs.
pub fn sum_summaries<'a>(
    parts: impl IntoIterator<Item = (&'a str, &'a Summary)>,
) -> Result<Summary> {
    let mut out = Summary::default();
    for (i, (label, s)) in parts.into_iter().enumerate() {
        if i == 0 {
            out = s.clone();
        } else {
            add_summary(&mut out, s, label)?;
        }
    }
    Ok(out)
}

fn max_time(times: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let mut out: Option<f64> = None;
    for t in times {
        out = Some(out.unwrap_or(0.0).max(t?));
    }
    out
}

/// The worst way an input ended: a signal, then a non-zero exit code, then
/// unknown, else 0.
fn worst_status(reports: &[&Report]) -> ExitStatus {
    let rank = |s: &ExitStatus| match s {
        ExitStatus::Signal(_) => 3,
        ExitStatus::Code(c) if *c != 0 => 2,
        ExitStatus::Unknown => 1,
        ExitStatus::Code(_) => 0,
    };
    reports
        .iter()
        .map(|r| &r.exit_status)
        .max_by_key(|s| rank(s))
        .cloned()
        .unwrap_or(ExitStatus::Unknown)
}

fn merge_regions(sources: &[Source]) -> Result<Vec<Region>> {
    let mut order: Vec<String> = Vec::new();
    let mut by_name: BTreeMap<String, Vec<(&str, &Region)>> = BTreeMap::new();
    for s in sources {
        for r in &s.report.regions {
            if !by_name.contains_key(&r.name) {
                order.push(r.name.clone());
            }
            by_name
                .entry(r.name.clone())
                .or_default()
                .push((&s.label, r));
        }
    }
    let mut out = Vec::new();
    for name in order {
        let parts = &by_name[&name];
        let mut entries = 0;
        for (label, r) in parts {
            entries = add(entries, r.entries, "region entries", label)?;
        }
        let summary = sum_summaries(parts.iter().map(|(l, r)| (*l, &r.summary)))?;
        let native_time_s = max_time(parts.iter().map(|(_, r)| r.native_time_s));
        let g = native_time_s.and_then(|t| gflops(Flop(summary.flop.total), Seconds(t)));
        out.push(Region {
            name,
            entries,
            summary,
            native_time_s,
            gflops: g,
        });
    }
    Ok(out)
}

fn dram_intensity(reports: &[&Report]) -> Option<f64> {
    let mut flop = 0f64;
    let mut bytes = 0f64;
    for r in reports {
        let f = r.summary.flop.total as f64;
        if f == 0.0 {
            continue;
        }
        let ai = r.arithmetic_intensity.dram.filter(|a| *a > 0.0)?;
        flop += f;
        bytes += f / ai;
    }
    (bytes > 0.0).then(|| flop / bytes)
}

/// Merges `sources` (at least one) into one report. See the module docs for
/// what each field of the merge means.
pub fn merge(sources: Vec<Source>) -> Result<Merged> {
    if sources.is_empty() {
        return Err(MergeError::Empty);
    }
    let reports: Vec<&Report> = sources.iter().map(|s| &s.report).collect();
    let first = reports[0];
    let same = |f: &dyn Fn(&Report) -> String| reports.iter().all(|r| f(r) == f(first));
    let engine = if same(&|r| r.engine.clone()) {
        first.engine.clone()
    } else {
        "merged".to_string()
    };
    let command = if same(&|r| r.command.join("\u{0}")) {
        first.command.clone()
    } else {
        sources.iter().map(|s| s.label.clone()).collect()
    };
    let mut top = Report::new(&engine, command);
    top.summary = sum_summaries(
        sources
            .iter()
            .map(|s| (s.label.as_str(), &s.report.summary)),
    )?;
    top.exit_status = worst_status(&reports);
    top.complete = reports.iter().all(|r| r.complete);
    top.peak = if reports.iter().all(|r| r.peak == first.peak) {
        first.peak.clone()
    } else {
        None
    };
    top.regions = merge_regions(&sources)?;
    top.unmarked = if reports.iter().all(|r| r.unmarked.is_some()) {
        Some(sum_summaries(sources.iter().filter_map(|s| {
            Some((s.label.as_str(), s.report.unmarked.as_ref()?))
        }))?)
    } else {
        None
    };
    top.arithmetic_intensity.dram = dram_intensity(&reports);
    top.set_native_time(max_time(reports.iter().map(|r| r.native_time_s)).map(Seconds));

    let flop: Vec<(String, u64)> = sources
        .iter()
        .map(|s| (s.label.clone(), s.report.summary.flop.total))
        .collect();
    let bytes: Option<Vec<(String, u64)>> = sources
        .iter()
        .map(|s| {
            s.report
                .summary
                .bytes
                .map(|b| (s.label.clone(), b.read.saturating_add(b.written)))
        })
        .collect();
    let imbalance = Imbalance {
        sources: sources.len(),
        flop: Spread::of(&flop).expect("at least one source"),
        bytes: bytes.as_deref().and_then(Spread::of),
    };

    let mut warnings = Vec::new();
    if !same(&|r| r.engine.clone()) {
        let engines: Vec<String> = sources
            .iter()
            .map(|s| format!("{} ({})", s.label, s.report.engine))
            .collect();
        warnings.push(format!("the merged reports come from different engines: {}; their counts may follow different rules", engines.join(", ")));
    }
    if let Some(ratio) = imbalance.flop.ratio().filter(|r| *r >= IMBALANCE_WARNING) {
        warnings.push(format!(
            "load imbalance: {} has {:.2}x the mean FLOP of the {} merged reports (max/mean {ratio:.2})",
            imbalance.flop.max_source, ratio, imbalance.sources
        ));
    }
    for s in &sources {
        if !s.report.complete {
            warnings.push(format!(
                "{}: PARTIAL counts (the program did not run to its end)",
                s.label
            ));
        }
        for w in &s.report.warnings {
            warnings.push(format!("{}: {w}", s.label));
        }
    }
    top.warnings = warnings;
    let labels = sources.iter().map(|s| s.label.clone()).collect();
    top.processes = sources.into_iter().map(|s| s.report).collect();
    Ok(Merged {
        report: top,
        labels,
        imbalance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{Counts, FpKey};
    use crate::vocab::{FlopOp, OpClass};

    fn rank(n: u64, time: f64) -> Report {
        let mut c = Counts {
            instructions: 100 * n,
            ..Default::default()
        };
        c.add_fp(
            FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
            n,
            8 * n,
            FlopOp::Fma,
        );
        c.mem_read.insert(32, 2 * n);
        c.mem_write.insert(32, n);
        let mut r = Report::new("emulate", vec!["./solver".into()]);
        r.summary = Summary::from_counts(&c);
        r.exit_status = ExitStatus::Code(0);
        r.complete = true;
        r.regions.push(Region {
            name: "solve".into(),
            entries: 1,
            summary: r.summary.clone(),
            native_time_s: Some(time / 2.0),
            gflops: None,
        });
        r.set_native_time(Some(Seconds(time)));
        r
    }

    fn sources(ns: &[(u64, f64)]) -> Vec<Source> {
        ns.iter()
            .enumerate()
            .map(|(i, (n, t))| Source {
                label: format!("rank{i}.json"),
                report: rank(*n, *t),
            })
            .collect()
    }

    #[test]
    fn counts_add_exactly_and_inputs_stay_as_rows() {
        let m = merge(sources(&[(1000, 1.0), (1000, 2.0), (2000, 1.5)])).unwrap();
        let r = &m.report;
        assert_eq!(r.summary.flop.total, 32_000);
        assert_eq!(r.summary.flop.fp64, Some(32_000));
        assert_eq!(r.summary.flop_by_op["fma"], 32_000);
        assert_eq!(r.summary.flop_by_width["fp64.256"], 32_000);
        assert_eq!(r.summary.fp_elements["elements_fp_double_4"], 4000);
        assert_eq!(r.summary.fp_instructions.len(), 1);
        assert_eq!(r.summary.fp_instructions[0].count, 4000);
        assert_eq!(
            r.summary.bytes,
            Some(ByteTotals {
                read: 256_000,
                written: 128_000
            })
        );
        assert_eq!(r.summary.mem_accesses.as_ref().unwrap().read["32"], 8000);
        assert_eq!(r.summary.instructions, Some(400_000));
        assert_eq!(r.processes.len(), 3);
        assert_eq!(m.labels, ["rank0.json", "rank1.json", "rank2.json"]);
        assert_eq!(r.command, ["./solver"]);
        // The slowest rank's time; summed FLOP over it.
        assert_eq!(r.native_time_s, Some(2.0));
        assert_eq!(r.gflops, Some(32_000.0 / 2.0 / 1e9));
        assert_eq!(r.regions.len(), 1);
        assert_eq!(r.regions[0].entries, 3);
        assert_eq!(r.regions[0].summary.flop.total, 32_000);
        assert_eq!(r.regions[0].native_time_s, Some(1.0));
    }

    #[test]
    fn imbalance_is_max_over_mean() {
        let m = merge(sources(&[(1000, 1.0), (1000, 1.0), (4000, 1.0)])).unwrap();
        let i = &m.imbalance;
        assert_eq!(i.flop.max, 32_000);
        assert_eq!(i.flop.max_source, "rank2.json");
        assert_eq!(i.flop.min, 8000);
        assert_eq!(i.flop.ratio(), Some(32_000.0 / 16_000.0));
        assert_eq!(i.bytes.as_ref().unwrap().ratio(), Some(2.0));
        assert!(
            m.report
                .warnings
                .iter()
                .any(|w| w.starts_with("load imbalance: rank2.json has 2.00x")),
            "{:?}",
            m.report.warnings
        );
        let balanced = merge(sources(&[(1000, 1.0), (1000, 1.0)])).unwrap();
        assert_eq!(balanced.imbalance.flop.ratio(), Some(1.0));
        assert!(balanced.report.warnings.is_empty());
    }

    #[test]
    fn unknown_fields_stay_unknown() {
        let mut s = sources(&[(1000, 1.0), (1000, 1.0)]);
        s[1].report.summary.flop.fp64 = None;
        s[1].report.summary.bytes = None;
        s[1].report.native_time_s = None;
        let m = merge(s).unwrap();
        assert_eq!(m.report.summary.flop.total, 16_000);
        assert_eq!(m.report.summary.flop.fp64, None);
        assert_eq!(m.report.summary.bytes, None);
        assert_eq!(m.report.native_time_s, None);
        assert_eq!(m.imbalance.bytes, None);
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let mut s = sources(&[(1, 1.0), (1, 1.0)]);
        s[0].report.summary.flop.total = u64::MAX;
        assert!(matches!(merge(s), Err(MergeError::Overflow { .. })));
        assert!(matches!(merge(vec![]), Err(MergeError::Empty)));
    }
}
