//! What changed between two reports (before and after a vectorisation
//! change, two compilers, two inputs): per scope (the whole program, each
//! region, the unmarked rest), FLOP by precision, FLOP and instructions by
//! precision and width, FLOP by operation, bytes, instructions; and the
//! rates (time, GFLOP/s, intensity) beside them; then, where both reports
//! attribute their work, per function and per loop ([`crate::diff_where`]).
//!
//! Counts compare exactly (the change is an `i128`); a quantity one report
//! does not have (a region only one of them marks, a field an engine cannot
//! tell) shows as absent on that side, never as zero.

use crate::diff_where::{self, Presence, RowChange, Rows, Side};
use crate::render::{duration, thousands};
use crate::report::{Report, Summary};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One counted quantity in both reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountChange {
    /// `total`, a region name, or `(unmarked)`.
    pub scope: String,
    /// What is counted: `FLOP`, `FLOP fp64`, `FLOP fp64 256-bit`, `instructions fp32 scalar`, `FLOP fma`, `bytes read`, ...
    pub quantity: String,
    pub a: Option<u64>,
    pub b: Option<u64>,
}

impl CountChange {
    /// b - a, when both are known.
    pub fn delta(&self) -> Option<i128> {
        Some(i128::from(self.b?) - i128::from(self.a?))
    }

    pub fn changed(&self) -> bool {
        self.a != self.b
    }
}

/// One rate in both reports.
#[derive(Debug, Clone, PartialEq)]
pub struct RateChange {
    pub scope: String,
    /// `time`, `GFLOP/s` or `AI(L1)`.
    pub quantity: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (min, max) over each report's timed runs (`count --runs N`), for the
    /// whole program's time and GFLOP/s.
    pub spread_a: Option<(f64, f64)>,
    pub spread_b: Option<(f64, f64)>,
}

impl RateChange {
    /// Whether the two reports' ranges of repeated runs overlap: the change
    /// is within the run-to-run noise. `None` when either was timed once.
    pub fn within_noise(&self) -> Option<bool> {
        let ((a0, a1), (b0, b1)) = (self.spread_a?, self.spread_b?);
        Some(a0 <= b1 && b0 <= a1)
    }

    /// b / a, when both are known and a is not 0.
    pub fn ratio(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a != 0.0).then(|| b / a)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    pub a_label: String,
    pub b_label: String,
    pub counts: Vec<CountChange>,
    pub rates: Vec<RateChange>,
    /// Per function and per loop.
    pub rows: Rows,
}

fn width_label(lanes: u32, width_bits: u32) -> String {
    if lanes == 1 {
        "scalar".into()
    } else {
        format!("{width_bits}-bit")
    }
}

/// The counted quantities of one summary, in a stable order.
fn quantities(s: &Summary) -> Vec<(String, u64)> {
    let mut out = vec![("FLOP".to_string(), s.flop.total)];
    for p in crate::vocab::Precision::ALL {
        if let Some(n) = s.flop.get(p) {
            out.push((format!("FLOP {}", p.key()), n));
        }
    }
    let mut widths: BTreeMap<(crate::vocab::Precision, u32, String), (u64, u64)> = BTreeMap::new();
    for r in &s.fp_instructions {
        let order = if r.lanes == 1 { 0 } else { r.width_bits };
        let e = widths
            .entry((r.precision, order, width_label(r.lanes, r.width_bits)))
            .or_default();
        e.0 += r.flop;
        e.1 += r.count;
    }
    for ((p, _, w), (flop, count)) in &widths {
        out.push((format!("FLOP {} {w}", p.key()), *flop));
        out.push((format!("instructions {} {w}", p.key()), *count));
    }
    for (op, n) in &s.flop_by_op {
        out.push((format!("FLOP {op}"), *n));
    }
    if let Some(b) = s.bytes {
        out.push(("bytes read".into(), b.read));
        out.push(("bytes written".into(), b.written));
    }
    if let Some(i) = s.instructions {
        out.push(("instructions".into(), i));
    }
    out
}

