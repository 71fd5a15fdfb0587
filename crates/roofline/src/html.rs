//! The HTML report: one self-contained file (inline SVG chart, inline CSS,
//! one inline script that sorts tables, nothing fetched from a network)
//! with the run's metadata, the roofline and its table, the regions, the
//! sortable tables of functions and loops ([`tables`]), the source files
//! annotated line by line ([`source`]), the instruction mix as precision x
//! width bars, and for a merge the per-source rows and the load imbalance.

pub mod source;
pub mod tables;

use crate::chart::{Chart, ChartPoint, Marker};
use crate::palette::Rgb;
use crate::scale::sig3;
use flopscope_model::markdown::rate;
use flopscope_model::merge::{Merged, Spread};
use flopscope_model::render::{duration, share, thousands};
use flopscope_model::{Ceilings, ExitStatus, MemAccesses, Precision, Report, Summary, WidthRow};
use std::collections::BTreeMap;
use std::fmt::Write;

/// What the HTML report shows.
pub struct HtmlReport<'a> {
    pub title: String,
    /// The report (a merge's summed report when there are several inputs).
    pub report: &'a Report,
    /// The merge, for its per-source rows and load imbalance.
    pub merged: Option<&'a Merged>,
    pub chart: &'a Chart,
    /// The chart as SVG ([`crate::svg`]). The page draws `chart` without
    /// its table instead (the page's own table shows those rows, once),
    /// and uses this only if that drawing fails.
    pub chart_svg: &'a str,
    pub ceilings: &'a Ceilings,
}

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: 'DejaVu Sans', Verdana, Arial, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; display: block; max-width: 100%; overflow-x: auto; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
td.name, th.name { text-align: left; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.2em; font-size: 0.92em; }
dl.meta dt { color: #666; }
dl.meta dd { margin: 0; }
code { background: #f4f4f4; padding: 0.1em 0.3em; }
.bar { display: inline-block; height: 0.9em; vertical-align: middle; }
td.bar-cell { text-align: left; width: 320px; }
.partial { color: #b2182b; font-weight: bold; }
.warnings li { color: #8c510a; }
figure { margin: 1em 0; overflow-x: auto; }
svg.mark { vertical-align: middle; margin-right: 0.3em; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; }
h3 { font-size: 1em; margin-top: 1.5em; word-break: break-all; }
.note { color: #8c510a; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=descending]::after { content: ' \\25BC'; }
table.sortable th[aria-sort=ascending]::after { content: ' \\25B2'; }
.inl { color: #777; font-size: 0.85em; }
div.src { overflow-x: auto; max-height: 40em; overflow-y: auto; border: 1px solid #e4e4e4; }
table.src { margin: 0; font-size: 0.85em; }
table.src td, table.src th { border: none; padding: 0 0.6em; color: #555; }
table.src td.code { text-align: left; white-space: pre; tab-size: 4; font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; color: #222; }
table.src tr.f td { background: #fde0c5; color: #222; }
table.src tr.b td { background: #e4eef8; color: #222; }
table.src tr:target td { background: #f4a582; }
td.ln { color: #999; }
";

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn status(s: &ExitStatus) -> String {
    match s {
        ExitStatus::Code(c) => format!("exit {c}"),
        ExitStatus::Signal(n) => format!("killed by {n}"),
        ExitStatus::Unknown => "unknown".into(),
    }
}

fn meta(out: &mut String, h: &HtmlReport) {
    let r = h.report;
    let mut row = |k: &str, v: String| {
        let _ = writeln!(out, "<dt>{}</dt><dd>{v}</dd>", escape(k));
    };
    row(
        "command",
        format!("<code>{}</code>", escape(&r.command.join(" "))),
    );
    row("engine", escape(&r.engine));
    row("flopscope", escape(&r.tool_version));
    row("ended", escape(&status(&r.exit_status)));
    row(
        "counts",
        if r.complete {
            "complete".into()
        } else {
            "<span class=\"partial\">PARTIAL: the program did not run to its end</span>".into()
        },
    );
    row(
        "time",
        opt(r.native_time_s, |t| match &r.timing {
            Some(timing) => escape(&format!("{} ({})", duration(t), timing.describe())),
            None => escape(&duration(t)),
        }),
    );
    row("FLOP/s", opt(r.gflops, |g| format!("{} GFLOP/s", rate(g))));
    if let (Some(pct), Some(p)) = (r.percent_of_peak(), &r.peak) {
        row(
            "of peak",
            escape(&format!(
                "{pct:.2}% of the {} peak ({} GFLOP/s fp64, {} fp32)",
                p.source,
                sig3(p.gflops_fp64),
                sig3(p.gflops_fp32)
            )),
        );
    }
    if !h.ceilings.machine.is_empty() {
        row("machine", escape(&h.ceilings.machine));
    }
    row("roofs from", escape(&h.ceilings.source));
    if let Some(m) = h.merged {
        row(
            "merged from",
            escape(&format!("{} reports", m.labels.len())),
        );
    }
}

/// A table row's marker: the same shape and colour as the point's in the chart.
fn mark(color: Rgb, m: Marker) -> String {
    let c = color.hex();
    let shape = match m {
        Marker::Circle => format!("<circle r=\"4.5\" fill=\"{c}\"/>"),
        Marker::Triangle => format!("<polygon points=\"0,-5.5 -5.5,4.5 5.5,4.5\" fill=\"{c}\"/>"),
        Marker::Hollow => {
            format!("<circle r=\"4\" fill=\"#fff\" stroke=\"{c}\" stroke-width=\"2\"/>")
        }
        Marker::Dot => format!(
            "<circle r=\"5\" fill=\"{c}\" fill-opacity=\"0.55\" stroke=\"{c}\" stroke-width=\"1\"/>"
        ),
    };
    format!("<svg class=\"mark\" width=\"12\" height=\"12\" viewBox=\"-6 -6 12 12\" aria-hidden=\"true\">{shape}</svg>")
}

fn points_table(out: &mut String, points: &[ChartPoint]) {
    out.push_str("<table class=\"points\">\n<tr><th class=\"name\">point</th><th class=\"name\">memory</th><th>AI (FLOP/byte)</th><th>GFLOP/s</th><th>attainable GFLOP/s</th><th>% of attainable</th><th class=\"name\">bound by</th></tr>\n");
    for p in points {
        if let Some(why) = &p.not_plotted {
            let _ = writeln!(out, "<tr><td class=\"name\">{}</td><td class=\"name\" colspan=\"6\">not plotted: {}</td></tr>", escape(&p.data.label), escape(why));
            continue;
        }
        for (level, ai, att, marker) in [
            ("L1", p.data.ai_l1, &p.attainable_l1, p.marker),
            ("DRAM", p.data.ai_dram, &p.attainable_dram, Marker::Hollow),
        ] {
            let Some(ai) = ai else { continue };
            let name = if level == "L1" {
                format!("{}{}", mark(p.color, marker), escape(&p.data.label))
            } else {
                mark(p.color, marker)
            };
            let _ = writeln!(
                out,
                "<tr><td class=\"name\">{name}</td><td class=\"name\">{level}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td></tr>",
                sig3(ai),
                opt(p.data.gflops, sig3),
                opt(att.as_ref().map(|a| a.gflops), sig3),
                opt(att.as_ref().and_then(|a| a.percent), |x| format!("{x:.1}%")),
                escape(&att.as_ref().map(|a| a.bound.clone()).unwrap_or_else(|| "no roof".into())),
            );
        }
    }
    out.push_str("</table>\n");
}

fn region_row(
    out: &mut String,
    name: &str,
    entries: &str,
    s: &Summary,
    t: Option<f64>,
    g: Option<f64>,
    total: u64,
) {
    let b = s.bytes;
    let share = share(s.flop.total, total);
    let _ = writeln!(
        out,
        "<tr><td class=\"name\">{}</td><td>{entries}</td><td>{}</td><td>{share}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        escape(name),
        thousands(s.flop.total),
        opt(s.flop.fp64, thousands),
        opt(s.flop.fp32, thousands),
        opt(b.map(|b| b.read), thousands),
        opt(b.map(|b| b.written), thousands),
        opt(s.intensity_l1(), sig3),
        opt(t, |t| escape(&duration(t))),
        opt(g, rate),
    );
}

fn regions(out: &mut String, r: &Report) {
    out.push_str("<h2>Regions</h2>\n<table>\n<tr><th class=\"name\">region</th><th>entries</th><th>FLOP</th><th>share</th><th>fp64</th><th>fp32</th><th>bytes read</th><th>bytes written</th><th>AI(L1)</th><th>time</th><th>GFLOP/s</th></tr>\n");
    let total = r.summary.flop.total;
    region_row(
        out,
        "whole program",
        "-",
        &r.summary,
        r.native_time_s,
        r.gflops,
        total,
    );
    for reg in &r.regions {
        region_row(
            out,
            &reg.name,
            &thousands(reg.entries),
            &reg.summary,
            reg.native_time_s,
            reg.gflops,
            total,
        );
    }
    if let Some(u) = &r.unmarked {
        region_row(out, "(unmarked)", "-", u, None, None, total);
    }
    out.push_str("</table>\n");
}

fn bar_color(p: Precision) -> &'static str {
    match p {
        Precision::Fp64 => "#b2182b",
        Precision::Fp32 => "#2166ac",
        Precision::Fp16 => "#762a83",
        Precision::Bf16 => "#c51b7d",
        Precision::X87 => "#8c510a",
    }
}

fn mix(out: &mut String, s: &Summary) {
    out.push_str("<h2>Instruction mix: FLOP by precision and width</h2>\n");
    let rows = s.width_mix();
    if rows.is_empty() {
        out.push_str("<p>The report has no instruction rows (its engine does not split FLOP by instruction).</p>\n");
        return;
    }
    let max = rows.iter().map(|r| r.flop).max().unwrap_or(0).max(1);
    out.push_str("<table>\n<tr><th class=\"name\">precision</th><th class=\"name\">width</th><th>instructions</th><th>FLOP</th><th>share</th><th class=\"name\">FLOP</th></tr>\n");
    for WidthRow {
        precision: p,
        label,
        count,
        flop,
    } in rows
    {
        let share = share(flop, s.flop.total);
        let width =
            (300.0 * flop as f64 / max as f64)
                .round()
                .max(if flop > 0 { 1.0 } else { 0.0 });
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{label}</td><td>{}</td><td>{}</td><td>{share}</td><td class=\"bar-cell\"><span class=\"bar\" style=\"width:{width}px;background:{}\"></span></td></tr>",
            p.key(),
            thousands(count),
            thousands(flop),
            bar_color(p),
        );
    }
    out.push_str("</table>\n");
    let ops: Vec<String> = s
        .flop_by_op
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{} {}", escape(k), thousands(*n)))
        .collect();
    if !ops.is_empty() {
        let _ = writeln!(
            out,
            "<p>FLOP by operation (FMA = 2): {}</p>",
            ops.join(", ")
        );
    }
    if let Some(m) = &s.mem_accesses {
        let hist = |h: &BTreeMap<String, u64>| {
            MemAccesses::by_size(h)
                .iter()
                .map(|(size, n)| format!("{size} B &times; {}", thousands(*n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "<p>Memory accesses by size: reads {}; writes {}</p>",
            hist(&m.read),
            hist(&m.write)
        );
    }
}

fn spread_row(out: &mut String, what: &str, s: &Spread) {
    let _ = writeln!(
        out,
        "<tr><td class=\"name\">{what}</td><td>{} ({})</td><td>{}</td><td>{} ({})</td><td>{}</td></tr>",
        thousands(s.max),
        escape(&s.max_source),
        thousands(s.mean.round() as u64),
        thousands(s.min),
        escape(&s.min_source),
        opt(s.ratio(), |r| format!("{r:.3}")),
    );
}

fn sources(out: &mut String, m: &Merged) {
    out.push_str("<h2>Sources</h2>\n<table>\n<tr><th class=\"name\">source</th><th>FLOP</th><th>share</th><th class=\"name\">FLOP</th><th>bytes read</th><th>bytes written</th><th>time</th><th>GFLOP/s</th><th class=\"name\">ended</th></tr>\n");
    let total = m.report.summary.flop.total;
    let max = m.imbalance.flop.max.max(1);
    for (label, p) in m.labels.iter().zip(&m.report.processes) {
        let f = p.summary.flop.total;
        let b = p.summary.bytes;
        let share = share(f, total);
        let width = (200.0 * f as f64 / max as f64).round();
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{share}</td><td class=\"bar-cell\"><span class=\"bar\" style=\"width:{width}px;background:#404040\"></span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"name\">{}{}</td></tr>",
            escape(label),
            thousands(f),
            opt(b.map(|b| b.read), thousands),
            opt(b.map(|b| b.written), thousands),
            opt(p.native_time_s, |t| escape(&duration(t))),
            opt(p.gflops, rate),
            escape(&status(&p.exit_status)),
            if p.complete { "" } else { ", <span class=\"partial\">PARTIAL</span>" },
        );
    }
    out.push_str("</table>\n<table>\n<tr><th class=\"name\">load imbalance</th><th>max</th><th>mean</th><th>min</th><th>max / mean</th></tr>\n");
    spread_row(out, "FLOP", &m.imbalance.flop);
    if let Some(b) = &m.imbalance.bytes {
        spread_row(out, "bytes", b);
    }
    out.push_str("</table>\n");
}

/// The chart's SVG without an XML prolog, to sit inside the page.
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The whole HTML document, with the source files read from disk now.
pub fn report(h: &HtmlReport) -> String {
    report_with(h, &source::Sources::read(h.report))
}

/// The whole HTML document, with the given source files.
pub fn report_with(h: &HtmlReport, files: &source::Sources) -> String {
    let r = h.report;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<dl class=\"meta\">\n",
        escape(&h.title),
        escape(&h.title)
    );
    meta(&mut out, h);
    out.push_str("</dl>\n<h2>Roofline</h2>\n<figure>\n");
    // The chart's notes are in its picture, its rows in the table below.
    let plot = crate::svg(&h.chart.without_table());
    out.push_str(inline_svg(plot.as_deref().unwrap_or(h.chart_svg)));
    out.push_str("</figure>\n");
    points_table(&mut out, &h.chart.points);
    regions(&mut out, r);
    tables::functions(&mut out, r, files);
    tables::loops(&mut out, r, files);
    source::section(&mut out, files);
    mix(&mut out, &r.summary);
    if let Some(m) = h.merged {
        sources(&mut out, m);
    }
    if r.threads.len() > 1 {
        out.push_str("<h2>Threads</h2>\n<table>\n<tr><th>thread</th><th>FLOP</th></tr>\n");
        for t in &r.threads {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td></tr>",
                t.tid,
                thousands(t.summary.flop.total)
            );
        }
        out.push_str("</table>\n");
    }
    if !r.warnings.is_empty() {
        out.push_str("<h2>Warnings</h2>\n<ul class=\"warnings\">\n");
        for w in &r.warnings {
            let _ = writeln!(out, "<li>{}</li>", escape(w));
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(
        out,
        "<footer>Written by flopscope {} from a <code>{}</code> report. FLOP count FMA as 2; bytes are the cores' (L1) traffic. This page loads nothing from a network.</footer>",
        escape(&r.tool_version),
        escape(&r.schema)
    );
    if out.contains("class=\"sortable\"") {
        let _ = writeln!(out, "<script>\n{}</script>", tables::SORT_JS);
    }
    out.push_str("</body>\n</html>\n");
    out
}
