//! `functions`: one row per function of SDE's per-function histograms
//! (`EMIT_PER_FUNCTION_STATS`), counted by the same arithmetic as the totals.
//!
//! - **Which histograms.** The whole process's function report when the file
//!   has one (SDE's `-global_functions`, on by default): it is exact over all
//!   threads for every function it lists. Otherwise the per-thread reports,
//!   each function summed over the threads that list it (the report has no
//!   per-thread function rows).
//! - **Counts.** Each histogram goes through [`crate::summary`] like the
//!   totals, judged by the process's counters (a function leaves out what
//!   the totals leave out: masked lanes without a mask profile, FMA widths
//!   an iclass mix does not tell), so that the rows add up to the totals.
//! - **Masked FLOP.** The mask profile's summary tables are per thread, not
//!   per function. Its per-instruction details are placed in a function by
//!   `<address>` (within the function's `[start, end)`; by `<function>` name
//!   when the mix gives no range); a function's masked FP computations are
//!   its masked details other than moves and conversions
//!   ([`crate::iform::DisassembledFp`]). That is used only where it checks
//!   out: the details' executions must equal the function's
//!   `*elements_fp_<p>_<n>_masked` counts shape by shape, and each thread's
//!   details must add up to its summary table; otherwise the function's
//!   masked lanes are left out and a warning names it.
//! - **What SDE did not list.** SDE writes only the functions it ranks
//!   highest by instructions. When the listed ones do not add up to the
//!   totals, a warning says what share of the FLOP and instructions they
//!   hold, and the rest becomes one more row, last, named [`UNLISTED`]
//!   (totals minus the listed functions, field by field), so that `functions`
//!   adds up to the totals as the report schema requires. No such row is
//!   made when the listed functions exceed the totals (sections from
//!   different runs) or when a function's masked lanes could not be placed:
//!   the rest would not be only unlisted functions.
//! - **Row fields.** `name` as SDE prints it; for `UNKNOWN` (no symbol),
//!   `<image file name>+0x<offset from the image's start>` when the image list
//!   gives the start, else `UNKNOWN@0x<address>`. `module` is SDE's image
//!   path (`IMG:`), `address` the function's start (`0x...`, empty when not
//!   printed); `file`, `line`, `inclusive` and the times are null: SDE's
//!   histograms are exclusive and untimed.

use crate::error::SdeError;
use crate::mask::{row_precision, FmaDetail, FpDetail, MaskProfile, MaskThread, SummaryRow};
use crate::mix::{FunctionHistogram, Histogram, Image, MixFile};
use crate::summary::{masked_counts, summarize_in, MaskInput};
use flopscope_model::{
    ByteTotals, FlopTotals, FpInstructionRow, FunctionRow, Intensity, MemAccesses, Precision,
    Summary,
};
use std::collections::{BTreeMap, BTreeSet};

/// The name of the row holding what SDE counted outside the functions it listed.
pub const UNLISTED: &str = "[functions SDE did not list]";

/// The rows and what the user should know about them.
pub(crate) struct Functions {
    pub rows: Vec<FunctionRow>,
    pub warnings: Vec<String>,
}

/// A function's identity across threads: (name, image, range).
type EntryKey = (String, Option<String>, Option<(u64, u64)>);

/// One function, summed over the threads that list it.
struct Entry {
    name: String,
    image: Option<String>,
    range: Option<(u64, u64)>,
    /// The threads whose reports list it; `None` for the process's report.
    tids: Option<BTreeSet<u64>>,
    histogram: Histogram,
}

impl Entry {
    fn of(f: &FunctionHistogram, tid: Option<u64>) -> Entry {
        Entry {
            name: f.name.clone(),
            image: f.image.clone(),
            range: f.range,
            tids: tid.map(|t| BTreeSet::from([t])),
            histogram: f.histogram.clone(),
        }
    }

