//! Several processes (one SDE file each, as `-i` writes them per MPI rank)
//! into one report, by the model's merge: exact sums at the top, one nested
//! report per file in `processes` (labelled by its mix file), warnings
//! prefixed with that label, and the load imbalance between the files.

use crate::error::SdeError;
use flopscope_model::merge::{merge, Merged, Source};
use std::collections::BTreeMap;

/// Merges per-process reports labelled by their mix file.
pub fn merge_sources(sources: Vec<Source>) -> Result<Merged, SdeError> {
    let mut merged = merge(sources).map_err(|e| SdeError::Inputs {
        file: "sde import".to_string(),
        message: e.to_string(),
    })?;
    merged.report.summary.flop_by_width = sum_widths(&merged.report.processes);
    Ok(merged)
}

/// FLOP by width over the processes. `flopscope_model::merge` keeps the first
/// input's `flop_by_width` as it is; until it sums them, this does. An empty
/// map with FLOP means "widths unknown", which makes the sum unknown too.
fn sum_widths(processes: &[flopscope_model::Report]) -> BTreeMap<String, u64> {
    let known = |r: &&flopscope_model::Report| {
        r.summary.flop.total == 0 || !r.summary.flop_by_width.is_empty()
    };
    if !processes.iter().all(|r| known(&r)) {
        return BTreeMap::new();
    }
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for (k, v) in processes.iter().flat_map(|r| &r.summary.flop_by_width) {
        let slot = out.entry(k.clone()).or_insert(0);
        *slot = slot.saturating_add(*v);
    }
    out
}
