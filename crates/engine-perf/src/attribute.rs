//! FLOP per function from sampled events (the VTune method), scaled to the
//! counted totals.
//!
//! A sample of event E in function f stands for `period` events of E there.
//! The counting side gives each event's exact total (scaled for multiplexing
//! like the totals), so each event's total is split over the functions in
//! proportion to their samples of it ([`apportion`]: integers that add up to
//! the total exactly), and each function's events go through the event set's
//! formulas, by the same code as the totals ([`crate::values::evaluate`] and
//! [`crate::report::summary_of`]). The formulas are linear in the counts, so
//! over `functions[]` FLOP add up to the totals; when a total is an estimate
//! (multiplexed, or a formula that divides) the last FLOP of rounding go to
//! the largest row ([`reconcile`]), so they add up exactly then too.
//!
//! An event that was counted but never sampled (fewer events than one
//! period) keeps its count in a row named [`UNSAMPLED`].

use crate::eventset::EventSet;
use crate::profile::Profile;
use crate::values::{evaluate, event_total, CounterValues, Reading};
use flopscope_model::{FunctionRow, Precision, Summary};
use std::collections::BTreeMap;

/// The row holding counts of events no sample fell on.
pub const UNSAMPLED: &str = "[unsampled]";

/// Splits `total` in proportion to `weights` into integers that sum to
/// `total` (largest remainder; ties to the earlier weight). All zero if the
/// weights are.
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let exact: Vec<(u64, u128)> = weights
        .iter()
        .map(|&w| {
            let x = u128::from(total) * u128::from(w);
            ((x / sum) as u64, x % sum)
        })
        .collect();
    let mut out: Vec<u64> = exact.iter().map(|(q, _)| *q).collect();
    let short = total - out.iter().sum::<u64>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(short as usize) {
        out[i] += 1;
    }
    out
}

/// Event name -> count (`None`: unknown).
type EventCounts = BTreeMap<String, Option<u64>>;

/// Each function's share of each sampled event's counted total, and what no
/// sample fell on; `None` for an event whose total is unknown.
fn split_counts(
    values: &CounterValues,
    profile: &Profile,
) -> (Vec<EventCounts>, BTreeMap<String, u64>) {
    let mut per_fn = vec![BTreeMap::new(); profile.functions.len()];
    let mut unsampled = BTreeMap::new();
    for event in &profile.events {
        let total = event_total(values, event).and_then(|m| m.count());
        let weights: Vec<u64> = profile
            .functions
            .iter()
            .map(|f| f.samples.get(event).copied().unwrap_or(0))
            .collect();
        let shares = total.map(|t| apportion(t, &weights));
        for (i, row) in per_fn.iter_mut().enumerate() {
            row.insert(event.clone(), shares.as_ref().map(|s| s[i]));
        }
        if let Some(t) = total.filter(|t| *t > 0 && weights.iter().all(|w| *w == 0)) {
            unsampled.insert(event.clone(), t);
        }
    }
    (per_fn, unsampled)
}

fn row(name: &str, module: &str, address: String, summary: Summary, samples: u64) -> FunctionRow {
    FunctionRow {
        name: name.to_string(),
        module: module.to_string(),
        address,
        summary,
        samples: Some(samples),
        ..Default::default()
    }
}

/// One function's counts through the set's formulas.
fn summary_for(set: &EventSet, values: &CounterValues, counts: &EventCounts) -> Summary {
    let mut cv = CounterValues {
        constants: values.constants.clone(),
        ..Default::default()
    };
    for (event, n) in counts {
        if let Some(n) = n {
            cv.add(event, Reading::exact(*n));
        }
    }
    // Events of the set that were not sampled (INSTRUCTIONS): unknown per
    // function, so what needs them is absent, as in the totals.
    crate::report::summary_of(&evaluate(set, &cv))
}