fn compare(scope: &str, a: Option<&Summary>, b: Option<&Summary>, out: &mut Vec<CountChange>) {
    let qa = a.map(quantities).unwrap_or_default();
    let qb = b.map(quantities).unwrap_or_default();
    // One order for both sides: the quantities of their sum, then any left.
    let both: Vec<(&str, &Summary)> = [a, b].into_iter().flatten().map(|s| ("", s)).collect();
    let union = crate::merge::sum_summaries(both)
        .map(|s| quantities(&s))
        .unwrap_or_default();
    let mut order: Vec<&String> = Vec::new();
    for (q, _) in union.iter().chain(&qa).chain(&qb) {
        if !order.contains(&q) {
            order.push(q);
        }
    }
    let find = |v: &[(String, u64)], q: &str| v.iter().find(|(k, _)| k == q).map(|(_, n)| *n);
    for q in order {
        // A width row one side lacks had no such instructions: zero, not unknown.
        let is_width = q.split(' ').count() == 3;
        let zero_if = |s: Option<&Summary>| {
            if is_width && s.is_some() {
                Some(0)
            } else {
                None
            }
        };
        out.push(CountChange {
            scope: scope.to_string(),
            quantity: q.clone(),
            a: find(&qa, q).or_else(|| zero_if(a)),
            b: find(&qb, q).or_else(|| zero_if(b)),
        });
    }
}

/// Compares report `a` (before) with `b` (after).
pub fn diff(a: &Report, b: &Report, a_label: &str, b_label: &str) -> Diff {
    let mut counts = Vec::new();
    let mut rates = Vec::new();
    compare("total", Some(&a.summary), Some(&b.summary), &mut counts);
    let rate = |scope: &str, q: &str, x: Option<f64>, y: Option<f64>| RateChange {
        scope: scope.into(),
        quantity: q.into(),
        a: x,
        b: y,
        spread_a: None,
        spread_b: None,
    };
    // Repeated runs give the whole program's time a spread.
    let spread = |r: &Report, gflops: bool| {
        let t = r.timing.as_ref().filter(|t| t.runs_s.len() > 1)?;
        let flop = r.summary.flop.total as f64 / 1e9;
        Some(if gflops {
            (flop / t.max_s, flop / t.min_s)
        } else {
            (t.min_s, t.max_s)
        })
    };
    let mut time = rate("total", "time", a.native_time_s, b.native_time_s);
    (time.spread_a, time.spread_b) = (spread(a, false), spread(b, false));
    rates.push(time);
    let mut g = rate("total", "GFLOP/s", a.gflops, b.gflops);
    (g.spread_a, g.spread_b) = (spread(a, true), spread(b, true));
    rates.push(g);
    rates.push(rate(
        "total",
        "AI(L1)",
        a.summary.intensity_l1(),
        b.summary.intensity_l1(),
    ));
    let mut names: Vec<&String> = a.regions.iter().map(|r| &r.name).collect();
    for r in &b.regions {
        if !names.contains(&&r.name) {
            names.push(&r.name);
        }
    }
    for name in names {
        let ra = a.regions.iter().find(|r| &r.name == name);
        let rb = b.regions.iter().find(|r| &r.name == name);
        counts.push(CountChange {
            scope: name.clone(),
            quantity: "entries".into(),
            a: ra.map(|r| r.entries),
            b: rb.map(|r| r.entries),
        });
        compare(
            name,
            ra.map(|r| &r.summary),
            rb.map(|r| &r.summary),
            &mut counts,
        );
        let mut time = rate(
            name,
            "time",
            ra.and_then(|r| r.native_time_s),
            rb.and_then(|r| r.native_time_s),
        );
        let region_spread = |r: &Report| r.timing.as_ref()?.region_spread(name);
        (time.spread_a, time.spread_b) = (region_spread(a), region_spread(b));
        rates.push(time);
        rates.push(rate(
            name,
            "GFLOP/s",
            ra.and_then(|r| r.gflops),
            rb.and_then(|r| r.gflops),
        ));
        rates.push(rate(
            name,
            "AI(L1)",
            ra.and_then(|r| r.summary.intensity_l1()),
            rb.and_then(|r| r.summary.intensity_l1()),
        ));
    }
    if a.unmarked.is_some() || b.unmarked.is_some() {
        compare(
            "(unmarked)",
            a.unmarked.as_ref(),
            b.unmarked.as_ref(),
            &mut counts,
        );
    }
    Diff {
        a_label: a_label.into(),
        b_label: b_label.into(),
        counts,
        rates,
        rows: diff_where::rows(a, b),
    }
}

fn count_cell(n: Option<u64>) -> String {
    n.map(thousands).unwrap_or_else(|| "-".into())
}

