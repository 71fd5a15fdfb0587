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
//! - Functions, loops and lines are summed per row, matched as
//!   [`crate::matching`] says (by module file name, name, source position;
//!   never by address), in the order they first appear; functions are then
//!   sorted as an engine sorts them (FLOP, then instructions, descending).
//!   Counts add like the totals (so over `functions`, and over `lines`, they
//!   still sum to the totals), and so do a loop's `entries`, `iterations`
//!   and `self_counts`; its `parent` points into the merged `loops` (the
//!   first input's nesting), its `header` and a function's `address` are
//!   the first input's. A row's `time_s` and `samples` are the sums of the
//!   known ones (absent only when no input has one), and its GFLOP/s and
//!   intensity follow from the summed counts and time. Where some inputs
//!   attribute their work and others do not, rows of the first kind alone
//!   would not add up to the totals: the merge then has none, and says so.
//!   A region's own rows merge the same way. `sampling` sums the inputs'
//!   samples when all were sampled alike, and is absent otherwise.

use crate::attribution::{FunctionRow, Inclusive, LineRow, LoopRow, Sampling};
use crate::matching::{loop_keys, FunctionKey, LineKey};
use crate::report::{
    ByteTotals, ExitStatus, FpInstructionRow, Intensity, MemAccesses, Region, Report, Summary,
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

/// Why `sources` are not parts of one job (the ranks or processes of one
/// run, whose counts add up): the first pair that ran different programs or
/// was counted by different engines. Arguments may differ (ranks given their
/// own input files). `None` when they are one job's.
pub fn not_one_job(sources: &[Source]) -> Option<String> {
    let first = sources.first()?;
    for s in &sources[1..] {
        let (a, b) = (&first.report, &s.report);
        if a.command.first() != b.command.first() {
            return Some(format!(
                "{} ran `{}` and {} ran `{}`",
                first.label,
                a.command.join(" "),
                s.label,
                b.command.join(" ")
            ));
        }
        if a.engine != b.engine {
            return Some(format!(
                "{} was counted by the {} engine and {} by the {} engine",
                first.label, a.engine, s.label, b.engine
            ));
        }
    }
    None
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

/// The merged regions, with warnings about their rows (module docs).
fn merge_regions(sources: &[Source]) -> Result<(Vec<Region>, Vec<String>)> {
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
    let mut warnings = Vec::new();
    for name in order {
        let parts = &by_name[&name];
        let rows: Vec<RowsOf> = parts
            .iter()
            .map(|(label, r)| RowsOf {
                label,
                functions: &r.functions,
                loops: &r.loops,
                lines: &r.lines,
            })
            .collect();
        let (functions, loops, lines) = merge_rows(
            &rows,
            &format!("region `{name}` of the merge"),
            &mut warnings,
        )?;
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
            functions,
            loops,
            lines,
        });
    }
    Ok((out, warnings))
}

/// Items of every input grouped by key, in the order keys first appear;
/// `W` says where each came from.
fn group<'a, K: Ord + Clone, W, R>(
    items: impl IntoIterator<Item = (K, W, &'a R)>,
) -> Vec<(K, Vec<(W, &'a R)>)> {
    let mut index: BTreeMap<K, usize> = BTreeMap::new();
    let mut out: Vec<(K, Vec<(W, &'a R)>)> = Vec::new();
    for (k, w, r) in items {
        match index.get(&k) {
            Some(&i) => out[i].1.push((w, r)),
            None => {
                index.insert(k.clone(), out.len());
                out.push((k, vec![(w, r)]));
            }
        }
    }
    out
}

/// The sum of the times that are known; `None` when none is.
fn sum_times(times: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    times.flatten().reduce(|x, y| x + y)
}

/// The sum of the sample counts that are known; `None` when none is.
fn sum_samples<'a>(samples: impl Iterator<Item = (&'a str, Option<u64>)>) -> Result<Option<u64>> {
    let mut out = None;
    for (label, n) in samples {
        if let Some(n) = n {
            out = Some(add(out.unwrap_or(0), n, "samples", label)?);
        }
    }
    Ok(out)
}

/// GFLOP/s and intensity of summed counts over a summed time.
fn rates(s: &Summary, time_s: Option<f64>) -> (Option<f64>, Intensity) {
    let g = time_s.and_then(|t| gflops(s.flop_total(), Seconds(t)));
    let ai = Intensity {
        l1: s.intensity_l1(),
        dram: None,
    };
    (g, ai)
}

/// One input's attribution rows (a report's, or one of its regions').
struct RowsOf<'a> {
    label: &'a str,
    functions: &'a [FunctionRow],
    loops: &'a [LoopRow],
    lines: &'a [LineRow],
}