    /// Whether a mask profile detail lies in this function.
    fn holds(&self, d: &FpDetail) -> bool {
        match (self.range, d.address) {
            (Some((start, end)), Some(a)) => start <= a && a < end,
            _ => {
                d.function.as_deref() == Some(self.name.as_str())
                    && match (&self.image, &d.image) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    }
            }
        }
    }
}

/// The function rows of one process, whose totals are `totals`.
pub(crate) fn functions(
    mix: &MixFile,
    mask: Option<&MaskProfile>,
    totals: &Summary,
) -> Result<Functions, SdeError> {
    let mut warnings = Vec::new();
    let (entries, source) = entries(mix)?;
    if entries.is_empty() {
        warnings.push(if mix.function_tables.is_empty() {
            "no per-function sections (`EMIT_PER_FUNCTION_STATS`): `functions` is empty; SDE's `-mix` / `-omix` \
             writes one per thread, and one for the whole process with `-global_functions 1` (the default): give \
             the whole file SDE wrote, or rerun SDE without turning those reports off"
                .to_string()
        } else {
            "the per-function sections (`EMIT_PER_FUNCTION_STATS`) list no function: `functions` is empty".to_string()
        });
        return Ok(Functions {
            rows: Vec::new(),
            warnings,
        });
    }

    let profile_off = mask.and_then(profile_disagreement);
    let mut unplaced: Vec<String> = Vec::new();
    let mut rows = Vec::with_capacity(entries.len() + 1);
    for e in &entries {
        let synthetic;
        let input = match mask {
            Some(profile) => {
                let (thread, mismatch) = function_mask(e, profile, profile_off.is_some());
                if let Some(m) = mismatch {
                    unplaced.push(m);
                }
                synthetic = thread;
                MaskInput::Present(vec![&synthetic])
            }
            None => MaskInput::Absent,
        };
        // The function's notes repeat the totals' ones (same rules): not kept.
        let mut summary = summarize_in(&e.histogram, &input, &mix.name, Some(&mix.global))?.summary;
        conform(&mut summary, totals);
        rows.push(FunctionRow {
            name: display_name(e, &mix.images),
            module: e.image.clone().unwrap_or_default(),
            address: e
                .range
                .map(|(start, _)| format!("{start:#x}"))
                .unwrap_or_default(),
            arithmetic_intensity: Intensity {
                l1: summary.intensity_l1(),
                dram: None,
            },
            summary,
            ..FunctionRow::default()
        });
    }
    FunctionRow::sort(&mut rows);

    if let Some(off) = &profile_off {
        warnings.push(format!(
            "the mask profile's per-instruction details do not add up to its summary tables ({off}): \
             masked FLOP cannot be placed in functions"
        ));
    }
    if !unplaced.is_empty() {
        warnings.push(format!(
            "the masked FP lanes of {} function(s) are left out of their rows, so `functions` does not add up \
             to the totals: {}",
            unplaced.len(),
            unplaced.join("; ")
        ));
    }

    let listed = sum_rows(&rows);
    match remainder(totals, &listed) {
        Some(rest) if is_zero(&rest) => {}
        Some(rest) => {
            let share = coverage(rows.len(), &source, &listed, totals);
            if unplaced.is_empty() {
                warnings.push(format!(
                    "{share}: SDE writes only the functions it ranks highest by instructions; the rest is the row `{UNLISTED}`"
                ));
                rows.push(FunctionRow {
                    name: UNLISTED.to_string(),
                    arithmetic_intensity: Intensity {
                        l1: rest.intensity_l1(),
                        dram: None,
                    },
                    summary: rest,
                    ..FunctionRow::default()
                });
            } else {
                warnings.push(format!(
                    "{share}; the rest is not given as a row, as it would hold the masked FLOP left out of listed functions"
                ));
            }
        }
        None => warnings.push(format!(
            "the per-function sections add up to more than the global section ({}): they are not from the same run; \
             `functions` does not add up to the totals (the rows are as SDE printed them, with none for the rest)",
            excess(&listed, totals).join(", ")
        )),
    }
    Ok(Functions { rows, warnings })
}

