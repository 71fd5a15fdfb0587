//! The HTML report's sortable tables of functions and loops (click a
//! header to sort: [`SORT_JS`], inline). Every row holding FLOP or
//! samples is listed; each cell sorts by its exact value (`data-v`).
//!
//! Time share is a row's time over the time of all functions (the sampled
//! time); loops include their nested loops, so their shares overlap.

use super::escape;
use super::source::{place, Sources};
use crate::hotspots::shorten;
use crate::scale::sig3;
use flopscope_model::render::{duration, share, thousands};
use flopscope_model::{FunctionRow, LoopRow, Report, Summary};
use std::fmt::Write;

/// The script that sorts every `table.sortable` (plain JavaScript, no
/// library, nothing fetched).
pub const SORT_JS: &str = include_str!("sort.js");

/// A numeric cell: shown text, exact sort key.
fn num(text: String, key: impl std::fmt::Display) -> String {
    format!("<td data-v=\"{key}\">{text}</td>")
}

fn opt_num<T: Copy + std::fmt::Display>(v: Option<T>, show: impl Fn(T) -> String) -> String {
    match v {
        Some(x) => num(show(x), x),
        None => "<td data-v=\"\">-</td>".into(),
    }
}

fn bytes(s: &Summary) -> u64 {
    s.bytes.map(|b| b.read + b.written).unwrap_or(0)
}

/// Cells shared by both tables: FLOP, share, GFLOP/s, FLOP/byte, time,
/// time share, samples.
fn counts(
    s: &Summary,
    gflops: Option<f64>,
    time_s: Option<f64>,
    samples: Option<u64>,
    total: u64,
    total_time: f64,
) -> String {
    let f = s.flop.total;
    let share_v = if total > 0 {
        f as f64 / total as f64
    } else {
        0.0
    };
    let time_share = time_s.filter(|_| total_time > 0.0).map(|t| t / total_time);
    [
        num(thousands(f), f),
        num(share(f, total), share_v),
        opt_num(gflops, sig3),
        opt_num(s.intensity_l1(), sig3),
        opt_num(time_s, duration),
        opt_num(time_share, |x| format!("{:.1}%", 100.0 * x)),
        opt_num(samples, thousands),
        num(thousands(bytes(s)), bytes(s)),
    ]
    .concat()
}

const COUNT_HEADS: &str = "<th class=\"num\">FLOP</th><th class=\"num\">share</th><th class=\"num\">GFLOP/s</th><th class=\"num\">FLOP/byte</th><th class=\"num\">time</th><th class=\"num\">time share</th><th class=\"num\">samples</th><th class=\"num\">bytes</th>";

fn shown(flop: u64, samples: Option<u64>) -> bool {
    flop > 0 || samples.unwrap_or(0) > 0
}

/// The sampled time of all functions (the time shares' whole).
fn total_time(r: &Report) -> f64 {
    r.functions.iter().filter_map(|f| f.time_s).sum()
}

fn no_time_note(out: &mut String, r: &Report) {
    if r.functions.iter().all(|f| f.time_s.is_none()) {
        out.push_str("<p class=\"note\">This report has no time per function or loop, so no GFLOP/s or time shares: count under the native engine (the default where it can run the program) or add <code>--runs N</code> to <code>flopscope count</code>.</p>\n");
    }
}

fn function_row(out: &mut String, f: &FunctionRow, s: &Sources, total: u64, total_time: f64) {
    let module = crate::hotspots::file_name(&f.module);
    let inlined = if f.inlined_into.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"inl\" title=\"inlined into {}\">(inlined)</span>",
            escape(&f.inlined_into.join(", "))
        )
    };
    let _ = writeln!(
        out,
        "<tr><td class=\"name\">{}{inlined}</td><td class=\"name\" title=\"{}\">{}</td><td class=\"name\">{}</td>{}</tr>",
        escape(&f.name),
        escape(&f.module),
        escape(module),
        place(s, f.file.as_deref(), f.line),
        counts(&f.summary, f.gflops, f.time_s, f.samples, total, total_time),
    );
}

