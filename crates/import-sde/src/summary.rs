//! The arithmetic: one histogram (and the mask profile threads it covers) to
//! a flopscope [`Summary`].
//!
//! **One truth.** The histogram becomes one set of instruction rows
//! (`fp_instructions`: precision, width, lanes, operation, masked -> count and
//! FLOP), and every other figure is their sum: `flop.total`, `flop.<precision>`,
//! `flop_by_width` and `flop_by_op`. They add up whatever the input.
//!
//! FLOP of precision p, following Intel's method (shared/seeds/000):
//!
//! 1. unmasked elements: `*elements_fp_<p>_<n>` x n, for every n;
//! 2. masked elements: `comp_count` of the mask profile's masked `mask`-category
//!    `fp` rows of element size p (needs the profile);
//! 3. the second FLOP of every FMA lane (the counters above count an FMA once):
//!    - VEX forms (no opmask): executions x lanes;
//!    - EVEX forms (the iform carries `MASKmskw` even for k0) and scalar
//!      iclass names: executions x lanes, less the lanes the profile's masked
//!      FMA instructions left inactive (executions x lanes - computation
//!      count). Without a profile, and if a masked instruction of that
//!      precision and lane count ran (`*elements_fp_<p>_<n>_masked` > 0),
//!      these are not counted and a warning says by how much FLOP may be
//!      understated; when no such instruction ran, no FMA of that shape can
//!      have been masked and executions x lanes is exact. A function's
//!      histogram is judged by the process's counters (`summarize_in`), so
//!      that the functions leave out what the totals leave out.
//!    - packed iclass names (`VFMADD231PD`, `-mix` without `-iform`) do not
//!      tell xmm from zmm: not counted, and a warning gives the range.
//!
//! **Rows.** An elements counter `*elements_fp_<p>_<n>` of C instructions is
//! n lanes wide (`_1` is scalar, else n x element bits). Its C instructions
//! are split by operation with the instruction rows of the same shape: the
//! FMA forms first, then the other arithmetic forms the names tell
//! ([`crate::iform::arithmetic_mnemonic`]: an iform's width, a scalar
//! iclass, or a packed iclass when p has one packed width only); what no
//! name accounts for (compares, which SDE counts too, and EVEX forms of a
//! shape that also ran masked) is `other`. The profile's masked rows become
//! masked rows: FMA from its instruction details, the rest `other`; a
//! 128-bit row is scalar when the mix's masked counters of p are all scalar.
//!
//! **Cross-checks** (each a warning naming both figures): instruction rows
//! of a shape against its elements counter, FMA rows against the elements
//! counters, the profile against the mix; an elements counter whose lanes
//! cannot be (`*elements_fp_double_3`, `_16` for double) is named with its
//! line and not counted.
//!
//! Bytes: size x count over every `*mem-read-<size>` / `*mem-write-<size>`
//! row, whatever the size (XSAVE areas are hundreds of bytes). `*mem-read` and
//! `*mem-write` without a size count memory operands, not bytes.

use crate::error::SdeError;
use crate::iform::{fp_histogram_name, Encoding, FmaForm};
use crate::mask::{row_precision, MaskThread};
use crate::mix::Histogram;
use flopscope_model::{
    width_key, ByteTotals, FlopOp, FlopTotals, FpInstructionRow, FpKey, MemAccesses, OpClass,
    Precision, Summary,
};
use std::collections::{BTreeMap, BTreeSet};

/// Which mask profile threads cover a histogram.
#[derive(Debug, Clone)]
pub(crate) enum MaskInput<'a> {
    /// No profile was given.
    Absent,
    /// The profile's threads for this histogram (all of them for the global
    /// histogram, the one with the same number for a thread; none if the
    /// profile has no such thread).
    Present(Vec<&'a MaskThread>),
}

/// A summary and what the user should know about it.
pub(crate) struct Summarized {
    pub summary: Summary,
    pub notes: Vec<String>,
}

