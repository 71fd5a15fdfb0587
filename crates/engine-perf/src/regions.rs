//! Per-region counts under the perf engine. The counters the engine opens
//! count the whole program, so the region markers (include/flopscope.h and
//! the flopscope-markers crate) read the same events themselves at region
//! boundaries: the engine names them in `FLOPSCOPE_PERF_EVENTS`
//! (`type:config[:config1]` in hex, comma-separated, in plan order) and the
//! markers append, at exit, one line per region and process to the file
//! named by `FLOPSCOPE_PERF_REGIONS`:
//!
//! `pid \t entries \t v0,v1,... \t name` (one value per listed event, the
//! sum over threads of END - BEGIN; the name last, as it may hold tabs).
//!
//! The markers read plain counts (no time_enabled/running), so a region's
//! counts are not scaled for multiplexing.

use crate::eventset::{EventSet, Scope};
use crate::plan::Plan;
use crate::report::report_from_counts;
use crate::values::{CounterValues, Reading};
use flopscope_model::Region;
use std::collections::BTreeMap;

pub const EVENTS_VAR: &str = "FLOPSCOPE_PERF_EVENTS";
pub const REGIONS_VAR: &str = "FLOPSCOPE_PERF_REGIONS";

/// The thread-scope counters of `plan`, in order: what the markers open.
pub fn marker_events(plan: &Plan) -> Vec<(String, String)> {
    plan.opens
        .iter()
        .filter(|o| o.scope == Scope::Thread)
        .map(|o| {
            let mut code = format!("{:x}:{:x}", o.type_, o.raw.config);
            if o.raw.config1 != 0 {
                code.push_str(&format!(":{:x}", o.raw.config1));
            }
            (o.event.clone(), code)
        })
        .collect()
}

/// Per region name: entries and per-event sums, added over processes.
pub type RegionCounts = BTreeMap<String, (u64, Vec<u64>)>;

/// Parses the markers' lines; lines with the wrong number of values are skipped.
pub fn parse_region_counts(text: &str, events: usize) -> RegionCounts {
    let mut out = RegionCounts::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let [_pid, entries, values, name] = f[..] else {
            continue;
        };
        let Ok(entries) = entries.parse::<u64>() else {
            continue;
        };
        let Ok(values) = values
            .split(',')
            .map(str::parse::<u64>)
            .collect::<Result<Vec<u64>, _>>()
        else {
            continue;
        };
        if values.len() != events {
            continue;
        }
        let slot = out
            .entry(name.to_string())
            .or_insert_with(|| (0, vec![0; events]));
        slot.0 += entries;
        for (s, v) in slot.1.iter_mut().zip(values) {
            *s = s.wrapping_add(v);
        }
    }
    out
}

/// One [`Region`] per name: `event_names[i]` is the set's event of value `i`;
/// events of the set the markers did not read (optional ones absent here) count 0.
pub fn regions_from_counts(
    set: &EventSet,
    event_names: &[String],
    counts: &RegionCounts,
) -> Vec<Region> {
    counts
        .iter()
        .map(|(name, (entries, values))| {
            let mut cv = CounterValues::default();
            for (e, v) in event_names.iter().zip(values) {
                cv.add(e, Reading::exact(*v));
            }
            for e in &set.events {
                if !cv.readings.contains_key(&e.name) {
                    cv.add(&e.name, Reading::exact(0));
                }
            }
            Region {
                name: name.clone(),
                entries: *entries,
                summary: report_from_counts(set, &cv).summary,
                native_time_s: None,
                gflops: None,
                ..Default::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_set_named;

    #[test]
    fn lines_add_up_over_processes_and_bad_lines_are_skipped() {
        let c = parse_region_counts(
            "1\t2\t10,20\ta b\n2\t1\t1,2\ta b\n3\t1\t5\tshort\nx\n4\t1\t1,2\tname\twith tab\n",
            2,
        );
        assert_eq!(c["a b"], (3, vec![11, 22]));
        assert_eq!(c["name\twith tab"], (1, vec![1, 2]));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn a_region_gets_the_flop_of_its_counts() {
        let skx = event_set_named("skx").unwrap();
        let names: Vec<String> = skx.events.iter().map(|e| e.name.clone()).collect();
        let mut values = vec![0u64; names.len()];
        let i = names
            .iter()
            .position(|n| n == "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE")
            .unwrap();
        values[i] = 1000;
        let text = format!(
            "7\t3\t{}\ta\n",
            values
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let regions = regions_from_counts(skx, &names, &parse_region_counts(&text, names.len()));
        assert_eq!(regions.len(), 1);
        assert_eq!(regions[0].name, "a");
        assert_eq!(regions[0].entries, 3);
        assert_eq!(regions[0].summary.flop.fp64, Some(4000));
        assert_eq!(regions[0].summary.flop.total, 4000);
    }
}
