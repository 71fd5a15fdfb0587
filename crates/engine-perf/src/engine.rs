//! The perf engine behind the common [`flopscope_model::Engine`] contract.

use crate::eventset::EventSet;
use crate::regions::{
    marker_events, parse_region_counts, regions_from_counts, EVENTS_VAR, REGIONS_VAR,
};
use crate::run::{run_counted_env, run_sampled_clock, PerfOptions};
use crate::sampling::SamplingOptions;
use flopscope_model::{Engine, EngineError, Report};
use std::path::PathBuf;

/// Counts with the hardware event set `set`.
pub struct PerfEngine {
    pub set: &'static EventSet,
    pub options: PerfOptions,
}

/// A fresh file name in the temporary directory for the markers' region counts.
fn regions_file() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!(
        "flopscope-perf-regions-{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

impl Engine for PerfEngine {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn runs_natively(&self) -> bool {
        true
    }

    /// Runs the program with the counters, and lets its region markers read
    /// the same events at region boundaries (see [`crate::regions`]).
    fn count(&self, argv: &[String]) -> Result<Report, EngineError> {
        if let Some(SamplingOptions {
            clock: Some(clock),
            period,
        }) = self.options.sampling
        {
            // No event of the set is opened: nothing for region markers to read.
            return Ok(run_sampled_clock(argv, clock, period)?.clock_report(clock));
        }
        let file = regions_file();
        let mut names = Vec::new();
        let run = run_counted_env(argv, self.set, &self.options, |plan| {
            let events = marker_events(plan);
            let codes: Vec<String> = events.iter().map(|(_, c)| c.clone()).collect();
            names = events.into_iter().map(|(n, _)| n).collect();
            vec![
                (EVENTS_VAR.to_string(), codes.join(",")),
                (REGIONS_VAR.to_string(), file.to_string_lossy().into_owned()),
            ]
        });
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let _ = std::fs::remove_file(&file);
        let mut report = run?.report(self.set);
        let counts = parse_region_counts(&text, names.len());
        if !counts.is_empty() {
            report.regions = regions_from_counts(self.set, &names, &counts);
            report.warnings.push(
                "regions: counted by the markers reading the core events at region boundaries (user space, not scaled for multiplexing; no DRAM bytes per region)".into(),
            );
        }
        Ok(report)
    }
}