/// The functions to report, and where they come from (for messages).
fn entries(mix: &MixFile) -> Result<(Vec<Entry>, String), SdeError> {
    if let Some(t) = mix.function_tables.iter().find(|t| t.tid.is_none()) {
        let source = format!("the whole-process function report at line {}", t.line);
        return Ok((
            t.functions.iter().map(|f| Entry::of(f, None)).collect(),
            source,
        ));
    }
    let mut out: Vec<Entry> = Vec::new();
    let mut index: BTreeMap<EntryKey, usize> = BTreeMap::new();
    let mut tids = Vec::new();
    for t in &mix.function_tables {
        let Some(tid) = t.tid else { continue };
        tids.push(tid.to_string());
        for f in &t.functions {
            let key = (f.name.clone(), f.image.clone(), f.range);
            match index.get(&key) {
                Some(&i) => {
                    let e = &mut out[i];
                    for (counter, c) in &f.histogram.counters {
                        e.histogram.add(counter, c.count, c.line, &mix.name)?;
                    }
                    e.tids.get_or_insert_with(BTreeSet::new).insert(tid);
                }
                None => {
                    index.insert(key, out.len());
                    out.push(Entry::of(f, Some(tid)));
                }
            }
        }
    }
    let source = match tids.len() {
        1 => format!("the function report of thread {}", tids[0]),
        _ => format!("the function reports of threads {}", tids.join(", ")),
    };
    Ok((out, source))
}

/// `name` as SDE printed it, or a placed name for code without a symbol.
fn display_name(e: &Entry, images: &[Image]) -> String {
    let (Some((start, _)), true) = (e.range, e.name == "UNKNOWN") else {
        return e.name.clone();
    };
    let image = images.iter().find(|i| {
        e.image.as_deref().is_none_or(|p| p == i.path) && i.low <= start && start <= i.high
    });
    match image {
        Some(i) => {
            let file = i.path.rsplit('/').next().unwrap_or(&i.path);
            format!("{file}+{:#x}", start - i.low)
        }
        None => format!("UNKNOWN@{start:#x}"),
    }
}

/// Where a thread's details and summary table disagree on masked FP
/// computations (executions, lanes), if anywhere.
fn profile_disagreement(p: &MaskProfile) -> Option<String> {
    for t in &p.threads {
        let mut table: BTreeMap<Precision, (u128, u128)> = BTreeMap::new();
        for r in t.rows.iter().filter(|r| r.is_masked_fp_computation()) {
            if let Some(precision) = row_precision(r) {
                let slot = table.entry(precision).or_default();
                slot.0 += u128::from(r.icount);
                slot.1 += u128::from(r.comp_count);
            }
        }
        let mut details: BTreeMap<Precision, (u128, u128)> = BTreeMap::new();
        for d in t.fp.iter().filter(|d| d.form.masked) {
            let slot = details.entry(d.form.precision).or_default();
            slot.0 += u128::from(d.executions);
            slot.1 += u128::from(d.computations);
        }
        for precision in table.keys().chain(details.keys()) {
            let (a, b) = (
                table.get(precision).copied().unwrap_or_default(),
                details.get(precision).copied().unwrap_or_default(),
            );
            if a != b {
                return Some(format!(
                    "thread {}, {}: {} masked instructions computing {} lanes in the table, {} computing {} in the details",
                    t.tid,
                    precision.key(),
                    a.0,
                    a.1,
                    b.0,
                    b.1
                ));
            }
        }
    }
    None
}

