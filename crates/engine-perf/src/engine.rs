//! The perf engine behind the common [`flopscope_model::Engine`] contract.

use crate::eventset::EventSet;
use crate::run::{run_counted, PerfOptions};
use flopscope_model::{Engine, EngineError, Report};

/// Counts with the hardware event set `set`.
pub struct PerfEngine {
    pub set: &'static EventSet,
    pub options: PerfOptions,
}

impl Engine for PerfEngine {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn runs_natively(&self) -> bool {
        true
    }

    fn count(&self, argv: &[String]) -> Result<Report, EngineError> {
        let run = run_counted(argv, self.set, &self.options)?;
        Ok(run.report(self.set))
    }
}