/// `elements_fp_<word>_<n>[_masked]` -> (word, n, masked).
fn elements_counter(rest: &str) -> Option<(&str, u32, bool)> {
    let (rest, masked) = match rest.strip_suffix("_masked") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (word, lanes) = rest.rsplit_once('_')?;
    let lanes = lanes.parse::<u32>().ok().filter(|n| *n > 0)?;
    Some((word, lanes, masked))
}

fn precision_of_word(word: &str) -> Option<Precision> {
    Precision::ALL
        .into_iter()
        .find(|p| p.sde_word() == Some(word))
}

/// Lanes a register of at most 512 bits can hold: a power of two.
fn possible_lanes(p: Precision, lanes: u32) -> bool {
    lanes.is_power_of_two() && u64::from(lanes) * u64::from(p.element_bits()) <= 512
}

/// The `width_bits` of a row of `lanes` elements of `p`.
fn width_of(p: Precision, lanes: u32) -> u32 {
    lanes.saturating_mul(p.element_bits())
}

/// A decoded elements counter name: precision, lanes, masked.
fn decoded(name: &str) -> Option<(Precision, u32, bool)> {
    let rest = name.strip_prefix("*elements_fp_")?;
    elements_counter(rest)
        .and_then(|(w, n, m)| Some((precision_of_word(w)?, n, m)))
        .filter(|(p, n, _)| possible_lanes(*p, *n))
}

/// What one histogram's rows say, before any arithmetic.
#[derive(Default)]
struct Counters {
    /// `*elements_fp_<p>_<n>` instruction counts.
    elements: BTreeMap<(Precision, u32), u128>,
    /// `*elements_fp_<p>_<n>_masked` instruction counts.
    masked: BTreeMap<(Precision, u32), u128>,
    /// Precisions SDE printed at least one elements counter for.
    counted: BTreeSet<Precision>,
    fp_elements: BTreeMap<String, u64>,
    mem_read: BTreeMap<u32, u64>,
    mem_write: BTreeMap<u32, u64>,
    instructions: Option<u64>,
    /// FP arithmetic instruction rows: (name, operation, shape, count).
    forms: Vec<(String, OpClass, FmaForm, u128)>,
}

fn read_counters(h: &Histogram, file: &str, notes: &mut Vec<String>) -> Result<Counters, SdeError> {
    let mut c = Counters::default();
    for (name, row) in &h.counters {
        let count = u128::from(row.count);
        if name.starts_with("*elements_fp_") {
            c.fp_elements.insert(name[1..].to_string(), row.count);
            match decoded(name) {
                Some((p, lanes, masked)) => {
                    c.counted.insert(p);
                    let map = if masked { &mut c.masked } else { &mut c.elements };
                    *map.entry((p, lanes)).or_default() += count;
                }
                None => notes.push(format!(
                    "`{name}` (line {}) is not an elements counter SDE writes (`*elements_fp_<double|single|half|bf16>_<lanes>`, \
                     lanes a power of two that fits 512 bits): its {} instructions are not counted as FLOP",
                    row.line, row.count
                )),
            }
        } else if let Some((write, size)) = access_size(name) {
            let size = size.parse::<u32>().map_err(|_| {
                SdeError::parse(
                    file,
                    row.line,
                    "a memory access size below 2^32 bytes",
                    format!("`{name}`"),
                )
            })?;
            let hist = if write {
                &mut c.mem_write
            } else {
                &mut c.mem_read
            };
            let slot = hist.entry(size).or_default();
            *slot = slot.saturating_add(row.count);
        } else if name == "*total" {
            c.instructions = Some(row.count);
        } else if let Some((op, form)) = fp_histogram_name(name) {
            c.forms.push((name.clone(), op, form, count));
        }
    }
    Ok(c)
}

/// `*elements_fp_<p>_<n>_masked` counts of a histogram, by (precision, n).
pub(crate) fn masked_counts(h: &Histogram) -> BTreeMap<(Precision, u32), u64> {
    let mut out: BTreeMap<(Precision, u32), u64> = BTreeMap::new();
    for (name, c) in &h.counters {
        if let Some((p, lanes, true)) = decoded(name) {
            let slot = out.entry((p, lanes)).or_default();
            *slot = slot.saturating_add(c.count);
        }
    }
    out
}