/// The mask profile as far as it concerns one function: its FMA details, and
/// summary rows made of its masked details when they match its counters.
/// The second value says why they do not, when they do not.
fn function_mask(
    e: &Entry,
    profile: &MaskProfile,
    profile_off: bool,
) -> (MaskThread, Option<String>) {
    let details: Vec<&FpDetail> = profile
        .threads
        .iter()
        .filter(|t| e.tids.as_ref().is_none_or(|s| s.contains(&t.tid)))
        .flat_map(|t| &t.fp)
        .filter(|d| e.holds(d))
        .collect();
    let mut thread = MaskThread {
        fma: details
            .iter()
            .filter(|d| d.form.fma)
            .map(|d| FmaDetail {
                form: d.form.as_fma(),
                executions: d.executions,
                computations: d.computations,
                line: d.line,
            })
            .collect(),
        ..MaskThread::default()
    };
    let mut by_shape: BTreeMap<(Precision, u32), u64> = BTreeMap::new();
    let mut rows: BTreeMap<(Precision, u32, u32), SummaryRow> = BTreeMap::new();
    for d in details.iter().filter(|d| d.form.masked) {
        let Some(lanes) = d.form.lanes() else {
            continue;
        };
        let p = d.form.precision;
        let slot = by_shape.entry((p, lanes)).or_default();
        *slot = slot.saturating_add(d.executions);
        // A scalar row is as wide as its element: its FLOP are `<p>.scalar`.
        let bits = if d.form.scalar {
            p.element_bits()
        } else {
            d.form.vector_bits.unwrap_or(0)
        };
        let row = rows.entry((p, bits, lanes)).or_insert_with(|| SummaryRow {
            masked: true,
            category: "mask".to_string(),
            vector_bits: bits,
            max_elements: lanes,
            element_bits: p.element_bits(),
            element_type: "fp".to_string(),
            icount: 0,
            comp_count: 0,
            line: d.line,
        });
        row.icount = row.icount.saturating_add(d.executions);
        row.comp_count = row.comp_count.saturating_add(d.computations);
    }
    let mut counted = masked_counts(&e.histogram);
    counted.retain(|_, n| *n > 0);
    by_shape.retain(|_, n| *n > 0);
    if counted.is_empty() && by_shape.is_empty() {
        return (thread, None);
    }
    if profile_off {
        return (
            thread,
            Some(format!("{} (see the mask profile warning)", e.name)),
        );
    }
    if counted != by_shape {
        let shapes = |m: &BTreeMap<(Precision, u32), u64>| -> String {
            let parts: Vec<String> = m
                .iter()
                .map(|((p, l), n)| format!("{n} {} x{l}", p.key()))
                .collect();
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join(", ")
            }
        };
        let place = match e.range {
            Some((start, end)) => format!("at [{start:#x}, {end:#x})"),
            None => "named so".to_string(),
        };
        return (
            thread,
            Some(format!(
                "{}: the mix counts masked FP instructions {}, the profile's details {place} {}",
                e.name,
                shapes(&counted),
                shapes(&by_shape)
            )),
        );
    }
    thread.rows = rows.into_values().collect();
    (thread, None)
}

/// Makes a function's summary know what the totals know: no FMA split where
/// the totals have none, bytes (zero when SDE printed no access row for the
/// function) exactly where the totals have bytes.
fn conform(s: &mut Summary, totals: &Summary) {
    if !totals.flop_by_op.contains_key("fma") {
        s.flop_by_op.remove("fma");
    }
    match (totals.bytes, s.bytes) {
        (None, _) => {
            s.bytes = None;
            s.mem_accesses = None;
        }
        (Some(_), None) => {
            s.bytes = Some(ByteTotals::default());
            s.mem_accesses = Some(MemAccesses::default());
        }
        _ => {}
    }
}

