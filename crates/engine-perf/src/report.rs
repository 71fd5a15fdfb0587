//! From evaluated counters to the one [`Report`] every engine produces.
//!
//! What hardware events cannot tell stays absent: precisions a set does not split,
//! `flop_by_op`, `fp_elements` and `fp_instructions` (the events count FLOP or
//! width-weighted instructions with FMA twice, not SDE-style instructions), and
//! `bytes` (there is no L1 byte event). DRAM bytes give `arithmetic_intensity.dram`.

use crate::eventset::{EventSet, Scope};
use crate::values::{evaluate, CounterValues, Evaluation, Metric};
use flopscope_model::{ByteTotals, FlopTotals, Report, Summary};

/// Memory-controller counters see the whole socket, not the program.
const SOCKET_CAVEAT: &str = "DRAM bytes come from memory-controller counters: per socket, they include every core's traffic (other programs, the kernel) and hardware prefetches, so run on a quiet machine";

fn fmt_metric(m: &Metric) -> String {
    match (m.value, m.count()) {
        (None, _) => "unknown".into(),
        (Some(v), None) => format!("{v} (negative: dropped)"),
        (Some(_), Some(c)) if m.estimated => format!("{c} (estimated)"),
        (Some(_), Some(c)) => c.to_string(),
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The report for `values` counted with `set` (pure: no command, exit status or time).
pub fn report_from_counts(set: &EventSet, values: &CounterValues) -> Report {
    let ev = evaluate(set, values);
    let mut r = Report::new("perf", Vec::new());
    let mut w = vec![format!(
        "counted with hardware event set `{}` ({}); `flopscope events --arch {}` lists its events and formulas",
        set.name, set.title, set.name
    )];
    w.extend(set.caveats.iter().cloned());
    w.extend(set.verify.iter().map(|v| format!("unverified: {v}")));
    let dram = values
        .dram_source
        .as_deref()
        .and_then(|n| set.dram_source(n));
    if let Some(d) = dram {
        if d.scope == Scope::Socket {
            w.push(SOCKET_CAVEAT.to_string());
        }
        w.extend(d.caveats.iter().cloned());
        w.extend(d.verify.iter().map(|v| format!("unverified: {v}")));
    }
    w.extend(values.notes.iter().cloned());
    w.extend(ev.fired_checks.iter().cloned());
    for (event, fraction) in &ev.multiplexed {
        w.push(format!(
            "estimated: {event} was on a counter {} of the time (multiplexed); its count is scaled by time_enabled/time_running",
            percent(*fraction)
        ));
    }
    for event in &ev.unknown {
        w.push(format!("unknown: {event} never counted (not opened, or time_running = 0): the figures built on it are absent"));
    }
    for key in &ev.negative {
        w.push(format!("{key} came out negative (a difference of counts that were multiplexed or are inexact): dropped"));
    }

    if ev.total.count().is_none() {
        w.push(
            "the FLOP total is unknown (an event it needs never counted): flop.total is 0 and the report is incomplete".into(),
        );
    }
    r.summary = summary_of(&ev);
    r.complete = ev.total.count().is_some() && ev.fired_checks.is_empty();

    if let Some(d) = dram {
        let get = |k: &str| ev.dram.get(k).and_then(Metric::count);
        let bytes = get("total").or_else(|| Some(get("read")? + get("write")?));
        if let (Some(b), Some(t)) = (bytes, ev.total.count()) {
            r.arithmetic_intensity.dram = (b > 0).then(|| t as f64 / b as f64);
        }
        if let (Some(read), Some(written)) = (get("read"), get("write")) {
            r.dram_bytes = Some(ByteTotals { read, written });
        }
        let parts: Vec<String> = ev
            .dram
            .iter()
            .map(|(k, m)| format!("{k} {} bytes", fmt_metric(m)))
            .collect();
        w.push(format!("DRAM traffic ({}): {}", d.title, parts.join(", ")));
    }
    w.extend(breakdown_lines(&ev));
    r.warnings = w;
    r
}

/// The counts an evaluation gives: FLOP in total, by precision and by
/// precision and width, and instructions. The totals' and each sampled
/// function's figures (crate::attribute) are made by this one function.
pub fn summary_of(ev: &Evaluation) -> Summary {
    let mut flop = FlopTotals::default();
    for (p, m) in &ev.by_precision {
        flop.set(*p, m.count());
    }
    flop.total = ev.total.count().unwrap_or(0);
    Summary {
        flop,
        flop_by_width: ev
            .flop
            .iter()
            .filter(|(k, _)| k.contains('.'))
            .filter_map(|(k, m)| Some((k.to_string(), m.count()?)))
            .collect(),
        instructions: ev.info.get("instructions").and_then(Metric::count),
        ..Default::default()
    }
}

/// Per-width FLOP that are estimated or unknown, and the informational
/// counts, as `warnings` lines (exact per-width FLOP are in `flop_by_width`).
fn breakdown_lines(ev: &Evaluation) -> Vec<String> {
    let mut out = Vec::new();
    let widths: Vec<String> = ev
        .flop
        .iter()
        .filter(|(k, m)| k.contains('.') && (m.estimated || m.count().is_none()))
        .map(|(k, m)| format!("{k} {}", fmt_metric(m)))
        .collect();
    if !widths.is_empty() {
        out.push(format!(
            "FLOP by precision and width, estimated or unknown: {}",
            widths.join(", ")
        ));
    }
    let info: Vec<String> = ev
        .info
        .iter()
        .filter(|(k, _)| *k != "instructions")
        .map(|(k, m)| format!("{k} {}", fmt_metric(m)))
        .collect();
    if !info.is_empty() {
        out.push(format!("other hardware counts: {}", info.join(", ")));
    }
    out
}
