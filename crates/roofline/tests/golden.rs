//! Golden files of the chart (SVG) and the HTML report, reviewed and kept
//! under tests/snapshots; and the HTML's promise to load nothing.

mod common;

use flopscope_model::merge::{merge, Source};
use flopscope_roofline::html::{self, HtmlReport};
use flopscope_roofline::{chart, svg, ChartOptions, Input};

#[test]
fn svg_chart() {
    let r = common::report();
    let c = chart(
        &[Input {
            label: "solver.json",
            report: &r,
        }],
        &common::ceilings(),
        &ChartOptions::default(),
    );
    insta::assert_snapshot!(svg(&c).unwrap());
}

fn merged_html() -> String {
    let mut b = common::report();
    b.command = vec!["./solver".into(), "--rank".into(), "1".into()];
    let m = merge(vec![
        Source {
            label: "rank0.json".into(),
            report: common::report(),
        },
        Source {
            label: "rank1.json".into(),
            report: b,
        },
    ])
    .unwrap();
    let ceilings = common::ceilings();
    let c = chart(
        &[Input {
            label: "merged",
            report: &m.report,
        }],
        &ceilings,
        &ChartOptions {
            title: "Roofline of 2 ranks".into(),
            ..Default::default()
        },
    );
    let s = svg(&c).unwrap();
    html::report(&HtmlReport {
        title: "flopscope: ./solver".into(),
        report: &m.report,
        merged: Some(&m),
        chart: &c,
        chart_svg: &s,
        ceilings: &ceilings,
    })
}

#[test]
fn html_report() {
    insta::assert_snapshot!(merged_html());
}

#[test]
fn html_is_self_contained() {
    let page = merged_html();
    for needle in [
        "<script", "<link", "<img", "<iframe", "@import", "url(", "src=", "href=",
    ] {
        // (The sorting script and in-page links come with functions and
        // loops: tests/html_where.rs checks that page.)
        assert!(!page.contains(needle), "the page has {needle}");
    }
    // The one URL is the SVG namespace, an identifier that is never fetched.
    let urls: Vec<&str> = page
        .match_indices("http")
        .map(|(i, _)| &page[i..(i + 26).min(page.len())])
        .collect();
    assert!(
        urls.iter()
            .all(|u| u.starts_with("http://www.w3.org/2000/svg")),
        "{urls:?}"
    );
    assert!(page.contains("<svg"));
    for section in [
        "Roofline",
        "Regions",
        "Instruction mix",
        "Sources",
        "load imbalance",
    ] {
        assert!(page.contains(section), "no {section}");
    }
}