/// The rows of `profile`, sorted by FLOP then samples, adding up to `totals`' FLOP.
pub fn function_rows(
    set: &EventSet,
    values: &CounterValues,
    profile: &Profile,
    totals: &Summary,
) -> Vec<FunctionRow> {
    let (per_fn, unsampled) = split_counts(values, profile);
    let mut rows: Vec<FunctionRow> = profile
        .functions
        .iter()
        .zip(&per_fn)
        .map(|(f, counts)| {
            let mut r = row(
                &f.name,
                &f.module,
                format!("{:#x}", f.address),
                summary_for(set, values, counts),
                f.total_samples(),
            );
            r.file = f.file.clone();
            r.line = f.line;
            r.inlined_into = f.inlined_into.clone();
            r
        })
        .collect();
    if !unsampled.is_empty() {
        let counts = profile
            .events
            .iter()
            .map(|e| (e.clone(), Some(unsampled.get(e).copied().unwrap_or(0))))
            .collect();
        rows.push(row(
            UNSAMPLED,
            "",
            String::new(),
            summary_for(set, values, &counts),
            0,
        ));
    }
    reconcile(&mut rows, totals);
    rows.sort_by(|a, b| {
        b.summary
            .flop
            .total
            .cmp(&a.summary.flop.total)
            .then(b.samples.cmp(&a.samples))
            .then(a.name.cmp(&b.name))
    });
    rows
}

/// Puts the difference between `total` and the rows' sum of one figure on the
/// row with the most of it (rounding of estimated counts: a few FLOP).
fn settle(
    rows: &mut [FunctionRow],
    total: u64,
    get: impl Fn(&Summary) -> Option<u64>,
    set: impl Fn(&mut Summary, u64),
) {
    let sum: i128 = rows
        .iter()
        .filter_map(|r| get(&r.summary))
        .map(i128::from)
        .sum();
    let diff = i128::from(total) - sum;
    if diff == 0 || rows.is_empty() {
        return;
    }
    let top = (0..rows.len())
        .max_by_key(|&i| (get(&rows[i].summary).unwrap_or(0), std::cmp::Reverse(i)))
        .expect("rows is not empty");
    let v = i128::from(get(&rows[top].summary).unwrap_or(0)) + diff;
    set(
        &mut rows[top].summary,
        u64::try_from(v.max(0)).unwrap_or(u64::MAX),
    );
}

/// Makes every FLOP figure of the rows add up to `totals`' (see the module doc).
pub fn reconcile(rows: &mut [FunctionRow], totals: &Summary) {
    for (key, &total) in &totals.flop_by_width {
        settle(
            rows,
            total,
            |s| s.flop_by_width.get(key).copied(),
            |s, v| {
                s.flop_by_width.insert(key.clone(), v);
            },
        );
    }
    for p in Precision::ALL {
        if let Some(total) = totals.flop.get(p) {
            settle(
                rows,
                total,
                |s| s.flop.get(p),
                |s, v| s.flop.set(p, Some(v)),
            );
        }
    }
    settle(
        rows,
        totals.flop.total,
        |s| Some(s.flop.total),
        |s, v| s.flop.total = v,
    );
}

/// The rows of a software-clock profile: each function's share of the counted
/// CPU time of `event` (nanoseconds) as `time_s`, no FLOP.
pub fn clock_rows(values: &CounterValues, profile: &Profile, event: &str) -> Vec<FunctionRow> {
    let total = event_total(values, event).and_then(|m| m.count());
    let weights: Vec<u64> = profile
        .functions
        .iter()
        .map(|f| f.samples.get(event).copied().unwrap_or(0))
        .collect();
    let ns = total.map(|t| apportion(t, &weights));
    let mut rows: Vec<FunctionRow> = profile
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut r = row(
                &f.name,
                &f.module,
                format!("{:#x}", f.address),
                Summary::default(),
                weights[i],
            );
            r.file = f.file.clone();
            r.line = f.line;
            r.inlined_into = f.inlined_into.clone();
            r.time_s = ns.as_ref().map(|ns| ns[i] as f64 * 1e-9);
            r
        })
        .collect();
    rows.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    rows
}