/// The instruction rows: key -> (executions, FLOP).
#[derive(Default)]
struct Rows(BTreeMap<FpKey, (u128, u128)>);

impl Rows {
    /// Adds `count` executions of (precision, lanes, width, op, masked) doing `flop` FLOP.
    fn add(
        &mut self,
        shape: (Precision, u32, u32),
        op: OpClass,
        masked: bool,
        count: u128,
        flop: u128,
    ) {
        if count == 0 && flop == 0 {
            return;
        }
        let (precision, lanes, width_bits) = shape;
        let key = FpKey {
            precision,
            width_bits,
            lanes,
            op,
            masked,
        };
        let slot = self.0.entry(key).or_default();
        slot.0 += count;
        slot.1 += flop;
    }
}

fn fit(value: u128, file: &str, line: usize, what: &str) -> Result<u64, SdeError> {
    u64::try_from(value).map_err(|_| {
        SdeError::parse(
            file,
            line,
            format!("{what} that fit in 64 bits"),
            format!("{value}, from the counts of this section"),
        )
    })
}

fn counter_name(p: Precision, lanes: u32) -> String {
    format!("`*elements_fp_{}_{lanes}`", p.sde_word().unwrap_or("?"))
}

pub(crate) fn summarize(
    h: &Histogram,
    mask: &MaskInput,
    file: &str,
) -> Result<Summarized, SdeError> {
    summarize_in(h, mask, file, None)
}

