//! The arithmetic: one histogram (and the mask profile threads it covers) to
//! a flopscope [`Summary`].
//!
//! FLOP of precision p, following Intel's method (shared/seeds/000):
//!
//! 1. unmasked elements: `*elements_fp_<p>_<n>` x n, for every n;
//! 2. masked elements: `comp_count` of the mask profile's masked `mask`-category
//!    `fp` rows of element size p (needs the profile);
//! 3. the second FLOP of every FMA lane (the counters above count an FMA once):
//!    - VEX forms (no opmask): executions x lanes;
//!    - EVEX forms (the iform carries `MASKmskw` even for k0) and iclass names:
//!      executions x lanes, less the lanes the profile's masked FMA
//!      instructions left inactive (executions x lanes - computation count).
//!      Without a profile, and if a masked instruction of that precision and
//!      lane count ran (`*elements_fp_<p>_<n>_masked` > 0), these are not
//!      counted and a warning says by how much FLOP may be understated; when
//!      no such instruction ran, no FMA of that shape can have been masked
//!      and executions x lanes is exact. A function's histogram is judged by
//!      the process's counters (`summarize_in`), so that the functions
//!      leave out what the totals leave out and add up to them.
//!    - packed iclass names (`VFMADD231PD`, `-mix` without `-iform`) do not
//!      tell xmm from zmm: not counted, and a warning gives the range.
//!
//! FLOP by width (`flop_by_width`): an elements counter of n lanes has width
//! n x element bits (`*elements_fp_double_4` is `fp64.256`, `_1` is scalar);
//! FMA forms and the mask profile's rows name their width. A masked 128-bit
//! row mixes scalar and xmm instructions, so a profile with one leaves
//! `flop_by_width` empty. Whatever is there adds up to `flop.total`.
//!
//! Bytes: size x count over every `*mem-read-<size>` / `*mem-write-<size>`
//! row, whatever the size (XSAVE areas are hundreds of bytes). `*mem-read` and
//! `*mem-write` without a size count memory operands, not bytes.