fn delta_cell(c: &CountChange) -> (String, String) {
    match (c.a, c.b, c.delta()) {
        (_, _, Some(0)) => ("=".into(), String::new()),
        (Some(a), _, Some(d)) => {
            let sign = if d > 0 { "+" } else { "-" };
            let pct = if a > 0 {
                format!("{sign}{:.1}%", 100.0 * (d.unsigned_abs() as f64) / a as f64)
            } else {
                "new".into()
            };
            (format!("{sign}{}", thousands(d.unsigned_abs() as u64)), pct)
        }
        (None, Some(_), _) => ("only in B".into(), String::new()),
        (Some(_), None, _) => ("only in A".into(), String::new()),
        _ => (String::new(), String::new()),
    }
}

fn rate_cell(q: &str, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(t) if q == "time" => duration(t),
        Some(x) => format!("{x:.4}"),
    }
}

fn ratio_cell(r: &RateChange) -> String {
    let noise = match r.within_noise() {
        Some(true) => " (within noise)",
        _ => "",
    };
    r.ratio()
        .map(|x| format!("x{x:.3}{noise}"))
        .unwrap_or_default()
}

/// A rate with its range over repeated runs, when there is one.
fn rate_with_spread(quantity: &str, v: Option<f64>, spread: Option<(f64, f64)>) -> String {
    match spread {
        Some((lo, hi)) => format!(
            "{} [{}-{}]",
            rate_cell(quantity, v),
            rate_cell(quantity, Some(lo)),
            rate_cell(quantity, Some(hi))
        ),
        None => rate_cell(quantity, v),
    }
}

/// The note under the rates when times of single runs are compared.
const ONE_RUN_NOTE: &str = "times are of one run each: their run-to-run spread is unknown; count with --runs N to see it and to have differences within the noise marked";

impl Diff {
    /// The rows to show: changed ones, or all with `all`.
    fn shown(&self, all: bool) -> impl Iterator<Item = &CountChange> {
        self.counts.iter().filter(move |c| all || c.changed())
    }

    fn shown_rates(&self) -> impl Iterator<Item = &RateChange> {
        self.rates.iter().filter(|r| r.a.is_some() || r.b.is_some())
    }

    /// A plain-text table: changed counts (every count with `all`), then the rates.
    pub fn table(&self, all: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "A: {}\nB: {}\n", self.a_label, self.b_label);
        let _ = writeln!(
            out,
            "{:<20} {:<28} {:>20} {:>20} {:>20} {:>9}",
            "scope", "quantity", "A", "B", "B - A", "change"
        );
        let mut shown = 0;
        for c in self.shown(all) {
            shown += 1;
            let (d, pct) = delta_cell(c);
            let _ = writeln!(
                out,
                "{:<20} {:<28} {:>20} {:>20} {:>20} {:>9}",
                c.scope,
                c.quantity,
                count_cell(c.a),
                count_cell(c.b),
                d,
                pct
            );
        }
        let unchanged = self.counts.len() - self.counts.iter().filter(|c| c.changed()).count();
        if shown == 0 {
            out.push_str("(no count changed)\n");
        }
        if !all && unchanged > 0 {
            let _ = writeln!(out, "({unchanged} counts unchanged; --all shows them)");
        }
        let rates: Vec<_> = self.shown_rates().collect();
        if !rates.is_empty() {
            let _ = writeln!(
                out,
                "\n{:<20} {:<28} {:>20} {:>20} {:>20}",
                "scope", "rate", "A", "B", "B / A"
            );
            let timed_once = rates.iter().any(|r| {
                r.scope == "total"
                    && r.quantity == "time"
                    && r.a.is_some()
                    && r.b.is_some()
                    && r.within_noise().is_none()
            });
            for r in rates {
                let _ = writeln!(
                    out,
                    "{:<20} {:<28} {:>20} {:>20} {:>20}",
                    r.scope,
                    r.quantity,
                    rate_with_spread(&r.quantity, r.a, r.spread_a),
                    rate_with_spread(&r.quantity, r.b, r.spread_b),
                    ratio_cell(r)
                );
            }
            if timed_once {
                let _ = writeln!(out, "({ONE_RUN_NOTE})");
            }
        }
        out.push_str(&self.rows.table(all));
        out
    }

    /// The same as Markdown tables.
    pub fn markdown(&self, all: bool) -> String {
        let esc = crate::markdown::escape;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## Changes from A to B\n\n- A: {}\n- B: {}\n",
            esc(&self.a_label),
            esc(&self.b_label)
        );
        out.push_str("| scope | quantity | A | B | B - A | change |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
        for c in self.shown(all) {
            let (d, pct) = delta_cell(c);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                esc(&c.scope),
                c.quantity,
                count_cell(c.a),
                count_cell(c.b),
                d,
                pct
            );
        }
        let rates: Vec<_> = self.shown_rates().collect();
        if !rates.is_empty() {
            out.push_str(
                "\n| scope | rate | A | B | B / A |\n| --- | --- | ---: | ---: | ---: |\n",
            );
            for r in rates {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    esc(&r.scope),
                    r.quantity,
                    rate_with_spread(&r.quantity, r.a, r.spread_a),
                    rate_with_spread(&r.quantity, r.b, r.spread_b),
                    ratio_cell(r)
                );
            }
        }
        out.push_str(&self.rows.markdown(all));
        out
    }
}