/// [`summarize`] for a part of `scope` (a function of the process): without
/// a mask profile, an AVX-512 form counts as unmasked only if no masked
/// instruction of that shape ran in the whole scope, as for the scope's own
/// totals.
pub(crate) fn summarize_in(
    h: &Histogram,
    mask: &MaskInput,
    file: &str,
    scope: Option<&Histogram>,
) -> Result<Summarized, SdeError> {
    let mut notes = Vec::new();
    let c = read_counters(h, file, &mut notes)?;
    let scope_masked: BTreeMap<(Precision, u32), u128> = match scope {
        Some(s) => masked_counts(s)
            .into_iter()
            .map(|(k, v)| (k, u128::from(v)))
            .collect(),
        None => c.masked.clone(),
    };
    let ran_masked =
        |p: Precision, lanes: u32| scope_masked.get(&(p, lanes)).is_some_and(|n| *n > 0);
    let mut rows = Rows::default();

    // FMA forms: the unmasked executions by shape, and the masked rows.
    let mut fma_unmasked: BTreeMap<(Precision, u32), u128> = BTreeMap::new();
    let mut pools: BTreeMap<(Precision, u32), u128> = BTreeMap::new();
    let mut unknown_width: BTreeMap<Precision, u128> = BTreeMap::new();
    let mut uncounted_precision: BTreeMap<Precision, u128> = BTreeMap::new();
    for (name, op, form, count) in &c.forms {
        if *op != OpClass::Fma {
            continue;
        }
        let p = form.precision;
        if !c.counted.contains(&p) {
            *uncounted_precision.entry(p).or_default() += count;
            continue;
        }
        match (form.lanes(), form.encoding) {
            (Some(lanes), Encoding::Vex) => *fma_unmasked.entry((p, lanes)).or_default() += count,
            (Some(lanes), _) => *pools.entry((p, lanes)).or_default() += count,
            (None, Encoding::Unknown) => *unknown_width.entry(p).or_default() += count,
            (None, _) => notes.push(format!(
                "FMA iform `{name}` names no XMM/YMM/ZMM destination: its {count} executions' second FLOP is not counted"
            )),
        }
    }

    // Masked FMA instructions of the profile, by (precision, lanes): (executions, computations).
    let mut masked_fma: BTreeMap<(Precision, u32), (u128, u128)> = BTreeMap::new();
    if let MaskInput::Present(threads) = mask {
        for d in threads
            .iter()
            .flat_map(|t| &t.fma)
            .filter(|d| d.form.masked)
        {
            if let Some(lanes) = d.form.lanes() {
                let slot = masked_fma.entry((d.form.precision, lanes)).or_default();
                slot.0 += u128::from(d.executions);
                slot.1 += u128::from(d.computations);
            }
        }
    }
    // Masked FMA lanes by precision, to take out of the summary table's rows.
    let mut fma_masked_comp: BTreeMap<(Precision, u32), (u128, u128)> = BTreeMap::new();
    let mut possibly_masked = (0u128, 0u128); // (executions, FLOP not counted at most)
    for (&(p, lanes), &count) in &pools {
        let l = u128::from(lanes);
        match mask {
            MaskInput::Present(_) => {
                let (mut exec_m, mut comp_m) = masked_fma.remove(&(p, lanes)).unwrap_or_default();
                if exec_m > count {
                    notes.push(format!(
                        "the mask profile has {exec_m} masked {} FMA executions of {lanes} lanes, the mix only {count}: the two files are not from the same run",
                        p.key()
                    ));
                    exec_m = count;
                }
                if comp_m > exec_m * l {
                    notes.push(format!(
                        "the mask profile's {} FMA instructions of {lanes} lanes compute {comp_m} lanes in {exec_m} executions, more than the lanes they have",
                        p.key()
                    ));
                    comp_m = exec_m * l;
                }
                *fma_unmasked.entry((p, lanes)).or_default() += count - exec_m;
                if exec_m > 0 {
                    fma_masked_comp.insert((p, lanes), (exec_m, comp_m));
                }
            }
            MaskInput::Absent if !ran_masked(p, lanes) => {
                *fma_unmasked.entry((p, lanes)).or_default() += count;
            }
            MaskInput::Absent => {
                possibly_masked.0 += count;
                possibly_masked.1 += count * l;
            }
        }
    }
    if possibly_masked.0 > 0 {
        notes.push(format!(
            "{} AVX-512 FMA executions may have run under a mask: their second FLOP per lane (up to {}) is not counted; \
             give the `-odyn_mask_profile` output of the same run",
            possibly_masked.0, possibly_masked.1
        ));
    }
    if unknown_width.is_empty() {
        for ((p, lanes), (exec, _)) in &masked_fma {
            notes.push(format!(
                "the mask profile has {exec} masked {} FMA executions of {lanes} lanes that the mix does not show: the two files are not from the same run",
                p.key()
            ));
        }
    }
    for (p, count) in &unknown_width {
        let (min, max) = (128 / p.element_bits(), 512 / p.element_bits());
        notes.push(format!(
            "{count} packed {} FMA executions in an opcode (iclass) histogram have no vector width: their second FLOP per lane \
             ({} to {} if unmasked) is not counted; rerun SDE with `-iform`",
            p.key(),
            count * u128::from(min),
            count * u128::from(max)
        ));
    }
    for (p, count) in &uncounted_precision {
        let word = p.sde_word().unwrap_or("?");
        notes.push(format!(
            "{count} {} FMA executions ran but SDE printed no `*elements_fp_{word}_*` counter: {} FLOP is not counted",
            p.key(),
            p.key()
        ));
    }

    // Unmasked elements, split by operation.
    let packed_widths = |p: Precision| -> Vec<u32> {
        c.elements
            .keys()
            .filter(|(q, n)| *q == p && *n > 1)
            .map(|(_, n)| *n)
            .collect()
    };
    for (&(p, lanes), &total) in &c.elements {
        let l = u128::from(lanes);
        let width = width_of(p, lanes);
        let mut fma = fma_unmasked.remove(&(p, lanes)).unwrap_or(0);
        if fma > total {
            notes.push(format!(
                "the FMA rows count {fma} {} executions of {lanes} lanes, more than the {total} of {}: \
                 the counts do not come from one SDE run; {total} are counted",
                p.key(),
                counter_name(p, lanes)
            ));
            fma = total;
        }
        rows.add((p, lanes, width), OpClass::Fma, false, fma, 2 * fma * l);
        let available = total - fma;
        // The other arithmetic forms of this shape.
        let mut named: BTreeMap<OpClass, u128> = BTreeMap::new();
        for (_, op, form, count) in &c.forms {
            if *op == OpClass::Fma || form.precision != p {
                continue;
            }
            let shape = match form.lanes() {
                Some(n) => Some(n),
                None if form.encoding == Encoding::Unknown => match packed_widths(p).as_slice() {
                    [only] => Some(*only),
                    _ => None,
                },
                None => None,
            };
            let unmasked = form.encoding == Encoding::Vex || !ran_masked(p, lanes);
            if shape == Some(lanes) && unmasked {
                *named.entry(*op).or_default() += count;
            }
        }
        let named_total: u128 = named.values().sum();
        if named_total > available {
            notes.push(format!(
                "the instruction rows name {named_total} {} arithmetic instructions of {lanes} lanes besides {fma} FMA, \
                 more than the {total} of {}: they are all booked as `other`",
                p.key(),
                counter_name(p, lanes)
            ));
            named.clear();
        }
        let mut rest = available;
        for (op, count) in named {
            rows.add((p, lanes, width), op, false, count, count * l);
            rest -= count;
        }
        rows.add((p, lanes, width), OpClass::Other, false, rest, rest * l);
    }
    for ((p, lanes), fma) in fma_unmasked.into_iter().filter(|(_, n)| *n > 0) {
        notes.push(format!(
            "the FMA rows count {fma} {} executions of {lanes} lanes, more than the 0 of {}: \
             the counts do not come from one SDE run; they are not counted",
            p.key(),
            counter_name(p, lanes)
        ));
    }

    // Masked elements: the profile's computation counts, or a warning.
    match mask {
        MaskInput::Present(threads) => {
            let masked_instructions: u128 = c.masked.values().sum();
            let table: Vec<_> = threads
                .iter()
                .flat_map(|t| &t.rows)
                .filter(|r| r.is_masked_fp_computation())
                .collect();
            if masked_instructions > 0 && table.is_empty() {
                notes.push(format!(
                    "{masked_instructions} masked FP instructions ran (`*elements_fp_*_masked`) but the mask profile has no \
                     masked fp computation row: the two files are not from the same run, and masked FLOP is not counted"
                ));
            }
            // (precision, lanes, width) -> (instructions, lanes computed)
            let mut masked_rows: BTreeMap<(Precision, u32, u32), (u128, u128)> = BTreeMap::new();
            for row in table {
                let Some(p) = row_precision(row) else {
                    notes.push(format!(
                        "mask profile row at line {} has {}-bit fp elements, not a flopscope precision: not counted",
                        row.line, row.element_bits
                    ));
                    continue;
                };
                let only_scalar = c
                    .masked
                    .iter()
                    .filter(|((q, _), n)| *q == p && **n > 0)
                    .all(|((_, n), _)| *n == 1)
                    && c.masked.get(&(p, 1)).is_some_and(|n| *n > 0);
                let scalar = row.vector_bits <= p.element_bits()
                    || row.max_elements <= 1
                    || (row.vector_bits == 128 && only_scalar);
                let (lanes, width) = if scalar {
                    (1, p.element_bits())
                } else {
                    (row.max_elements, row.vector_bits)
                };
                let slot = masked_rows.entry((p, lanes, width)).or_default();
                slot.0 += u128::from(row.icount);
                slot.1 += u128::from(row.comp_count);
            }
            // Take the masked FMA lanes out of the rows they are in (same
            // lanes first, then any row of the precision): they are booked as
            // FMA, their first FLOP as far as the table holds it, their
            // second from the details.
            let mut taken: BTreeMap<(Precision, u32), u128> = BTreeMap::new();
            for pass in [true, false] {
                for (&(p, lanes), &(exec, comp)) in &fma_masked_comp {
                    let got = taken.entry((p, lanes)).or_default();
                    let (mut e, mut k) = (exec, comp - *got);
                    for (&(q, n, _), slot) in masked_rows.iter_mut() {
                        if q != p || (pass && n != lanes) || k == 0 {
                            continue;
                        }
                        let take = k.min(slot.1);
                        slot.1 -= take;
                        k -= take;
                        *got += take;
                        let te = e.min(slot.0);
                        slot.0 -= te;
                        e -= te;
                    }
                    if !pass && k > 0 && !masked_rows.is_empty() {
                        notes.push(format!(
                            "the mask profile's masked {} FMA details of {lanes} lanes compute {comp} lanes, {k} more than \
                             its summary table's masked rows hold: the profile does not add up",
                            p.key()
                        ));
                    }
                }
            }
            for (&(p, lanes), &(exec, comp)) in &fma_masked_comp {
                let first = taken.get(&(p, lanes)).copied().unwrap_or(0);
                rows.add(
                    (p, lanes, width_of(p, lanes)),
                    OpClass::Fma,
                    true,
                    exec,
                    first + comp,
                );
            }
            for ((p, lanes, width), (count, comp)) in masked_rows {
                rows.add((p, lanes, width), OpClass::Other, true, count, comp);
            }
        }
        MaskInput::Absent => {
            let count: u128 = c.masked.values().sum();
            if count > 0 {
                let most: u128 = c.masked.iter().map(|((_, l), n)| u128::from(*l) * n).sum();
                notes.push(format!(
                    "{count} masked FP instructions ran (`*elements_fp_*_masked`): their FLOP (up to {most}, FMA once) is not counted \
                     because only a mask profile has their active lanes; give the `-odyn_mask_profile` output of the same run"
                ));
            }
        }
    }

    let summary = assemble(rows, &c, file, h.line)?;
    let (bytes, mem_accesses) = bytes(&c, file, h.line, &mut notes)?;
    Ok(Summarized {
        summary: Summary {
            bytes,
            mem_accesses,
            ..summary
        },
        notes,
    })
}