fn merge_functions(inputs: &[RowsOf]) -> Result<Vec<FunctionRow>> {
    let groups = group(
        inputs
            .iter()
            .flat_map(|s| s.functions.iter().map(|f| (FunctionKey::of(f), s.label, f))),
    );
    let mut out = Vec::with_capacity(groups.len());
    for (_, parts) in groups {
        let first = parts[0].1;
        let summary = sum_summaries(parts.iter().map(|(l, f)| (*l, &f.summary)))?;
        let inclusive = match parts
            .iter()
            .map(|(l, f)| Some((*l, f.inclusive.as_ref()?)))
            .collect::<Option<Vec<_>>>()
        {
            Some(inc) => Some(Inclusive {
                summary: sum_summaries(inc.iter().map(|(l, i)| (*l, &i.summary)))?,
                time_s: sum_times(inc.iter().map(|(_, i)| i.time_s)),
            }),
            None => None,
        };
        let time_s = sum_times(parts.iter().map(|(_, f)| f.time_s));
        let (g, ai) = rates(&summary, time_s);
        let mut inlined_into: Vec<String> = Vec::new();
        for name in parts.iter().flat_map(|(_, f)| &f.inlined_into) {
            if !inlined_into.contains(name) {
                inlined_into.push(name.clone());
            }
        }
        let declared = parts
            .iter()
            .map(|(_, f)| f)
            .find(|f| f.file.is_some() || f.line.is_some())
            .unwrap_or(&first);
        out.push(FunctionRow {
            name: first.name.clone(),
            module: first.module.clone(),
            address: first.address.clone(),
            file: declared.file.clone(),
            line: declared.line,
            inlined_into,
            summary,
            inclusive,
            time_s,
            samples: sum_samples(parts.iter().map(|(l, f)| (*l, f.samples)))?,
            gflops: g,
            arithmetic_intensity: ai,
        });
    }
    FunctionRow::sort(&mut out);
    Ok(out)
}

fn merge_loops(inputs: &[RowsOf]) -> Result<Vec<LoopRow>> {
    let keys: Vec<_> = inputs.iter().map(|s| loop_keys(s.loops)).collect();
    let groups = group(inputs.iter().enumerate().flat_map(|(i, s)| {
        s.loops
            .iter()
            .zip(&keys[i])
            .map(move |(l, k)| (k.clone(), (i, s.label), l))
    }));
    let index: BTreeMap<_, usize> = groups
        .iter()
        .enumerate()
        .map(|(at, (k, _))| (k, at))
        .collect();
    let mut out = Vec::with_capacity(groups.len());
    for (_, parts) in &groups {
        let ((src, _), first) = parts[0];
        // The nesting of the first input that has the loop.
        let parent = first
            .parent
            .and_then(|p| keys[src].get(p))
            .and_then(|k| index.get(k).copied());
        let (mut entries, mut iterations) = (0u64, 0u64);
        for ((_, label), l) in parts {
            entries = add(entries, l.entries, "loop entries", label)?;
            iterations = add(iterations, l.iterations, "loop iterations", label)?;
        }
        let summary = sum_summaries(parts.iter().map(|((_, l), r)| (*l, &r.summary)))?;
        let self_counts = sum_summaries(parts.iter().map(|((_, l), r)| (*l, &r.self_counts)))?;
        let per = |x: u64| (iterations > 0).then(|| x as f64 / iterations as f64);
        let time_s = sum_times(parts.iter().map(|(_, l)| l.time_s));
        let (g, ai) = rates(&summary, time_s);
        out.push(LoopRow {
            function: first.function.clone(),
            module: first.module.clone(),
            file: first.file.clone(),
            line: first.line,
            header: first.header.clone(),
            parent,
            entries,
            iterations,
            flop_per_iteration: per(summary.flop.total),
            bytes_per_iteration: summary.bytes.and_then(|b| per(b.total().0)),
            summary,
            self_counts,
            time_s,
            samples: sum_samples(parts.iter().map(|((_, l), r)| (*l, r.samples)))?,
            gflops: g,
            arithmetic_intensity: ai,
        });
    }
    Ok(out)
}