use crate::error::SdeError;
use crate::iform::{fma_histogram_name, Encoding, FmaForm};
use crate::mask::{row_precision, MaskThread};
use crate::mix::Histogram;
use flopscope_model::{
    width_key, ByteTotals, FlopTotals, FpInstructionRow, FpKey, MemAccesses, OpClass, Precision,
    Summary,
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

#[derive(Default)]
struct Tally {
    /// Unmasked element FLOP by precision.
    base: BTreeMap<Precision, u128>,
    /// Precisions SDE printed at least one elements counter for.
    counted: BTreeSet<Precision>,
    /// `*elements_fp_<p>_<n>_masked` counts.
    masked_counts: BTreeMap<(Precision, u32), u128>,
    fp_elements: BTreeMap<String, u64>,
    /// FLOP by `width_key`; `None` once some FLOP has no known width.
    by_width: Option<BTreeMap<String, u128>>,
    mem_read: BTreeMap<u32, u64>,
    mem_write: BTreeMap<u32, u64>,
    instructions: Option<u64>,
    fma: Vec<(String, FmaForm, u64)>,
}

/// FMA instruction rows: key -> (executions, FLOP).
type Rows = BTreeMap<FpKey, (u128, u128)>;

fn add_row(rows: &mut Rows, form: &FmaForm, lanes: u32, masked: bool, count: u128, flop: u128) {
    if count == 0 {
        return;
    }
    let Some(width_bits) = form.width_bits() else {
        return;
    };
    let key = FpKey {
        precision: form.precision,
        width_bits,
        lanes,
        op: OpClass::Fma,
        masked,
    };
    let slot = rows.entry(key).or_default();
    slot.0 += count;
    slot.1 += flop;
}

fn add_width(by_width: &mut Option<BTreeMap<String, u128>>, key: String, flop: u128) {
    if let Some(map) = by_width {
        if flop > 0 {
            *map.entry(key).or_default() += flop;
        }
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

/// `*elements_fp_<p>_<n>_masked` counts of a histogram, by (precision, n).
pub(crate) fn masked_counts(h: &Histogram) -> BTreeMap<(Precision, u32), u64> {
    let mut out: BTreeMap<(Precision, u32), u64> = BTreeMap::new();
    for (name, c) in &h.counters {
        let Some(rest) = name.strip_prefix("*elements_fp_") else {
            continue;
        };
        if let Some((p, lanes, true)) =
            elements_counter(rest).and_then(|(w, n, m)| Some((precision_of_word(w)?, n, m)))
        {
            let slot = out.entry((p, lanes)).or_default();
            *slot = slot.saturating_add(c.count);
        }
    }
    out
}

pub(crate) fn summarize(
    h: &Histogram,
    mask: &MaskInput,
    file: &str,
) -> Result<Summarized, SdeError> {
    summarize_in(h, mask, file, None)
}

/// [`summarize`] for a part of `scope` (a function of the process): without
/// a mask profile, an AVX-512 FMA shape counts its second FLOP only if no
/// masked instruction of that shape ran in the whole scope, as for the
/// scope's own totals.
pub(crate) fn summarize_in(
    h: &Histogram,
    mask: &MaskInput,
    file: &str,
    scope: Option<&Histogram>,
) -> Result<Summarized, SdeError> {
    let scope_masked = scope.map(masked_counts);
    let mut t = Tally {
        by_width: Some(BTreeMap::new()),
        ..Tally::default()
    };
    let mut notes = Vec::new();

    for (name, c) in &h.counters {
        let count = u128::from(c.count);
        if let Some(rest) = name.strip_prefix("*elements_fp_") {
            t.fp_elements.insert(name[1..].to_string(), c.count);
            match elements_counter(rest).and_then(|(w, n, m)| Some((precision_of_word(w)?, n, m))) {
                Some((p, lanes, masked)) => {
                    t.counted.insert(p);
                    if masked {
                        *t.masked_counts.entry((p, lanes)).or_default() += count;
                    } else {
                        *t.base.entry(p).or_default() += count * u128::from(lanes);
                        let key = width_key(p, lanes, lanes.saturating_mul(p.element_bits()));
                        add_width(&mut t.by_width, key, count * u128::from(lanes));
                    }
                }
                None => notes.push(format!("`{name}` (line {}) is not an elements counter flopscope knows: not counted as FLOP", c.line)),
            }
        } else if let Some((write, size)) = access_size(name) {
            let size = size.parse::<u32>().map_err(|_| {
                SdeError::parse(
                    file,
                    c.line,
                    "a memory access size below 2^32 bytes",
                    format!("`{name}`"),
                )
            })?;
            let hist = if write {
                &mut t.mem_write
            } else {
                &mut t.mem_read
            };
            *hist.entry(size).or_default() += c.count;
        } else if name == "*total" {
            t.instructions = Some(c.count);
        } else if let Some(form) = fma_histogram_name(name) {
            t.fma.push((name.clone(), form, c.count));
        }
    }

    let mut extra: BTreeMap<Precision, u128> = BTreeMap::new();
    let mut rows = Rows::new();
    let mut fma_unknown = false;
    // EVEX and iclass FMA executions by (precision, lanes), with a representative form.
    let mut pools: BTreeMap<(Precision, u32), (FmaForm, u128)> = BTreeMap::new();
    let mut unknown_width: BTreeMap<Precision, u128> = BTreeMap::new();
    let mut uncounted_precision: BTreeMap<Precision, u128> = BTreeMap::new();

    for (name, form, count) in &t.fma {
        let (p, count) = (form.precision, u128::from(*count));
        if !t.counted.contains(&p) {
            *uncounted_precision.entry(p).or_default() += count;
            continue;
        }
        match (form.lanes(), form.encoding) {
            (Some(lanes), Encoding::Vex) => {
                let e = count * u128::from(lanes);
                *extra.entry(p).or_default() += e;
                add_row(&mut rows, form, lanes, false, count, 2 * e);
            }
            (Some(lanes), _) => {
                let pool = pools.entry((p, lanes)).or_insert((*form, 0));
                pool.1 += count;
            }
            (None, Encoding::Unknown) => *unknown_width.entry(p).or_default() += count,
            (None, _) => {
                fma_unknown = true;
                notes.push(format!("FMA iform `{name}` names no XMM/YMM/ZMM destination: its {count} executions' second FLOP is not counted"));
            }
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

    let mut possibly_masked = (0u128, 0u128); // (executions, FLOP not counted at most)
    for ((p, lanes), (form, count)) in &pools {
        let l = u128::from(*lanes);
        match mask {
            MaskInput::Present(_) => {
                let (mut exec_m, mut comp_m) = masked_fma.remove(&(*p, *lanes)).unwrap_or_default();
                if exec_m > *count {
                    notes.push(format!(
                        "the mask profile has {exec_m} masked {} FMA executions of {lanes} lanes, the mix only {count}: the two files are not from the same run",
                        p.key()
                    ));
                    exec_m = *count;
                }
                if comp_m > exec_m * l {
                    notes.push(format!(
                        "the mask profile's {} FMA instructions of {lanes} lanes compute {comp_m} lanes in {exec_m} executions, more than the lanes they have",
                        p.key()
                    ));
                    comp_m = exec_m * l;
                }
                let unmasked = count - exec_m;
                *extra.entry(*p).or_default() += unmasked * l + comp_m;
                add_row(&mut rows, form, *lanes, false, unmasked, 2 * unmasked * l);
                add_row(&mut rows, form, *lanes, true, exec_m, 2 * comp_m);
            }
            MaskInput::Absent => {
                let masked_here = match &scope_masked {
                    Some(m) => u128::from(m.get(&(*p, *lanes)).copied().unwrap_or(0)),
                    None => t.masked_counts.get(&(*p, *lanes)).copied().unwrap_or(0),
                };
                if masked_here == 0 {
                    *extra.entry(*p).or_default() += count * l;
                    add_row(&mut rows, form, *lanes, false, *count, 2 * count * l);
                } else {
                    fma_unknown = true;
                    possibly_masked.0 += count;
                    possibly_masked.1 += count * l;
                }
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
        fma_unknown = true;
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
        fma_unknown = true;
        let word = p.sde_word().unwrap_or("?");
        notes.push(format!(
            "{count} {} FMA executions ran but SDE printed no `*elements_fp_{word}_*` counter: {} FLOP is not counted",
            p.key(),
            p.key()
        ));
    }

    // Masked elements: the profile's computation counts, or a warning.
    let mut masked_flop: BTreeMap<Precision, u128> = BTreeMap::new();
    match mask {
        MaskInput::Present(threads) => {
            let masked_instructions: u128 = t.masked_counts.values().sum();
            let masked_rows = threads
                .iter()
                .flat_map(|t| &t.rows)
                .filter(|r| r.is_masked_fp_computation())
                .count();
            if masked_instructions > 0 && masked_rows == 0 {
                notes.push(format!(
                    "{masked_instructions} masked FP instructions ran (`*elements_fp_*_masked`) but the mask profile has no \
                     masked fp computation row: the two files are not from the same run, and masked FLOP is not counted"
                ));
            }
            for row in threads
                .iter()
                .flat_map(|t| &t.rows)
                .filter(|r| r.is_masked_fp_computation())
            {
                match row_precision(row) {
                    Some(p) => {
                        *masked_flop.entry(p).or_default() += u128::from(row.comp_count);
                        // A 128-bit row holds packed xmm and scalar instructions alike.
                        if row.vector_bits == 128 {
                            t.by_width = None;
                        } else {
                            let key = width_key(p, row.max_elements, row.vector_bits);
                            add_width(&mut t.by_width, key, u128::from(row.comp_count));
                        }
                    }
                    None => notes.push(format!(
                        "mask profile row at line {} has {}-bit fp elements, not a flopscope precision: not counted",
                        row.line, row.element_bits
                    )),
                }
            }
        }
        MaskInput::Absent => {
            let count: u128 = t.masked_counts.values().sum();
            if count > 0 {
                let most: u128 = t
                    .masked_counts
                    .iter()
                    .map(|((_, l), n)| u128::from(*l) * n)
                    .sum();
                notes.push(format!(
                    "{count} masked FP instructions ran (`*elements_fp_*_masked`): their FLOP (up to {most}, FMA once) is not counted \
                     because only a mask profile has their active lanes; give the `-odyn_mask_profile` output of the same run"
                ));
            }
        }
    }

    let line = h.line;
    let mut flop = FlopTotals::default();
    let mut total: u128 = 0;
    for p in Precision::ALL {
        let first =
            t.base.get(&p).copied().unwrap_or(0) + masked_flop.get(&p).copied().unwrap_or(0);
        let second = extra.get(&p).copied().unwrap_or(0);
        // The elements counters include every FMA: its lanes cannot outnumber them.
        if second > first {
            notes.push(format!(
                "the {} FMA rows count {second} lanes, more than the {first} of all elements counters and masked rows: \
                 the counts do not come from one SDE run",
                p.key()
            ));
        }
        let value = first + second;
        total += value;
        // SDE always tells double and single apart; other precisions only when it printed them.
        let known = matches!(p, Precision::Fp64 | Precision::Fp32)
            || t.counted.contains(&p)
            || masked_flop.contains_key(&p);
        if known {
            flop.set(p, Some(fit(value, file, line, "FLOP")?));
        }
    }
    flop.total = fit(total, file, line, "FLOP")?;

    let mut flop_by_op = BTreeMap::new();
    if !fma_unknown {
        let fma: u128 = extra.values().sum();
        flop_by_op.insert("fma".to_string(), fit(2 * fma, file, line, "FMA FLOP")?);
    }

    let mut fp_instructions = Vec::new();
    for (key, (count, flop)) in rows {
        // Rows hold both FLOP of each FMA lane; the first is in the elements counters already.
        add_width(
            &mut t.by_width,
            width_key(key.precision, key.lanes, key.width_bits),
            flop / 2,
        );
        fp_instructions.push(fp_row(
            key,
            fit(count, file, line, "instruction counts")?,
            fit(flop, file, line, "FLOP")?,
        ));
    }

    let (bytes, mem_accesses) = if t.mem_read.is_empty() && t.mem_write.is_empty() {
        notes.push(
            "no `*mem-read-<size>` or `*mem-write-<size>` rows: bytes are unknown".to_string(),
        );
        (None, None)
    } else {
        let weighted = |m: &BTreeMap<u32, u64>| {
            m.iter()
                .map(|(s, n)| u128::from(*s) * u128::from(*n))
                .sum::<u128>()
        };
        let bytes = ByteTotals {
            read: fit(weighted(&t.mem_read), file, line, "bytes read")?,
            written: fit(weighted(&t.mem_write), file, line, "bytes written")?,
        };
        let hist = |m: &BTreeMap<u32, u64>| {
            m.iter()
                .filter(|(_, n)| **n > 0)
                .map(|(s, n)| (s.to_string(), *n))
                .collect()
        };
        (
            Some(bytes),
            Some(MemAccesses {
                read: hist(&t.mem_read),
                write: hist(&t.mem_write),
            }),
        )
    };

    let mut flop_by_width = BTreeMap::new();
    for (key, value) in t.by_width.unwrap_or_default() {
        flop_by_width.insert(key, fit(value, file, line, "FLOP")?);
    }
    let summary = Summary {
        flop,
        flop_by_op,
        flop_by_width,
        fp_elements: t.fp_elements,
        fp_instructions,
        bytes,
        mem_accesses,
        instructions: t.instructions,
    };
    Ok(Summarized { summary, notes })
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

fn fp_row(key: FpKey, count: u64, flop: u64) -> FpInstructionRow {
    FpInstructionRow {
        precision: key.precision,
        width_bits: key.width_bits,
        lanes: key.lanes,
        op: key.op,
        masked: key.masked,
        count,
        flop,
    }
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
    fn access_sizes_are_exact_names() {
        assert_eq!(access_size("*mem-read-16"), Some((false, "16")));
        assert_eq!(access_size("*mem-write-576"), Some((true, "576")));
        assert_eq!(access_size("*mem-read"), None);
        assert_eq!(access_size("*mem-write"), None);
        assert_eq!(access_size("*mem-read-"), None);
        assert_eq!(access_size("*mem-atomic"), None);
    }
}