/// Every total from the rows.
fn assemble(rows: Rows, c: &Counters, file: &str, line: usize) -> Result<Summary, SdeError> {
    let mut by_precision: BTreeMap<Precision, u128> = BTreeMap::new();
    let mut by_op: BTreeMap<FlopOp, u128> = BTreeMap::new();
    let mut by_width: BTreeMap<String, u128> = BTreeMap::new();
    let mut fp_instructions = Vec::new();
    for (key, (count, flop)) in rows.0 {
        *by_precision.entry(key.precision).or_default() += flop;
        match key.op {
            // ADDSUBPD: one add and one sub per pair of lanes.
            OpClass::AddSub => {
                *by_op.entry(FlopOp::Add).or_default() += flop / 2;
                *by_op.entry(FlopOp::Sub).or_default() += flop - flop / 2;
            }
            op => *by_op.entry(booked(op)).or_default() += flop,
        }
        if flop > 0 {
            *by_width
                .entry(width_key(key.precision, key.lanes, key.width_bits))
                .or_default() += flop;
        }
        fp_instructions.push(FpInstructionRow {
            precision: key.precision,
            width_bits: key.width_bits,
            lanes: key.lanes,
            op: key.op,
            masked: key.masked,
            count: fit(count, file, line, "instruction counts")?,
            flop: fit(flop, file, line, "FLOP")?,
        });
    }
    let mut flop = FlopTotals::default();
    let mut total: u128 = 0;
    for p in Precision::ALL {
        let value = by_precision.get(&p).copied().unwrap_or(0);
        total += value;
        // SDE always tells double and single apart; other precisions only when it printed them.
        let known =
            matches!(p, Precision::Fp64 | Precision::Fp32) || c.counted.contains(&p) || value > 0;
        if known {
            flop.set(p, Some(fit(value, file, line, "FLOP")?));
        }
    }
    flop.total = fit(total, file, line, "FLOP")?;
    let mut flop_by_op = BTreeMap::new();
    for op in FlopOp::ALL {
        let v = by_op.get(&op).copied().unwrap_or(0);
        flop_by_op.insert(op.key().to_string(), fit(v, file, line, "FLOP")?);
    }
    let mut flop_by_width = BTreeMap::new();
    for (k, v) in by_width {
        flop_by_width.insert(k, fit(v, file, line, "FLOP")?);
    }
    Ok(Summary {
        flop,
        flop_by_op,
        flop_by_width,
        fp_elements: c.fp_elements.clone(),
        fp_instructions,
        bytes: None,
        mem_accesses: None,
        instructions: c.instructions,
    })
}

