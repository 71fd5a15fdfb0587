//! Where a report's time (and so its FLOP/s) comes from, and its spread.
//!
//! The program runs once by default: the time is then the counted run's own
//! when the engine runs the program natively (the native and perf engines),
//! with the engine's overhead in it; the emulate engine's run says nothing
//! about native speed, so it gives no time. Uninstrumented runs after the
//! counted one (`flopscope count --runs N --warmup K`) give a time without
//! overhead, with its spread.
//!
//! ```
//! use flopscope_model::timing::{TimeSource, Timing};
//! let t = Timing::of_runs(TimeSource::NativeRuns, "native", vec![0.30, 0.10, 0.20], 1);
//! assert_eq!((t.min_s, t.median_s, t.max_s), (0.10, 0.20, 0.30));
//! assert!(t.within_noise(0.25));
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// The counted run itself, under an engine that runs the program natively.
    CountedRun,
    /// Uninstrumented runs after the counted one (`--runs N`).
    NativeRuns,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub source: TimeSource,
    /// The counted run's engine.
    pub engine: String,
    /// Wall seconds of each timed run, in the order they ran.
    pub runs_s: Vec<f64>,
    /// Runs made before the timed ones and not timed (`--warmup K`).
    pub warmup: u32,
    pub min_s: f64,
    /// The time FLOP/s are computed from (`native_time_s`).
    pub median_s: f64,
    pub max_s: f64,
    /// Share of the counted run's sampled CPU time spent in the engine itself
    /// (translating and dispatching, not running the program's code), when
    /// the counted run was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_share: Option<f64>,
    /// Each region's fastest and slowest time over the timed runs (with
    /// more than one run); its `native_time_s` is the median.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub regions_min_max_s: BTreeMap<String, [f64; 2]>,
}

impl Timing {
    /// The timing of `runs` (wall seconds, at least one).
    pub fn of_runs(source: TimeSource, engine: &str, runs: Vec<f64>, warmup: u32) -> Timing {
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Timing {
            source,
            engine: engine.to_string(),
            min_s: sorted[0],
            max_s: sorted[n - 1],
            median_s: median,
            runs_s: runs,
            warmup,
            engine_share: None,
            regions_min_max_s: BTreeMap::new(),
        }
    }

    /// The spread of region `name` over the timed runs, if known.
    pub fn region_spread(&self, name: &str) -> Option<(f64, f64)> {
        self.regions_min_max_s.get(name).map(|[lo, hi]| (*lo, *hi))
    }

    /// Whether `t` lies within this timing's spread (min..max): a time that
    /// another report gives and that these runs could have given as well.
    pub fn within_noise(&self, t: f64) -> bool {
        self.runs_s.len() > 1 && self.min_s <= t && t <= self.max_s
    }

    /// One line for people: which run the time is from, and its spread.
    pub fn describe(&self) -> String {
        match self.source {
            TimeSource::CountedRun => {
                let share = self
                    .engine_share
                    .map(|s| {
                        format!(
                            "; {:.1}% of its sampled CPU time was the engine translating and dispatching",
                            100.0 * s
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "from the counted run under the {} engine, its overhead included{share}; --runs N times uninstrumented runs",
                    self.engine
                )
            }
            TimeSource::NativeRuns if self.runs_s.len() == 1 => format!(
                "from 1 uninstrumented run after the counted one{}",
                warmup_text(self.warmup)
            ),
            TimeSource::NativeRuns => format!(
                "median of {} uninstrumented runs after the counted one{} (min {}, max {})",
                self.runs_s.len(),
                warmup_text(self.warmup),
                crate::render::duration(self.min_s),
                crate::render::duration(self.max_s)
            ),
        }
    }
}

fn warmup_text(warmup: u32) -> String {
    match warmup {
        0 => String::new(),
        1 => ", after 1 warm-up run".into(),
        k => format!(", after {k} warm-up runs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let t = Timing::of_runs(
            TimeSource::NativeRuns,
            "emulate",
            vec![4.0, 1.0, 3.0, 2.0],
            0,
        );
        assert_eq!((t.min_s, t.median_s, t.max_s), (1.0, 2.5, 4.0));
        assert_eq!(t.runs_s, vec![4.0, 1.0, 3.0, 2.0]);
    }

    #[test]
    fn one_run_has_no_noise_band() {
        let t = Timing::of_runs(TimeSource::CountedRun, "native", vec![1.0], 0);
        assert!(!t.within_noise(1.0));
        assert_eq!(
            t.describe(),
            "from the counted run under the native engine, its overhead included; --runs N times uninstrumented runs"
        );
    }

    #[test]
    fn descriptions_name_the_runs_and_their_spread() {
        let t = Timing::of_runs(
            TimeSource::NativeRuns,
            "emulate",
            vec![0.002, 0.001, 0.003],
            2,
        );
        assert_eq!(
            t.describe(),
            "median of 3 uninstrumented runs after the counted one, after 2 warm-up runs (min 1.000 ms, max 3.000 ms)"
        );
    }
}