/// The kind and name of a scope of [`CountChange`] and [`RateChange`]:
/// `("program", "")`, `("region", NAME)` or `("unmarked", "")`.
fn scope_parts(scope: &str) -> (&'static str, &str) {
    match scope {
        "total" => ("program", ""),
        "(unmarked)" => ("unmarked", ""),
        name => ("region", name),
    }
}

/// B / A of two counts, when both are known and A is not 0.
fn count_ratio(a: Option<u64>, b: Option<u64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (a != 0).then(|| b as f64 / a as f64)
}

/// A row's quantities the data formats list, with their metric names.
const ROW_METRICS: [&str; 4] = ["FLOP", "bytes", "instructions", "time_s"];

fn row_metric(s: &Side, metric: &str) -> Option<serde_json::Value> {
    match metric {
        "FLOP" => Some(s.flop.into()),
        "bytes" => s.bytes.map(Into::into),
        "instructions" => s.instructions.map(Into::into),
        _ => s.time_s.map(Into::into),
    }
}

fn as_f64(v: &Option<serde_json::Value>) -> Option<f64> {
    v.as_ref().and_then(serde_json::Value::as_f64)
}

fn side_json(s: Option<Side>) -> serde_json::Value {
    match s {
        None => serde_json::Value::Null,
        Some(s) => serde_json::Value::Object(
            ROW_METRICS
                .iter()
                .map(|m| {
                    let key = if *m == "FLOP" { "flop" } else { m };
                    (key.to_string(), row_metric(&s, m).unwrap_or_default())
                })
                .collect(),
        ),
    }
}

fn rows_json(rows: &[RowChange]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            let presence = match r.presence() {
                Presence::Both => "both",
                Presence::Added => "added",
                Presence::Removed => "removed",
            };
            let ratio = |m: &str| {
                let (a, b) = (
                    as_f64(&r.a.as_ref().and_then(|s| row_metric(s, m))),
                    as_f64(&r.b.as_ref().and_then(|s| row_metric(s, m))),
                );
                a.zip(b).filter(|(a, _)| *a != 0.0).map(|(a, b)| b / a)
            };
            serde_json::json!({
                "name": r.label,
                "presence": presence,
                "a": side_json(r.a),
                "b": side_json(r.b),
                "flop_delta": i64::try_from(r.flop_delta()).ok(),
                "flop_ratio": ratio("FLOP"),
                "bytes_ratio": ratio("bytes"),
                "time_ratio": ratio("time_s"),
            })
        })
        .collect()
}