/// The `flop_by_op` bucket of an operation class.
fn booked(op: OpClass) -> FlopOp {
    match op {
        OpClass::Add | OpClass::HAdd | OpClass::AddSub => FlopOp::Add,
        OpClass::Sub | OpClass::HSub => FlopOp::Sub,
        OpClass::Mul => FlopOp::Mul,
        OpClass::Div => FlopOp::Div,
        OpClass::Sqrt => FlopOp::Sqrt,
        OpClass::Fma => FlopOp::Fma,
        OpClass::MinMax => FlopOp::MinMax,
        OpClass::Rcp => FlopOp::Rcp,
        OpClass::Dot | OpClass::Other => FlopOp::Other,
    }
}

type Bytes = (Option<ByteTotals>, Option<MemAccesses>);

fn bytes(
    c: &Counters,
    file: &str,
    line: usize,
    notes: &mut Vec<String>,
) -> Result<Bytes, SdeError> {
    if c.mem_read.is_empty() && c.mem_write.is_empty() {
        notes.push(
            "no `*mem-read-<size>` or `*mem-write-<size>` rows: bytes are unknown".to_string(),
        );
        return Ok((None, None));
    }
    let weighted = |m: &BTreeMap<u32, u64>| {
        m.iter()
            .map(|(s, n)| u128::from(*s) * u128::from(*n))
            .sum::<u128>()
    };
    let totals = ByteTotals {
        read: fit(weighted(&c.mem_read), file, line, "bytes read")?,
        written: fit(weighted(&c.mem_write), file, line, "bytes written")?,
    };
    let hist = |m: &BTreeMap<u32, u64>| {
        m.iter()
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (s.to_string(), *n))
            .collect()
    };
    Ok((
        Some(totals),
        Some(MemAccesses {
            read: hist(&c.mem_read),
            write: hist(&c.mem_write),
        }),
    ))
}