/// The functions table.
pub fn functions(out: &mut String, r: &Report, s: &Sources) {
    if r.functions.is_empty() {
        return;
    }
    let total = r.summary.flop.total;
    let time = total_time(r);
    out.push_str("<h2 id=\"functions\">Functions</h2>\n");
    no_time_note(out, r);
    let _ = writeln!(
        out,
        "<table class=\"sortable\">\n<thead><tr><th class=\"name\">function</th><th class=\"name\">module</th><th class=\"name\">source</th>{COUNT_HEADS}</tr></thead>\n<tbody>"
    );
    let mut rows: Vec<&FunctionRow> = r
        .functions
        .iter()
        .filter(|f| shown(f.summary.flop.total, f.samples))
        .collect();
    rows.sort_by(|a, b| {
        b.summary
            .flop
            .total
            .cmp(&a.summary.flop.total)
            .then(b.samples.cmp(&a.samples))
    });
    for f in &rows {
        function_row(out, f, s, total, time);
    }
    out.push_str("</tbody>\n</table>\n");
    let hidden = r.functions.len() - rows.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{hidden} more functions ran with neither FLOP nor samples.</p>"
        );
    }
}

fn depth(loops: &[LoopRow], mut i: usize) -> usize {
    let mut d = 0;
    while let Some(p) = loops[i]
        .parent
        .filter(|p| *p < loops.len() && d < loops.len())
    {
        d += 1;
        i = p;
    }
    d
}

/// The loops table.
pub fn loops(out: &mut String, r: &Report, s: &Sources) {
    if r.loops.is_empty() {
        return;
    }
    let total = r.summary.flop.total;
    let time = total_time(r);
    out.push_str("<h2 id=\"loops\">Loops</h2>\n<p>A loop's counts include its nested loops (<i>self FLOP</i>: without them); <i>depth</i> 0 is an outermost loop; <i>per entry</i> is the average trip count.</p>\n");
    let _ = writeln!(
        out,
        "<table class=\"sortable\">\n<thead><tr><th class=\"name\">function</th><th class=\"name\">loop at</th><th class=\"num\">depth</th>{COUNT_HEADS}<th class=\"num\">self FLOP</th><th class=\"num\">iterations</th><th class=\"num\">entries</th><th class=\"num\">per entry</th></tr></thead>\n<tbody>"
    );
    let mut rows: Vec<(usize, &LoopRow)> = r
        .loops
        .iter()
        .enumerate()
        .filter(|(_, l)| shown(l.summary.flop.total, l.samples))
        .collect();
    rows.sort_by(|a, b| {
        b.1.summary
            .flop
            .total
            .cmp(&a.1.summary.flop.total)
            .then(a.0.cmp(&b.0))
    });
    for (i, l) in &rows {
        let gflops = l.gflops;
        let per_entry = (l.entries > 0).then(|| l.iterations as f64 / l.entries as f64);
        let _ = writeln!(
            out,
            "<tr><td class=\"name\" title=\"{}\">{}</td><td class=\"name\">{}</td>{}{}{}{}{}{}</tr>",
            escape(&l.module),
            escape(&shorten(&l.function, 60)),
            place(s, l.file.as_deref(), l.line),
            num(depth(&r.loops, *i).to_string(), depth(&r.loops, *i)),
            counts(&l.summary, gflops, l.time_s, l.samples, total, time),
            num(thousands(l.self_counts.flop.total), l.self_counts.flop.total),
            num(thousands(l.iterations), l.iterations),
            num(thousands(l.entries), l.entries),
            opt_num(per_entry, |x| if x >= 1000.0 {
                thousands(x.round() as u64)
            } else {
                format!("{x:.1}")
            }),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    let hidden = r.loops.len() - rows.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{hidden} more loops ran with neither FLOP nor samples.</p>"
        );
    }
}
