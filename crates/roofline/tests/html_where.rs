//! The HTML report's functions and loops tables and its source view
//! (golden), on a report whose lines point into tests/data/solver.c;
//! and the page's promise to load nothing, with its script and links.

mod common;
mod hot;

use flopscope_model::{LineRow, Report};
use flopscope_roofline::html::source::Sources;
use flopscope_roofline::html::{self, HtmlReport};
use flopscope_roofline::{chart, svg, ChartOptions, Input};

fn page(r: &Report, sources: Option<&Sources>) -> String {
    let ceilings = common::ceilings();
    let c = chart(
        &[Input {
            label: "solver.json",
            report: r,
        }],
        &ceilings,
        &ChartOptions {
            title: "Roofline: ./solver 512".into(),
            ..Default::default()
        },
    );
    let s = svg(&c).unwrap();
    let h = HtmlReport {
        title: "flopscope: ./solver 512".into(),
        report: r,
        merged: None,
        chart: &c,
        chart_svg: &s,
        ceilings: &ceilings,
    };
    match sources {
        Some(files) => html::report_with(&h, files),
        None => html::report(&h),
    }
}

/// The timed report with one more line, in a file that is not there.
fn with_a_missing_file() -> Report {
    let mut r = hot::report(true);
    let mut l: LineRow = r.lines[6].clone();
    l.file = Some("/nonexistent/kernel.c".into());
    l.line = Some(7);
    l.summary.flop.total = 0;
    r.lines.push(l);
    r
}

#[test]
fn html_with_functions_loops_and_source() {
    let r = with_a_missing_file();
    // Read as the page would, with the reason of the missing file fixed.
    let files = Sources::gather(&r, |path| {
        std::fs::read_to_string(path).map_err(|_| "no such file".to_string())
    });
    insta::assert_snapshot!(page(&r, Some(&files)));
}

#[test]
fn the_source_view_reads_the_files_named_by_lines() {
    let r = with_a_missing_file();
    let p = page(&r, None);
    // Annotated, escaped, highlighted, linked from the hottest lines.
    assert!(p.contains("<tr id=\"L0-14\" class=\"f\"><td class=\"ln\">14</td><td>268,435,456</td>"));
    assert!(p.contains("/* &quot;x &lt; y&quot; &amp;&amp; &#39;z&#39; &amp; escaped */"));
    assert!(p.contains("<a href=\"#L0-14\""));
    assert!(p.contains("<tr id=\"L0-9\"><td class=\"ln\">9</td><td></td>"));
    // The missing file is listed as not available.
    let missing = p.split("<h3>Not available</h3>").nth(1).unwrap();
    assert!(
        missing.contains("<code>/nonexistent/kernel.c</code>"),
        "{missing}"
    );
    // Both tables, sortable, with every row holding FLOP.
    assert!(p.contains("<h2 id=\"functions\">Functions</h2>"));
    assert!(p.contains("<h2 id=\"loops\">Loops</h2>"));
    assert_eq!(p.matches("<table class=\"sortable\">").count(), 3);
    assert!(p.contains("<td class=\"name\">relax</td>"));
}

#[test]
fn the_page_without_time_says_how_to_get_it() {
    let p = page(&hot::report(false), None);
    assert!(p.contains("This report has no time per function or loop"));
    assert!(p.contains("cannot be placed on the performance axis"));
}

#[test]
fn the_page_stays_self_contained() {
    let p = page(&with_a_missing_file(), None);
    for needle in [
        "<link",
        "<img",
        "<iframe",
        "@import",
        "url(",
        "src=",
        "<script src",
    ] {
        assert!(!p.contains(needle), "the page has {needle}");
    }
    assert_eq!(p.matches("<script>").count(), 1);
    // Links only within the page.
    for (i, _) in p.match_indices("href=") {
        assert!(p[i..].starts_with("href=\"#"), "{}", &p[i..i + 40]);
    }
}