/// `*mem-read-<size>` -> (false, size), `*mem-write-<size>` -> (true, size);
/// `*mem-read` / `*mem-write` alone (operand counts) are not access sizes.
fn access_size(name: &str) -> Option<(bool, &str)> {
    let (write, size) = if let Some(s) = name.strip_prefix("*mem-read-") {
        (false, s)
    } else {
        (true, name.strip_prefix("*mem-write-")?)
    };
    (!size.is_empty() && size.bytes().all(|b| b.is_ascii_digit())).then_some((write, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_counter_names() {
        assert_eq!(elements_counter("double_4"), Some(("double", 4, false)));
        assert_eq!(
            elements_counter("single_16_masked"),
            Some(("single", 16, true))
        );
        assert_eq!(elements_counter("double_0"), None);
        assert_eq!(elements_counter("double"), None);
    }

    #[test]
    fn impossible_lanes_are_not_counters() {
        assert_eq!(
            decoded("*elements_fp_double_8"),
            Some((Precision::Fp64, 8, false))
        );
        assert_eq!(
            decoded("*elements_fp_single_16_masked"),
            Some((Precision::Fp32, 16, true))
        );
        assert_eq!(decoded("*elements_fp_double_3"), None);
        assert_eq!(decoded("*elements_fp_double_16"), None);
        assert_eq!(decoded("*elements_fp_quad_2"), None);
    }

    #[test]
    fn access_sizes_are_exact_names() {
        assert_eq!(access_size("*mem-read-16"), Some((false, "16")));
        assert_eq!(access_size("*mem-write-576"), Some((true, "576")));
        assert_eq!(access_size("*mem-read"), None);
        assert_eq!(access_size("*mem-write"), None);
        assert_eq!(access_size("*mem-read-"), None);
        assert_eq!(access_size("*mem-atomic"), None);
    }
}