fn merge_lines(inputs: &[RowsOf]) -> Result<Vec<LineRow>> {
    let groups = group(
        inputs
            .iter()
            .flat_map(|s| s.lines.iter().map(|l| (LineKey::of(l), s.label, l))),
    );
    let mut out = Vec::with_capacity(groups.len());
    for (_, parts) in groups {
        let first = parts[0].1;
        out.push(LineRow {
            file: first.file.clone(),
            line: first.line,
            module: first.module.clone(),
            function: first.function.clone(),
            summary: sum_summaries(parts.iter().map(|(l, r)| (*l, &r.summary)))?,
        });
    }
    Ok(out)
}

/// How the merged rows' times were measured: the inputs' samples summed,
/// when every input was sampled alike (same source and interval).
fn merge_sampling(sources: &[Source], warnings: &mut Vec<String>) -> Result<Option<Sampling>> {
    let all: Option<Vec<(&str, &Sampling)>> = sources
        .iter()
        .map(|s| Some((s.label.as_str(), s.report.sampling.as_ref()?)))
        .collect();
    let Some(all) = all else {
        return Ok(None);
    };
    let first = all[0].1;
    if all
        .iter()
        .any(|(_, x)| x.source != first.source || x.interval_s != first.interval_s)
    {
        warnings.push(
            "the inputs were sampled differently (run or interval): the merge states no sampling, and its times per function and loop are sums of unlike measurements".into(),
        );
        return Ok(None);
    }
    let mut out = Sampling {
        samples: 0,
        signals: 0.0,
        unplaced: 0,
        ..first.clone()
    };
    for (label, x) in &all {
        out.samples = add(out.samples, x.samples, "samples", label)?;
        out.unplaced = add(out.unplaced, x.unplaced, "unplaced samples", label)?;
        out.signals += x.signals;
    }
    Ok(Some(out))
}

type MergedRows = (Vec<FunctionRow>, Vec<LoopRow>, Vec<LineRow>);