/// What the rows rest on, for the report's `warnings`: `what` the rows
/// estimate, `unit` what the period counts (`events`, `ns of CPU time`).
pub fn warnings(values: &CounterValues, profile: &Profile, what: &str, unit: &str) -> Vec<String> {
    let mut w = vec![format!(
        "functions: {what} are estimated by sampling (the VTune method): each sample stands for {} {unit} (the period) at the sampled instruction, and each counted total is split over the functions in proportion to their samples of it, so the rows add up to the totals. A row resting on n samples is uncertain by about 1/sqrt(n) of its value (100 samples: 10%); skid attributes a sample to an instruction near the one whose event overflowed the counter (a few instructions later, possibly in the next function)",
        profile.period
    )];
    let per_event: Vec<String> = profile
        .events
        .iter()
        .map(|e| {
            let n = profile.samples_of(e);
            let counted = event_total(values, e).and_then(|m| m.count());
            let cover = match counted {
                Some(c) if c > 0 => format!(
                    " ({:.1}% of the {c} counted)",
                    100.0 * (n as f64 * profile.period as f64) / c as f64
                ),
                Some(_) => " (none counted)".into(),
                None => " (count unknown)".into(),
            };
            format!("{e} {n}{cover}")
        })
        .collect();
    w.push(format!(
        "samples per event (samples x period against the count): {}",
        per_event.join(", ")
    ));
    if profile.lost > 0 {
        w.push(format!(
            "{} sample records were lost (a ring buffer was full): the shares rest on the samples read; a larger --sample-period loses fewer",
            profile.lost
        ));
    }
    if profile.throttled > 0 {
        w.push(format!(
            "the kernel throttled sampling {} times (kernel.perf_event_max_sample_rate): samples are missing from those intervals, which can bias the shares; a larger --sample-period avoids it",
            profile.throttled
        ));
    }
    if profile.malformed > 0 {
        w.push(format!(
            "{} bytes or samples of the ring buffers could not be read and were skipped",
            profile.malformed
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_set_named;
    use crate::profile::SampledFunction;

    #[test]
    fn apportion_is_proportional_and_exact() {
        assert_eq!(apportion(100, &[3, 1]), vec![75, 25]);
        assert_eq!(apportion(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(apportion(2, &[1, 1, 1]), vec![1, 1, 0]);
        assert_eq!(apportion(7, &[0, 0]), vec![0, 0]);
        assert_eq!(
            apportion(u64::MAX, &[1, 1])
                .iter()
                .map(|&x| x as u128)
                .sum::<u128>(),
            u64::MAX as u128
        );
        assert_eq!(apportion(5, &[0, 2, 0]), vec![0, 5, 0]);
    }

    fn function(name: &str, samples: &[(&str, u64)]) -> SampledFunction {
        SampledFunction {
            name: name.into(),
            module: "/bin/app".into(),
            address: 0x1000,
            samples: samples.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
            ..Default::default()
        }
    }

    const PD256: &str = "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE";
    const SD: &str = "FP_ARITH_INST_RETIRED.SCALAR_DOUBLE";
    const PS128: &str = "FP_ARITH_INST_RETIRED.128B_PACKED_SINGLE";

    fn skx_values(given: &[(&str, Reading)]) -> CounterValues {
        let set = event_set_named("skx").unwrap();
        let mut v = CounterValues::default();
        for e in &set.events {
            let r = given
                .iter()
                .find(|(n, _)| *n == e.name)
                .map_or(Reading::exact(0), |(_, r)| *r);
            v.add(&e.name, r);
        }
        v
    }

    fn sampled_events() -> Vec<String> {
        let set = event_set_named("skx").unwrap();
        set.events
            .iter()
            .filter(|e| e.name != "INSTRUCTIONS")
            .map(|e| e.name.clone())
            .collect()
    }

    /// The VTune method on skx: `kernel` has 3/4 of the 256-bit double samples
    /// and all scalar ones; the counted totals are split by those shares and
    /// turned into FLOP by the set's multipliers (x4, x1).
    #[test]
    fn each_function_gets_its_share_of_each_event_times_its_multiplier() {
        let set = event_set_named("skx").unwrap();
        let values = skx_values(&[
            (PD256, Reading::exact(4_000_000)),
            (SD, Reading::exact(1_000_003)),
            ("INSTRUCTIONS", Reading::exact(99_000_000)),
        ]);
        let profile = Profile {
            period: 100_000,
            events: sampled_events(),
            functions: vec![
                function("kernel", &[(PD256, 30), (SD, 10)]),
                function("setup", &[(PD256, 10)]),
            ],
            ..Default::default()
        };
        let totals = crate::report_from_counts(set, &values).summary;
        assert_eq!(totals.flop.total, 16_000_000 + 1_000_003);
        let rows = function_rows(set, &values, &profile, &totals);
        assert_eq!(rows.len(), 2);
        let kernel = &rows[0];
        assert_eq!(kernel.name, "kernel");
        assert_eq!(kernel.samples, Some(40));
        assert_eq!(kernel.summary.flop_by_width["fp64.256"], 3_000_000 * 4);
        assert_eq!(kernel.summary.flop_by_width["fp64.scalar"], 1_000_003);
        assert_eq!(kernel.summary.flop.fp64, Some(12_000_000 + 1_000_003));
        assert_eq!(kernel.summary.flop.fp32, Some(0));
        assert_eq!(kernel.summary.flop.total, 13_000_003);
        assert_eq!(kernel.summary.instructions, None, "not sampled");
        assert_eq!(kernel.time_s, None);
        let setup = &rows[1];
        assert_eq!(setup.summary.flop.total, 4_000_000);
        assert_eq!(setup.samples, Some(10));
        assert_eq!(
            rows.iter().map(|r| r.summary.flop.total).sum::<u64>(),
            totals.flop.total
        );
    }

    #[test]
    fn a_counted_event_without_samples_goes_to_the_unsampled_row() {
        let set = event_set_named("skx").unwrap();
        let values = skx_values(&[(PD256, Reading::exact(1000)), (PS128, Reading::exact(50))]);
        let profile = Profile {
            period: 100,
            events: sampled_events(),
            functions: vec![function("f", &[(PD256, 10)])],
            ..Default::default()
        };
        let totals = crate::report_from_counts(set, &values).summary;
        let rows = function_rows(set, &values, &profile, &totals);
        let un = rows.iter().find(|r| r.name == UNSAMPLED).unwrap();
        assert_eq!(un.summary.flop.fp32, Some(200));
        assert_eq!(un.samples, Some(0));
        assert_eq!(rows[0].summary.flop.total, 4000);
        assert_eq!(rows.iter().map(|r| r.summary.flop.total).sum::<u64>(), 4200);
    }

    /// Multiplexed counts are estimates: the rows still add up to the totals,
    /// figure by figure.
    #[test]
    fn estimated_totals_are_met_exactly_by_the_rows() {
        let set = event_set_named("skx").unwrap();
        let values = skx_values(&[
            (PD256, Reading::timed(1001, 3, 2)), // 1501.5 -> estimated
            (SD, Reading::timed(7, 3, 2)),       // 10.5
        ]);
        let profile = Profile {
            period: 10,
            events: sampled_events(),
            functions: vec![
                function("a", &[(PD256, 1), (SD, 1)]),
                function("b", &[(PD256, 1), (SD, 1)]),
                function("c", &[(PD256, 1)]),
            ],
            ..Default::default()
        };
        let totals = crate::report_from_counts(set, &values).summary;
        let rows = function_rows(set, &values, &profile, &totals);
        let sum = |get: &dyn Fn(&Summary) -> Option<u64>| -> u64 {
            rows.iter().filter_map(|r| get(&r.summary)).sum()
        };
        assert_eq!(sum(&|s| Some(s.flop.total)), totals.flop.total);
        assert_eq!(sum(&|s| s.flop.fp64), totals.flop.fp64.unwrap());
        for (k, v) in &totals.flop_by_width {
            assert_eq!(sum(&|s| s.flop_by_width.get(k).copied()), *v, "{k}");
        }
    }

    #[test]
    fn clock_rows_split_the_counted_time() {
        let mut values = CounterValues::default();
        values.add("task-clock", Reading::exact(2_000_000_000));
        let profile = Profile {
            period: 1_000_000,
            events: vec!["task-clock".into()],
            functions: vec![
                function("light", &[("task-clock", 500)]),
                function("heavy", &[("task-clock", 1500)]),
            ],
            ..Default::default()
        };
        let rows = clock_rows(&values, &profile, "task-clock");
        assert_eq!(rows[0].name, "heavy");
        assert_eq!(rows[0].samples, Some(1500));
        assert_eq!(rows[0].time_s, Some(1.5));
        assert_eq!(rows[1].time_s, Some(0.5));
        assert_eq!(rows[0].summary.flop.total, 0);
        let w = warnings(&values, &profile, "times", "ns of CPU time");
        assert!(w[0].contains("1/sqrt(n)") && w[0].contains("skid"), "{w:?}");
        assert!(
            w[1].contains("task-clock 2000 (100.0% of the 2000000000 counted)"),
            "{w:?}"
        );
    }
}