/// The rows' counts added key by key (a key a row lacks counts 0 there);
/// bytes and instructions only when every row has them. Saturating: a sum
/// past 64 bits exceeds the totals, which [`remainder`] reports.
fn sum_rows(rows: &[FunctionRow]) -> Summary {
    fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
        for (k, v) in from {
            let slot = into.entry(k.clone()).or_default();
            *slot = slot.saturating_add(*v);
        }
    }
    let mut out = Summary {
        bytes: Some(ByteTotals::default()),
        mem_accesses: Some(MemAccesses::default()),
        instructions: Some(0),
        ..Summary::default()
    };
    let mut fp_rows: BTreeMap<RowKey, FpInstructionRow> = BTreeMap::new();
    let mut widths_known = true;
    for s in rows.iter().map(|r| &r.summary) {
        out.flop.total = out.flop.total.saturating_add(s.flop.total);
        for p in Precision::ALL {
            if let Some(v) = s.flop.get(p) {
                let sum = out.flop.get(p).unwrap_or(0).saturating_add(v);
                out.flop.set(p, Some(sum));
            }
        }
        add_map(&mut out.flop_by_op, &s.flop_by_op);
        add_map(&mut out.flop_by_width, &s.flop_by_width);
        widths_known &= s.flop.total == 0 || !s.flop_by_width.is_empty();
        add_map(&mut out.fp_elements, &s.fp_elements);
        for r in &s.fp_instructions {
            let slot = fp_rows
                .entry(row_key(r))
                .or_insert_with(|| FpInstructionRow {
                    count: 0,
                    flop: 0,
                    ..r.clone()
                });
            slot.count = slot.count.saturating_add(r.count);
            slot.flop = slot.flop.saturating_add(r.flop);
        }
        out.bytes = match (out.bytes, s.bytes) {
            (Some(a), Some(b)) => Some(ByteTotals {
                read: a.read.saturating_add(b.read),
                written: a.written.saturating_add(b.written),
            }),
            _ => None,
        };
        out.mem_accesses = match (out.mem_accesses.take(), &s.mem_accesses) {
            (Some(mut a), Some(b)) => {
                add_map(&mut a.read, &b.read);
                add_map(&mut a.write, &b.write);
                Some(a)
            }
            _ => None,
        };
        out.instructions = match (out.instructions, s.instructions) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            _ => None,
        };
    }
    if !widths_known {
        // Some function's FLOP has no width: the rest's widths are unknown.
        out.flop_by_width.clear();
    }
    out.fp_instructions = fp_rows.into_values().collect();
    out
}

type RowKey = (Precision, u32, u32, flopscope_model::OpClass, bool);

fn row_key(r: &FpInstructionRow) -> RowKey {
    (r.precision, r.width_bits, r.lanes, r.op, r.masked)
}