/// The inputs' functions, loops and lines merged (module docs). Where some
/// inputs have rows and others none there are none, and a warning about
/// `what` (the merge, a region of it) says why.
fn merge_rows(inputs: &[RowsOf], what: &str, warnings: &mut Vec<String>) -> Result<MergedRows> {
    let without = |has: &dyn Fn(&RowsOf) -> bool| -> Vec<&str> {
        inputs.iter().filter(|s| !has(s)).map(|s| s.label).collect()
    };
    let no_functions = without(&|s| !s.functions.is_empty());
    if no_functions.len() == inputs.len() {
        return Ok(Default::default());
    }
    if !no_functions.is_empty() {
        warnings.push(format!(
            "{what} has no functions, loops or lines: some inputs attribute no work to functions ({}), and the others' rows alone would not add up to the totals",
            no_functions.join(", ")
        ));
        return Ok(Default::default());
    }
    let functions = merge_functions(inputs)?;
    let loops = merge_loops(inputs)?;
    let no_lines = without(&|s| !s.lines.is_empty());
    let lines = if no_lines.is_empty() {
        merge_lines(inputs)?
    } else {
        if no_lines.len() < inputs.len() {
            warnings.push(format!(
                "{what} has no source lines: some inputs have none ({}), and the others' lines alone would not add up to the totals",
                no_lines.join(", ")
            ));
        }
        Vec::new()
    };
    Ok((functions, loops, lines))
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
    // Ranks on nodes of one kind share their roofs.
    top.machine = first.machine.clone().filter(|m| {
        reports
            .iter()
            .all(|r| r.machine.as_ref().is_some_and(|o| o.identity == m.identity))
    });
    if let Some(m) = &mut top.machine {
        if reports
            .iter()
            .any(|r| r.machine.as_ref().is_some_and(|o| o.host != m.host))
        {
            m.host = "several hosts".into();
        }
    }
    let (regions, region_warnings) = merge_regions(&sources)?;
    top.regions = regions;
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
    let rows: Vec<RowsOf> = sources
        .iter()
        .map(|s| RowsOf {
            label: &s.label,
            functions: &s.report.functions,
            loops: &s.report.loops,
            lines: &s.report.lines,
        })
        .collect();
    (top.functions, top.loops, top.lines) = merge_rows(&rows, "the merge", &mut warnings)?;
    top.sampling = merge_sampling(&sources, &mut warnings)?;
    warnings.extend(region_warnings);
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
            ..Default::default()
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

    /// Code of one function: `fma` 256-bit FMAs (8 FLOP each), `adds`
    /// scalar fp32 adds, 10 instructions per FP instruction, plus `other`.
    fn code(fma: u64, adds: u64, other: u64) -> Counts {
        let mut c = Counts {
            instructions: 10 * (fma + adds) + other,
            ..Default::default()
        };
        if fma > 0 {
            c.add_fp(
                FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
                fma,
                8 * fma,
                FlopOp::Fma,
            );
            c.mem_read.insert(32, 2 * fma);
            c.mem_write.insert(32, fma);
        }
        if adds > 0 {
            c.add_fp(
                FpKey::new(Precision::Fp32, 32, 1, OpClass::Add),
                adds,
                adds,
                FlopOp::Add,
            );
            c.mem_read.insert(4, adds);
        }
        c.mem_read.insert(8, other);
        c
    }

    fn function(module: &str, name: &str, c: &Counts, time_s: Option<f64>) -> FunctionRow {
        let summary = Summary::from_counts(c);
        FunctionRow {
            name: name.into(),
            module: module.into(),
            address: format!("{:#x}", 0x7f00_0000 + name.len()),
            time_s,
            samples: time_s.map(|t| (t * 100.0) as u64),
            arithmetic_intensity: Intensity {
                l1: summary.intensity_l1(),
                dram: None,
            },
            summary,
            ..Default::default()
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn a_loop(
        module: &str,
        function: &str,
        file: &str,
        line: u32,
        header: &str,
        parent: Option<usize>,
        iterations: u64,
        c: &Counts,
    ) -> LoopRow {
        LoopRow {
            function: function.into(),
            module: module.into(),
            file: Some(file.into()),
            line: Some(line),
            header: header.into(),
            parent,
            entries: 1,
            iterations,
            summary: Summary::from_counts(c),
            self_counts: Summary::from_counts(c),
            ..Default::default()
        }
    }

    fn line(module: &str, function: &str, file: &str, line: u32, c: &Counts) -> LineRow {
        LineRow {
            file: Some(file.into()),
            line: Some(line),
            module: module.into(),
            function: function.into(),
            summary: Summary::from_counts(c),
        }
    }

    /// A rank of `./app` calling `kernel` in libkern.so (loaded from
    /// `lib_dir`), with `kernel`'s nested loops, and functions of its own.
    fn attributed(rank: u32) -> Report {
        let app = "/home/u/app";
        let lib = if rank == 0 {
            "/opt/a/libkern.so"
        } else {
            "/scratch/b/libkern.so"
        };
        let n = 1000 * u64::from(rank + 1);
        let (kernel, main) = (code(n, 0, 50), code(0, 0, 300));
        let mut r = Report::new("emulate", vec!["./app".into()]);
        let mut total = Counts::default();
        total.merge(&kernel);
        total.merge(&main);
        r.functions = vec![
            function(lib, "kernel", &kernel, (rank == 0).then_some(1.0)),
            function(app, "main", &main, None),
        ];
        r.lines = vec![
            line(lib, "kernel", "kern.c", 12, &kernel),
            line(app, "main", "app.c", 3, &main),
        ];
        let inner = code(n, 0, 0);
        let outer = kernel.clone();
        let base = 0x7f00_0000 + 0x10_0000 * u64::from(rank);
        let at = |off: u64| format!("{:#x}", base + off);
        if rank == 0 {
            let init = code(0, 7, 20);
            total.merge(&init);
            r.functions.push(function(app, "init", &init, None));
            r.lines.push(line(app, "init", "app.c", 9, &init));
            r.loops = vec![
                a_loop(lib, "kernel", "kern.c", 10, &at(0x100), None, 10, &outer),
                a_loop(lib, "kernel", "kern.c", 12, &at(0x120), Some(0), n, &inner),
            ];
        } else {
            // Another order, and loops rank 0 does not have.
            let (fin_inner, fin_outer) = (code(0, 40, 0), code(0, 50, 5));
            total.merge(&fin_outer);
            r.functions.push(function(app, "finish", &fin_outer, None));
            r.lines.push(line(app, "finish", "app.c", 20, &fin_outer));
            r.loops = vec![
                a_loop(lib, "kernel", "kern.c", 12, &at(0x120), Some(2), n, &inner),
                a_loop(
                    app,
                    "finish",
                    "app.c",
                    21,
                    &at(0x60),
                    Some(3),
                    40,
                    &fin_inner,
                ),
                a_loop(lib, "kernel", "kern.c", 10, &at(0x100), None, 20, &outer),
                a_loop(app, "finish", "app.c", 20, &at(0x40), None, 2, &fin_outer),
            ];
        }
        r.summary = Summary::from_counts(&total);
        r.exit_status = ExitStatus::Code(0);
        r.complete = true;
        r.sampling = Some(Sampling {
            source: "native run".into(),
            interval_s: 0.01,
            samples: 100 * u64::from(rank + 1),
            signals: 50.0,
            unplaced: 1,
        });
        // The region around the kernel, with its own rows.
        let kernel_loops = r.loops.iter().filter(|l| l.function == "kernel");
        r.regions.push(Region {
            name: "solve".into(),
            entries: 1,
            summary: r.functions[0].summary.clone(),
            functions: vec![r.functions[0].clone()],
            loops: kernel_loops
                .map(|l| LoopRow {
                    parent: l.parent.map(|_| usize::from(rank != 0)),
                    ..l.clone()
                })
                .collect(),
            ..Default::default()
        });
        r
    }

    fn attributed_sources() -> Vec<Source> {
        (0..2)
            .map(|i| Source {
                label: format!("rank{i}.json"),
                report: attributed(i),
            })
            .collect()
    }

    #[test]
    fn functions_loops_and_lines_add_up_by_name_and_place() {
        let inputs = attributed_sources();
        for s in &inputs {
            let sum = sum_summaries(s.report.functions.iter().map(|f| ("", &f.summary)));
            assert_eq!(sum.unwrap(), s.report.summary, "inputs hold the invariant");
        }
        let m = merge(inputs).unwrap();
        let r = &m.report;
        assert!(
            !r.warnings.iter().any(|w| w.starts_with("the merge has no")),
            "{:?}",
            r.warnings
        );
        // The invariant: over functions, and over lines, the totals exactly.
        let over_functions = sum_summaries(r.functions.iter().map(|f| ("", &f.summary))).unwrap();
        assert_eq!(over_functions, r.summary);
        let over_lines = sum_summaries(r.lines.iter().map(|l| ("", &l.summary))).unwrap();
        assert_eq!(over_lines, r.summary);

        // libkern.so from two directories is one function; by FLOP, then instructions.
        let names: Vec<(&str, &str, u64)> = r
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.module.as_str(), f.summary.flop.total))
            .collect();
        assert_eq!(
            names,
            [
                ("kernel", "/opt/a/libkern.so", 24_000),
                ("finish", "/home/u/app", 50),
                ("init", "/home/u/app", 7),
                ("main", "/home/u/app", 0),
            ]
        );
        let kernel = &r.functions[0];
        assert_eq!(kernel.summary.fp_instructions[0].count, 3000);
        assert_eq!(kernel.summary.instructions, Some(30_100));
        assert_eq!(
            kernel.summary.bytes,
            Some(ByteTotals {
                read: 192_000 + 800,
                written: 96_000
            })
        );
        assert_eq!(kernel.address, "0x7f000006");
        // Time where known: rank 1 has none, so the sum is rank 0's.
        assert_eq!(kernel.time_s, Some(1.0));
        assert_eq!(kernel.samples, Some(100));
        assert_eq!(kernel.gflops, Some(24_000.0 / 1e9));
        assert_eq!(
            kernel.arithmetic_intensity.l1,
            Some(24_000.0 / (192_800.0 + 96_000.0))
        );
        assert_eq!(
            (r.functions[3].time_s, r.functions[3].samples),
            (None, None)
        );
        let sampling = r.sampling.as_ref().unwrap();
        assert_eq!((sampling.samples, sampling.unplaced), (300, 2));
        assert_eq!((sampling.interval_s, sampling.signals), (0.01, 100.0));
        assert_eq!(r.lines.len(), 4);
        assert_eq!(r.lines[0].summary.flop.total, 24_000);

        // Loops: the two of kernel are one row each; rank 1's own loops
        // follow, their parent pointing into the merged list.
        // (function, line, parent, entries, iterations, header)
        type Row<'a> = (&'a str, u32, Option<usize>, u64, u64, &'a str);
        let loops: Vec<Row> = r
            .loops
            .iter()
            .map(|l| {
                (
                    l.function.as_str(),
                    l.line.unwrap(),
                    l.parent,
                    l.entries,
                    l.iterations,
                    l.header.as_str(),
                )
            })
            .collect();
        assert_eq!(
            loops,
            [
                ("kernel", 10, None, 2, 30, "0x7f000100"),
                ("kernel", 12, Some(0), 2, 3000, "0x7f000120"),
                ("finish", 21, Some(3), 1, 40, "0x7f100060"),
                ("finish", 20, None, 1, 2, "0x7f100040"),
            ]
        );
        assert_eq!(r.loops[0].summary.flop.total, 24_000);
        assert_eq!(r.loops[1].self_counts.flop.total, 24_000);
        assert_eq!(r.loops[1].flop_per_iteration, Some(8.0));
        assert_eq!(r.loops[1].bytes_per_iteration, Some(96.0));
        assert_eq!(r.loops[0].flop_per_iteration, Some(800.0));

        // A region's own rows: merged alike (without lines here).
        let solve = &r.regions[0];
        assert_eq!(solve.functions.len(), 1);
        assert_eq!(solve.functions[0].summary, r.functions[0].summary);
        let nest: Vec<(u32, Option<usize>, u64)> = solve
            .loops
            .iter()
            .map(|l| (l.line.unwrap(), l.parent, l.iterations))
            .collect();
        assert_eq!(nest, [(10, None, 30), (12, Some(0), 3000)]);
        assert!(solve.lines.is_empty());
    }

    #[test]
    fn rows_are_dropped_when_some_input_attributes_nothing() {
        let mut inputs = attributed_sources();
        inputs[1].report.functions.clear();
        inputs[1].report.loops.clear();
        inputs[1].report.lines.clear();
        let m = merge(inputs).unwrap();
        assert!(m.report.functions.is_empty() && m.report.loops.is_empty());
        assert!(m.report.lines.is_empty());
        assert!(m.report.warnings.contains(&"the merge has no functions, loops or lines: some inputs attribute no work to functions (rank1.json), and the others' rows alone would not add up to the totals".to_string()), "{:?}", m.report.warnings);
        // Without lines in one input: functions and loops, no lines.
        let mut inputs = attributed_sources();
        inputs[0].report.lines.clear();
        inputs[0].report.sampling.as_mut().unwrap().interval_s = 0.001;
        let m = merge(inputs).unwrap();
        assert_eq!(m.report.functions.len(), 4);
        assert!(m.report.lines.is_empty());
        assert!(m.report.warnings.contains(&"the merge has no source lines: some inputs have none (rank0.json), and the others' lines alone would not add up to the totals".to_string()), "{:?}", m.report.warnings);
        // Sampled at another interval: no sampling stated.
        assert_eq!(m.report.sampling, None);
        assert!(m
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("the inputs were sampled differently")));
    }
}

#[cfg(test)]
mod job_tests {
    use super::*;

    fn source(label: &str, engine: &str, command: &[&str]) -> Source {
        Source {
            label: label.into(),
            report: Report::new(engine, command.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn ranks_of_one_job_merge_and_different_programs_or_engines_are_named() {
        let rank = |l| source(l, "emulate", &["./app", "in.dat"]);
        assert_eq!(not_one_job(&[rank("r0.json"), rank("r1.json")]), None);
        // Ranks may read their own inputs.
        let other_input = source("r2.json", "emulate", &["./app", "in.2.dat"]);
        assert_eq!(not_one_job(&[rank("r0.json"), other_input]), None);
        assert_eq!(
            not_one_job(&[
                rank("a.json"),
                source("b.json", "emulate", &["./app-avx2", "in.dat"])
            ]),
            Some("a.json ran `./app in.dat` and b.json ran `./app-avx2 in.dat`".into())
        );
        assert_eq!(
            not_one_job(&[
                rank("a.json"),
                source("b.json", "native", &["./app", "in.dat"])
            ]),
            Some("a.json was counted by the emulate engine and b.json by the native engine".into())
        );
    }
}
