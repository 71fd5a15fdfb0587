//! Several processes (one SDE file each, as `-i` writes them per MPI rank)
//! into one report, by the model's merge: exact sums at the top, one nested
//! report per file in `processes` (labelled by its mix file), warnings
//! prefixed with that label, and the load imbalance between the files.

use crate::error::SdeError;
use flopscope_model::merge::{merge, Merged, Source};

/// Merges per-process reports labelled by their mix file.
pub fn merge_sources(sources: Vec<Source>) -> Result<Merged, SdeError> {
    merge(sources).map_err(|e| SdeError::Inputs {
        file: "sde import".to_string(),
        message: e.to_string(),
    })
}