impl Diff {
    /// The diff's data as one JSON document (`"schema":
    /// "flopscope.diff/1"`): every compared count (changed or not) with A,
    /// B, B - A and B / A; the rates with A, B and B / A; the functions and
    /// loops with each side's FLOP, bytes, instructions and time. A value a
    /// report does not have is `null`.
    pub fn to_json(&self) -> String {
        let counts: Vec<serde_json::Value> = self
            .counts
            .iter()
            .map(|c| {
                let (kind, name) = scope_parts(&c.scope);
                serde_json::json!({
                    "scope": kind,
                    "name": name,
                    "quantity": c.quantity,
                    "a": c.a,
                    "b": c.b,
                    "delta": c.delta().and_then(|d| i64::try_from(d).ok()),
                    "ratio": count_ratio(c.a, c.b),
                })
            })
            .collect();
        let rates: Vec<serde_json::Value> = self
            .rates
            .iter()
            .map(|r| {
                let (kind, name) = scope_parts(&r.scope);
                serde_json::json!({
                    "scope": kind,
                    "name": name,
                    "quantity": r.quantity,
                    "a": r.a,
                    "b": r.b,
                    "ratio": r.ratio(),
                    "a_min_max": r.spread_a.map(|(lo, hi)| [lo, hi]),
                    "b_min_max": r.spread_b.map(|(lo, hi)| [lo, hi]),
                    "within_noise": r.within_noise(),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "schema": "flopscope.diff/1",
            "a": self.a_label,
            "b": self.b_label,
            "counts": counts,
            "rates": rates,
            "functions": rows_json(&self.rows.functions),
            "loops": rows_json(&self.rows.loops),
            "note": self.rows.note,
        });
        let mut s = serde_json::to_string_pretty(&doc).expect("a diff always serializes");
        s.push('\n');
        s
    }

    /// The diff's data as one CSV table, one row per compared quantity:
    /// `scope` (`program`, `region`, `unmarked`, `function`, `loop`),
    /// `name` (the region, function or loop; empty for the program and the
    /// unmarked rest), `metric`, `a`, `b` and `ratio` (B / A); an empty cell
    /// where a report does not have the value. Every count, changed or not.
    pub fn csv(&self) -> String {
        let mut out = String::from("scope,name,metric,a,b,ratio\n");
        let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        let int = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
        let field = crate::render::csv_field;
        for c in &self.counts {
            let (kind, name) = scope_parts(&c.scope);
            let _ = writeln!(
                out,
                "{kind},{},{},{},{},{}",
                field(name),
                field(&c.quantity),
                int(c.a),
                int(c.b),
                num(count_ratio(c.a, c.b))
            );
        }
        for r in &self.rates {
            let (kind, name) = scope_parts(&r.scope);
            let _ = writeln!(
                out,
                "{kind},{},{},{},{},{}",
                field(name),
                field(&r.quantity),
                num(r.a),
                num(r.b),
                num(r.ratio())
            );
        }
        let cell = |v: &Option<serde_json::Value>| match v {
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        for (kind, rows) in [
            ("function", &self.rows.functions),
            ("loop", &self.rows.loops),
        ] {
            for r in rows {
                for m in ROW_METRICS {
                    let a = r.a.as_ref().and_then(|s| row_metric(s, m));
                    let b = r.b.as_ref().and_then(|s| row_metric(s, m));
                    let ratio = as_f64(&a)
                        .zip(as_f64(&b))
                        .filter(|(a, _)| *a != 0.0)
                        .map(|(a, b)| b / a);
                    let _ = writeln!(
                        out,
                        "{kind},{},{m},{},{},{}",
                        field(&r.label),
                        cell(&a),
                        cell(&b),
                        num(ratio)
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{Counts, FpKey, FpTally};
    use crate::report::Region;
    use crate::units::Seconds;
    use crate::vocab::{FlopOp, OpClass, Precision};

    /// The same 8000 FLOP of a*x+y, scalar (A) or as 256-bit FMA (B).
    fn run(vector: bool) -> Report {
        let mut c = Counts {
            instructions: if vector { 3000 } else { 20_000 },
            ..Default::default()
        };
        if vector {
            c.add_fp(
                FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
                1000,
                8000,
                FlopOp::Fma,
            );
            c.mem_read.insert(32, 2000);
        } else {
            for op in [OpClass::Mul, OpClass::Add] {
                let k = FpKey {
                    precision: Precision::Fp64,
                    width_bits: 64,
                    lanes: 1,
                    op,
                    masked: false,
                };
                c.fp_instructions.insert(
                    k,
                    FpTally {
                        count: 4000,
                        flop: 4000,
                    },
                );
            }
            c.flop.insert((Precision::Fp64, FlopOp::Mul), 4000);
            c.flop.insert((Precision::Fp64, FlopOp::Add), 4000);
            c.mem_read.insert(8, 8000);
        }
        let mut r = Report::new("emulate", vec!["./axpy".into()]);
        r.summary = Summary::from_counts(&c);
        r.regions.push(Region {
            name: "axpy".into(),
            entries: 1,
            summary: r.summary.clone(),
            native_time_s: Some(if vector { 0.5 } else { 2.0 }),
            gflops: None,
            ..Default::default()
        });
        if !vector {
            r.regions.push(Region {
                name: "setup".into(),
                entries: 1,
                ..Default::default()
            });
        }
        r.set_native_time(Some(Seconds(if vector { 1.0 } else { 4.0 })));
        r
    }

    #[test]
    fn vectorisation_moves_flop_from_scalar_to_256_bit() {
        let d = diff(&run(false), &run(true), "scalar.json", "avx2.json");
        let get = |scope: &str, q: &str| {
            d.counts
                .iter()
                .find(|c| c.scope == scope && c.quantity == q)
                .cloned()
                .unwrap()
        };
        assert_eq!(get("total", "FLOP").delta(), Some(0));
        assert_eq!(get("total", "FLOP fp64 scalar").delta(), Some(-8000));
        assert_eq!(get("total", "FLOP fp64 256-bit").delta(), Some(8000));
        assert_eq!(get("total", "instructions fp64 256-bit").a, Some(0));
        assert_eq!(get("axpy", "FLOP fma").a, Some(0));
        assert_eq!(get("axpy", "FLOP fma").b, Some(8000));
        assert_eq!(get("setup", "entries").b, None);
        let t = d.table(false);
        assert!(t.contains("total                FLOP fp64 scalar                            8,000                    0               -8,000   -100.0%"), "{t}");
        assert!(t.contains("total                time                                      4.000 s              1.000 s               x0.250"), "{t}");
        assert!(
            !t.contains("total                FLOP                "),
            "unchanged rows are hidden:\n{t}"
        );
        assert!(d
            .table(true)
            .contains("total                FLOP                "));
        let v: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
        let row = v["counts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["scope"] == "program" && c["quantity"] == "FLOP fp64 scalar")
            .unwrap();
        assert_eq!(
            (row["a"].as_u64(), row["b"].as_u64()),
            (Some(8000), Some(0))
        );
        assert_eq!(
            (row["delta"].as_i64(), row["ratio"].as_f64()),
            (Some(-8000), Some(0.0))
        );
        let time = v["rates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["scope"] == "region" && r["name"] == "axpy" && r["quantity"] == "time")
            .unwrap();
        assert_eq!(time["ratio"].as_f64(), Some(0.25));
        let csv = d.csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "scope,name,metric,a,b,ratio");
        assert!(lines.iter().all(|l| l.split(',').count() == 6), "{csv}");
        assert!(lines.contains(&"program,,FLOP,8000,8000,1"), "{csv}");
        assert!(lines.contains(&"region,setup,entries,1,,"), "{csv}");
        assert!(lines.contains(&"region,axpy,time,2,0.5,0.25"), "{csv}");
        let md = d.markdown(false);
        assert!(
            md.contains("| axpy | FLOP fp64 256-bit | 0 | 8,000 | +8,000 | new |"),
            "{md}"
        );
    }

    #[test]
    fn time_changes_inside_the_run_to_run_spread_are_marked_as_noise() {
        use crate::timing::{TimeSource, Timing};
        let timed = |runs: Vec<f64>| {
            let mut r = run(true);
            let t = Timing::of_runs(TimeSource::NativeRuns, "native", runs, 0);
            r.set_native_time(Some(Seconds(t.median_s)));
            r.timing = Some(t);
            r
        };
        // 10.6 ms against 17.9 ms looks like a change; their runs overlap.
        let (a, b) = (
            timed(vec![0.0106, 0.0150, 0.0190]),
            timed(vec![0.0120, 0.0179, 0.0185]),
        );
        let d = diff(&a, &b, "a.json", "b.json");
        let time = d
            .rates
            .iter()
            .find(|r| r.scope == "total" && r.quantity == "time")
            .unwrap();
        assert_eq!(time.spread_a, Some((0.0106, 0.0190)));
        assert_eq!(time.within_noise(), Some(true));
        let t = d.table(false);
        assert!(t.contains("(within noise)"), "{t}");
        assert!(!t.contains("times are of one run each"), "{t}");
        // Apart: a real change.
        let fast = timed(vec![0.0050, 0.0051, 0.0052]);
        let d = diff(&a, &fast, "a.json", "fast.json");
        let time = d
            .rates
            .iter()
            .find(|r| r.scope == "total" && r.quantity == "time")
            .unwrap();
        assert_eq!(time.within_noise(), Some(false));
        assert!(!d.table(false).contains("(within noise)"));
        // One run each: the spread is unknown, and the table says so.
        let d = diff(&run(true), &run(false), "a.json", "b.json");
        assert!(
            d.table(false).contains("times are of one run each"),
            "{}",
            d.table(false)
        );
    }
}