/// `t - l`, map by map, without zero entries; `None` where `l` holds more
/// than `t`. A split the totals do not have (FLOP by op or by width), or
/// that the listed functions do not all have (by width), is left out.
fn remainder(t: &Summary, l: &Summary) -> Option<Summary> {
    fn sub_map(
        t: &BTreeMap<String, u64>,
        l: &BTreeMap<String, u64>,
    ) -> Option<BTreeMap<String, u64>> {
        let mut out = t.clone();
        for (k, b) in l {
            let a = out.get(k).copied().unwrap_or(0);
            out.insert(k.clone(), a.checked_sub(*b)?);
        }
        out.retain(|_, v| *v > 0);
        Some(out)
    }
    let mut flop = FlopTotals {
        total: t.flop.total.checked_sub(l.flop.total)?,
        ..FlopTotals::default()
    };
    for p in Precision::ALL {
        let v = match (t.flop.get(p), l.flop.get(p)) {
            (Some(a), Some(b)) => Some(a.checked_sub(b)?),
            (Some(a), None) => Some(a),
            (None, Some(b)) if b > 0 => return None,
            _ => None,
        };
        flop.set(p, v);
    }
    let flop_by_op = if t.flop_by_op.is_empty() {
        BTreeMap::new()
    } else {
        sub_map(&t.flop_by_op, &l.flop_by_op)?
    };
    let flop_by_width =
        if t.flop_by_width.is_empty() || (l.flop_by_width.is_empty() && l.flop.total > 0) {
            BTreeMap::new()
        } else {
            sub_map(&t.flop_by_width, &l.flop_by_width)?
        };
    let fp_elements = sub_map(&t.fp_elements, &l.fp_elements)?;

    let mut rows: BTreeMap<RowKey, FpInstructionRow> = t
        .fp_instructions
        .iter()
        .map(|r| (row_key(r), r.clone()))
        .collect();
    for r in &l.fp_instructions {
        match rows.get_mut(&row_key(r)) {
            Some(x) => {
                x.count = x.count.checked_sub(r.count)?;
                x.flop = x.flop.checked_sub(r.flop)?;
            }
            None if r.count == 0 && r.flop == 0 => {}
            None => return None,
        }
    }
    let fp_instructions = rows
        .into_values()
        .filter(|r| r.count > 0 || r.flop > 0)
        .collect();

    let bytes = match (t.bytes, l.bytes) {
        (Some(a), Some(b)) => Some(ByteTotals {
            read: a.read.checked_sub(b.read)?,
            written: a.written.checked_sub(b.written)?,
        }),
        _ => None,
    };
    let mem_accesses = match (&t.mem_accesses, &l.mem_accesses) {
        (Some(a), Some(b)) => Some(MemAccesses {
            read: sub_map(&a.read, &b.read)?,
            write: sub_map(&a.write, &b.write)?,
        }),
        _ => None,
    };
    let instructions = match (t.instructions, l.instructions) {
        (Some(a), Some(b)) => Some(a.checked_sub(b)?),
        _ => None,
    };
    Some(Summary {
        flop,
        flop_by_op,
        flop_by_width,
        fp_elements,
        fp_instructions,
        bytes,
        mem_accesses,
        instructions,
    })
}

/// Nothing left: the listed functions are the whole run.
fn is_zero(s: &Summary) -> bool {
    s.flop.total == 0
        && s.instructions.unwrap_or(0) == 0
        && s.bytes.is_none_or(|b| b.read == 0 && b.written == 0)
        && s.fp_elements.is_empty()
        && s.fp_instructions.is_empty()
        && s.mem_accesses
            .as_ref()
            .is_none_or(|m| m.read.is_empty() && m.write.is_empty())
}

/// "SDE lists 3 functions (...); they hold X of the Y FLOP (Z%) and ..."
fn coverage(n: usize, source: &str, listed: &Summary, totals: &Summary) -> String {
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            String::new()
        } else {
            format!(" ({:.2}%)", 100.0 * part as f64 / whole as f64)
        }
    };
    let (lf, tf) = (listed.flop.total, totals.flop.total);
    let mut out = format!(
        "SDE lists {n} function{} in {source}; they hold {lf} of the {tf} FLOP{}",
        if n == 1 { "" } else { "s" },
        share(lf, tf)
    );
    if let (Some(li), Some(ti)) = (listed.instructions, totals.instructions) {
        out.push_str(&format!(
            " and {li} of the {ti} instructions{}",
            share(li, ti)
        ));
    }
    out
}

/// The counts in which the listed functions exceed the totals.
fn excess(l: &Summary, t: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |what: &str, a: u64, b: u64| {
        if a > b {
            out.push(format!("{what} {a} vs {b}"));
        }
    };
    check("FLOP", l.flop.total, t.flop.total);
    check(
        "instructions",
        l.instructions.unwrap_or(0),
        t.instructions.unwrap_or(u64::MAX),
    );
    if let (Some(a), Some(b)) = (l.bytes, t.bytes) {
        check("bytes read", a.read, b.read);
        check("bytes written", a.written, b.written);
    }
    for (k, a) in &l.fp_elements {
        check(k, *a, t.fp_elements.get(k).copied().unwrap_or(0));
    }
    if out.is_empty() {
        out.push("in their FMA rows or access sizes".to_string());
    }
    out
}
