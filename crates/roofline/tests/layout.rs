//! Every text of the produced SVG, read back from its `<text>` elements and
//! measured with the font metrics the layout uses, keeps clear of every
//! other: regions of fp64 and fp32 under four memory levels, loops, a
//! crowd of loops, the whole program alone; and the same chart without its
//! table (as the HTML page shows it).

mod common;
mod hot;

use flopscope_model::Report;
use flopscope_roofline::chart::text_box;
use flopscope_roofline::font::EmbeddedFont;
use flopscope_roofline::render::svg_texts;
use flopscope_roofline::{chart, svg, Chart, ChartOptions, Input, PointSet};

fn chart_of(r: &Report, points: PointSet) -> Chart {
    chart(
        &[Input {
            label: "solver.json",
            report: r,
        }],
        &common::ceilings(),
        &ChartOptions {
            points,
            ..Default::default()
        },
    )
}

/// The pairs of texts of `svg` whose boxes overlap.
fn overlapping(svg: &str) -> Vec<(String, String)> {
    let font = EmbeddedFont::new();
    let texts = svg_texts(svg);
    let boxes: Vec<_> = texts.iter().map(|t| text_box(&font, t)).collect();
    let mut out = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlap(&boxes[j]) > 0.0 {
                out.push((texts[i].text.clone(), texts[j].text.clone()));
            }
        }
    }
    out
}

fn check(name: &str, c: &Chart) {
    for c in [c.clone(), c.without_table()] {
        let s = svg(&c).unwrap();
        let texts = svg_texts(&s);
        // Every text the chart lays out is in the SVG, where it was laid
        // out (to the SVG's tenth of a pixel).
        let laid = c.all_texts();
        assert_eq!(texts.len(), laid.len(), "{name}");
        for (t, l) in texts.iter().zip(&laid) {
            assert!(
                t.text == l.text
                    && t.anchor == l.anchor
                    && t.vertical == l.vertical
                    && t.size == l.size
                    && (t.x - l.x).abs() < 0.1
                    && (t.y - l.y).abs() < 0.1,
                "{name}: {t:?} drawn, {l:?} laid out"
            );
        }
        assert!(texts.len() > 20, "{name}: {} texts", texts.len());
        let bad = overlapping(&s);
        assert!(bad.is_empty(), "{name}: {bad:#?}");
        // Each text inside the picture.
        let font = EmbeddedFont::new();
        for t in &texts {
            let b = text_box(&font, t);
            assert!(
                b.x >= 0.0
                    && b.y >= 0.0
                    && b.right() <= f64::from(c.width)
                    && b.bottom() <= f64::from(c.height),
                "{name}: {:?} leaves the picture",
                t.text
            );
        }
    }
}

#[test]
fn regions_of_two_precisions_under_four_levels() {
    check("regions", &chart_of(&common::report(), PointSet::Regions));
}

#[test]
fn loops_and_functions() {
    check("loops", &chart_of(&hot::report(true), PointSet::Loops));
    check(
        "functions",
        &chart_of(&hot::report(true), PointSet::Functions),
    );
}

#[test]
fn the_whole_program_alone() {
    check("total", &chart_of(&common::report(), PointSet::Total));
    // Without time: the note above the plot.
    check("untimed", &chart_of(&hot::report(false), PointSet::Auto));
}

#[test]
fn only_the_roofs_of_the_points_precisions() {
    // The whole program of the fixture is fp64 and fp32; its dgemm region fp64 only.
    let mut r = common::report();
    r.regions.retain(|g| g.name == "dgemm");
    r.summary = r.regions[0].summary.clone();
    let c = chart_of(&r, PointSet::Regions);
    let compute: Vec<&str> = c
        .roofs
        .iter()
        .filter(|r| r.roof.kind == flopscope_roofline::roofs::RoofKind::Compute)
        .map(|r| r.roof.label.as_str())
        .collect();
    assert_eq!(
        compute,
        [
            "fp64 AVX2 FMA: 301 GFLOP/s (measured)",
            "fp64 AVX2 FMA: 384 GFLOP/s (theoretical)"
        ]
    );
    let s = svg(&c).unwrap();
    assert!(s.contains("Lower theoretical roofs, not drawn: fp64 scalar 48.0 GFLOP/s."));
    assert!(!s.contains("fp32"));
    assert!(s.contains(">DRAM 25.0 GB/s (measured)<"));
}

#[test]
fn without_bandwidth_roofs_the_chart_says_so() {
    let mut ceilings = common::ceilings();
    ceilings.bandwidth.clear();
    let r = common::report();
    let c = chart(
        &[Input {
            label: "solver.json",
            report: &r,
        }],
        &ceilings,
        &ChartOptions::default(),
    );
    assert!(c
        .notes
        .iter()
        .any(|n| n.starts_with("No bandwidth roof") && n.contains("flopscope bench --save")));
    assert!(c
        .roofs
        .iter()
        .all(|r| r.roof.kind == flopscope_roofline::roofs::RoofKind::Compute));
    check("no bandwidth", &c);
}
