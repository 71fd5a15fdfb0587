//! Several processes (one SDE file each, as `-i` writes them per MPI rank)
//! into one report: the sum at the top, one nested report per file in
//! `processes`.

use crate::build::ENGINE;
use flopscope_model::{
    ByteTotals, FlopTotals, FpInstructionRow, MemAccesses, Precision, Report, Summary,
};
use std::collections::BTreeMap;

/// Merges per-process reports. One report comes back as it is; several come
/// back as their sum, with each of them under `processes` (in the order
/// given) and every warning at the top. Thread rows stay in each process:
/// thread numbers repeat from one process to the next.
pub fn merge_reports(mut parts: Vec<Report>) -> Report {
    if parts.len() == 1 {
        return parts
            .pop()
            .unwrap_or_else(|| Report::new(ENGINE, Vec::new()));
    }
    let mut top = Report::new(ENGINE, Vec::new());
    let mut summary: Option<Summary> = None;
    for p in &parts {
        summary = Some(match summary {
            None => p.summary.clone(),
            Some(s) => add_summaries(&s, &p.summary),
        });
        top.warnings.extend(p.warnings.iter().cloned());
    }
    top.summary = summary.unwrap_or_default();
    top.complete = parts.iter().all(|p| p.complete);
    top.processes = parts;
    top.refresh_derived();
    top
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

/// The sum of two summaries. A precision one process's SDE printed and the
/// other's did not adds as zero; bytes, access histograms, instruction counts
/// and FLOP by operation stay known only if both sides know them.
pub fn add_summaries(a: &Summary, b: &Summary) -> Summary {
    let mut flop = FlopTotals {
        total: a.flop.total.saturating_add(b.flop.total),
        ..FlopTotals::default()
    };
    for p in Precision::ALL {
        flop.set(p, add_opt(a.flop.get(p), b.flop.get(p)));
    }
    let flop_by_op = a
        .flop_by_op
        .iter()
        .filter_map(|(k, v)| {
            b.flop_by_op
                .get(k)
                .map(|w| (k.clone(), v.saturating_add(*w)))
        })
        .collect();
    // An empty `flop_by_width` with FLOP means "widths unknown": the sum is unknown too.
    let widths_known = |s: &Summary| s.flop.total == 0 || !s.flop_by_width.is_empty();
    let flop_by_width = if widths_known(a) && widths_known(b) {
        add_hist(&a.flop_by_width, &b.flop_by_width)
    } else {
        BTreeMap::new()
    };
    let mut fp_elements = a.fp_elements.clone();
    for (k, v) in &b.fp_elements {
        let slot = fp_elements.entry(k.clone()).or_insert(0);
        *slot = slot.saturating_add(*v);
    }
    let mut rows: Vec<FpInstructionRow> = a.fp_instructions.clone();
    for r in &b.fp_instructions {
        match rows.iter_mut().find(|x| {
            (x.precision, x.width_bits, x.lanes, x.op, x.masked)
                == (r.precision, r.width_bits, r.lanes, r.op, r.masked)
        }) {
            Some(x) => {
                x.count = x.count.saturating_add(r.count);
                x.flop = x.flop.saturating_add(r.flop);
            }
            None => rows.push(r.clone()),
        }
    }
    rows.sort_by_key(|r| (r.precision, r.width_bits, r.lanes, r.op, r.masked));
    let bytes = match (a.bytes, b.bytes) {
        (Some(x), Some(y)) => Some(ByteTotals {
            read: x.read.saturating_add(y.read),
            written: x.written.saturating_add(y.written),
        }),
        _ => None,
    };
    let mem_accesses = match (&a.mem_accesses, &b.mem_accesses) {
        (Some(x), Some(y)) => Some(MemAccesses {
            read: add_hist(&x.read, &y.read),
            write: add_hist(&x.write, &y.write),
        }),
        _ => None,
    };
    let instructions = match (a.instructions, b.instructions) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        _ => None,
    };
    Summary {
        flop,
        flop_by_op,
        flop_by_width,
        fp_elements,
        fp_instructions: rows,
        bytes,
        mem_accesses,
        instructions,
    }
}

fn add_hist(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out = a.clone();
    for (k, v) in b {
        let slot = out.entry(k.clone()).or_insert(0);
        *slot = slot.saturating_add(*v);
    }
    out
}
