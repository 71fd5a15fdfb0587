//! Counter readings and their evaluation through an event set's formulas.
//!
//! Multiplexing (Linux `perf_event` time accounting): a counter that was on the
//! hardware only part of the time it was enabled is scaled by
//! `time_enabled / time_running` and marked estimated; one that never ran
//! (`time_running == 0`) is unknown, not zero, so every figure built on it is absent.

use crate::eventset::EventSet;
use crate::formula::{Expr, Num, Op};
use flopscope_model::Precision;
use std::collections::{BTreeMap, BTreeSet};

/// One counter's read-out (`PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub value: u64,
    pub time_enabled: u64,
    pub time_running: u64,
    /// The PMU covers only some CPUs (hybrid): never running means never there, so 0.
    pub zero_when_not_run: bool,
}

impl Reading {
    /// A count that was on the hardware the whole time.
    pub fn exact(value: u64) -> Reading {
        Reading {
            value,
            time_enabled: 1,
            time_running: 1,
            zero_when_not_run: false,
        }
    }

    /// A count with its enabled and running times (nanoseconds).
    pub fn timed(value: u64, time_enabled: u64, time_running: u64) -> Reading {
        Reading {
            value,
            time_enabled,
            time_running,
            zero_when_not_run: false,
        }
    }

    /// The count scaled for multiplexing, and whether it is an estimate; `None` if it never ran.
    pub fn scaled(&self) -> Option<(Num, bool)> {
        if self.time_running == 0 {
            return self.zero_when_not_run.then_some((Num::Exact(0), false));
        }
        if self.time_running >= self.time_enabled {
            return Some((Num::Exact(i128::from(self.value)), false));
        }
        let x = self.value as f64 * self.time_enabled as f64 / self.time_running as f64;
        Some((Num::Approx(x), true))
    }
}

/// The raw material of a report: readings by event name, plus what the run learnt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterValues {
    /// Event name -> one reading per counter opened for it (PMU instances, sockets).
    pub readings: BTreeMap<String, Vec<Reading>>,
    /// Bytes-per-count the kernel's sysfs gave, replacing the table's `scale`.
    pub scales: BTreeMap<String, Num>,
    /// Constants measured on the machine (the SVE `VL`), replacing the set's.
    pub constants: BTreeMap<String, Num>,
    /// The DRAM source whose events were read.
    pub dram_source: Option<String>,
    /// Things the run could not do (no DRAM PMU, permissions), for `warnings`.
    pub notes: Vec<String>,
}

impl CounterValues {
    /// Adds one reading of `event` (several readings of one event are summed after scaling).
    pub fn add(&mut self, event: &str, r: Reading) -> &mut Self {
        self.readings.entry(event.to_string()).or_default().push(r);
        self
    }
}

/// A figure with its provenance.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Metric {
    /// `None` when an event it needs never counted.
    pub value: Option<Num>,
    /// Built on multiplexed (scaled) counts.
    pub estimated: bool,
}

impl Metric {
    pub fn count(&self) -> Option<u64> {
        self.value.and_then(Num::to_count)
    }
}

/// Every formula of a set evaluated on some readings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    /// `flop` formulas by key (`fp64.256`, `total`, ...).
    pub flop: BTreeMap<String, Metric>,
    /// FLOP per precision: explicit, or the sum of its widths; only precisions the set counts.
    pub by_precision: BTreeMap<Precision, Metric>,
    /// The FLOP total: explicit, or the sum of the precisions.
    pub total: Metric,
    /// `info` formulas by key (`instructions`, ...).
    pub info: BTreeMap<String, Metric>,
    /// DRAM bytes by key (`read`, `write`, `total`), when a DRAM source was read.
    pub dram: BTreeMap<String, Metric>,
    /// Events that were multiplexed: name -> fraction of the time on the hardware.
    pub multiplexed: BTreeMap<String, f64>,
    /// Events with no usable reading (never opened or never ran).
    pub unknown: BTreeSet<String>,
    /// Checks that fired, with their warning text filled in.
    pub fired_checks: Vec<String>,
    /// Results that came out negative (a subtraction of counts) and were dropped.
    pub negative: Vec<String>,
}

struct Ctx {
    values: BTreeMap<String, (Num, bool)>,
    constants: BTreeMap<String, Num>,
}

impl Ctx {
    fn metric(&self, expr: &Expr) -> Metric {
        let value = expr.eval(&|n| {
            self.values
                .get(n)
                .map(|(v, _)| *v)
                .or_else(|| self.constants.get(n).copied())
        });
        let estimated = expr
            .names()
            .iter()
            .any(|n| self.values.get(*n).is_some_and(|(_, e)| *e));
        Metric { value, estimated }
    }
}

fn sum(metrics: &[Metric]) -> Metric {
    let mut acc = Some(Num::Exact(0));
    for m in metrics {
        acc = match (acc, m.value) {
            (Some(a), Some(b)) => Some(a.apply(Op::Add, b)),
            _ => None,
        };
    }
    Metric {
        value: acc,
        estimated: metrics.iter().any(|m| m.estimated),
    }
}

/// The count of `event`: its readings (PMU instances, sockets, CPUs), each
/// scaled for multiplexing, summed, before the event's `scale`; `None` when it
/// was not opened or a reading never ran. What the formulas see, and what
/// sampling distributes over functions.
pub fn event_total(values: &CounterValues, event: &str) -> Option<Metric> {
    let readings = values.readings.get(event).filter(|r| !r.is_empty())?;
    let scaled: Vec<Metric> = readings
        .iter()
        .map(|r| {
            r.scaled().map(|(v, estimated)| Metric {
                value: Some(v),
                estimated,
            })
        })
        .collect::<Option<_>>()?;
    Some(sum(&scaled))
}

/// Evaluates every formula of `set` on `values`.
pub fn evaluate(set: &EventSet, values: &CounterValues) -> Evaluation {
    let mut ev = Evaluation::default();
    let dram = values
        .dram_source
        .as_deref()
        .and_then(|n| set.dram_source(n));
    let events = set
        .events
        .iter()
        .chain(dram.iter().flat_map(|d| d.events.iter()));
    let mut known = BTreeMap::new();
    for e in events {
        let Some(total) = event_total(values, &e.name) else {
            ev.unknown.insert(e.name.clone());
            continue;
        };
        let readings = &values.readings[&e.name];
        let (enabled, running) =
            readings
                .iter()
                .filter(|r| r.time_running > 0)
                .fold((0u128, 0u128), |(a, b), r| {
                    (
                        a + u128::from(r.time_enabled),
                        b + u128::from(r.time_running),
                    )
                });
        if running < enabled {
            ev.multiplexed
                .insert(e.name.clone(), running as f64 / enabled as f64);
        }
        let count = total.value.expect("event_total gives a value");
        let value = match values.scales.get(&e.name).copied().or(e.scale) {
            Some(s) => count.apply(Op::Mul, s),
            None => count,
        };
        known.insert(e.name.clone(), (value, total.estimated));
    }
    let mut constants = set.constants.clone();
    constants.extend(values.constants.iter().map(|(k, v)| (k.clone(), *v)));
    let ctx = Ctx {
        values: known,
        constants,
    };

    for f in &set.flop {
        ev.flop.insert(f.key.clone(), ctx.metric(&f.expr));
    }
    for f in &set.info {
        ev.info.insert(f.key.clone(), ctx.metric(&f.expr));
    }
    if let Some(d) = dram {
        for f in &d.formulas {
            ev.dram.insert(f.key.clone(), ctx.metric(&f.expr));
        }
    }
    for p in Precision::ALL {
        let explicit = ev.flop.get(p.key()).copied();
        let parts: Vec<Metric> = ev
            .flop
            .iter()
            .filter(|(k, _)| k.split_once('.').is_some_and(|(q, _)| q == p.key()))
            .map(|(_, m)| *m)
            .collect();
        let m = match explicit {
            Some(m) => Some(m),
            None if !parts.is_empty() => Some(sum(&parts)),
            None => None,
        };
        if let Some(m) = m {
            ev.by_precision.insert(p, m);
        }
    }
    ev.total = match ev.flop.get("total") {
        Some(m) => *m,
        None => sum(&ev.by_precision.values().copied().collect::<Vec<_>>()),
    };
    for c in &set.checks {
        let m = ctx.metric(&c.expr);
        if let Some(v) = m.value.filter(|v| v.as_f64() > 0.0) {
            ev.fired_checks.push(
                c.warning
                    .replace("{value}", &format!("{}", v.to_count().unwrap_or(0))),
            );
        }
    }
    for (key, m) in ev.flop.iter().chain(ev.dram.iter()).chain(ev.info.iter()) {
        if m.value.is_some() && m.count().is_none() {
            ev.negative.push(key.clone());
        }
    }
    ev
}
