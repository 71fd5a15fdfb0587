//! Every text of the produced SVG, read back from its `<text>` elements and
//! measured with the font metrics the layout uses, keeps clear of every
//! other, of every roof and of every marker: a bandwidth roof's label is
//! turned along its roof, and its box is checked as the turned rectangle
//! it is. Regions of fp64 and fp32 under four memory levels, loops, a
//! crowd of loops, the whole program alone; the same chart without its
//! table (as the HTML page shows it); levels close together, in narrow and
//! wide charts.

mod common;
mod hot;

use flopscope_model::{BandwidthCeiling, Ceilings, Report};
use flopscope_roofline::chart::text_box;
use flopscope_roofline::font::EmbeddedFont;
use flopscope_roofline::render::svg_texts;
use flopscope_roofline::roofs::RoofKind;
use flopscope_roofline::{chart, svg, Chart, ChartOptions, Input, PointSet};

fn chart_with(r: &Report, ceilings: &Ceilings, opts: ChartOptions) -> Chart {
    chart(
        &[Input {
            label: "solver.json",
            report: r,
        }],
        ceilings,
        &opts,
    )
}

fn chart_of(r: &Report, points: PointSet) -> Chart {
    chart_with(
        r,
        &common::ceilings(),
        ChartOptions {
            points,
            ..Default::default()
        },
    )
}

fn check(name: &str, c: &Chart) {
    let font = EmbeddedFont::new();
    // Labels placed where they should be: none crosses a roof, covers a
    // marker or went without a free place.
    let problems = c.problems(&font);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
    for c in [c.clone(), c.without_table()] {
        let s = svg(&c).unwrap();
        let texts = svg_texts(&s);
        // Every text the chart lays out is in the SVG, where it was laid
        // out (to the SVG's tenth of a pixel) and turned as it was.
        let laid = c.all_texts();
        assert_eq!(texts.len(), laid.len(), "{name}");
        for (t, l) in texts.iter().zip(&laid) {
            assert!(
                t.text == l.text
                    && t.anchor == l.anchor
                    && (t.angle - l.angle).abs() < 0.01
                    && t.size == l.size
                    && (t.x - l.x).abs() < 0.1
                    && (t.y - l.y).abs() < 0.1,
                "{name}: {t:?} drawn, {l:?} laid out"
            );
        }
        assert!(texts.len() > 20, "{name}: {} texts", texts.len());
        // The texts as drawn: no two boxes (turned ones as turned
        // rectangles) share a pixel, none crosses a roof or covers a marker.
        let bad = c.clashes(&texts, &font);
        assert!(bad.is_empty(), "{name}: {bad:#?}");
        // Each text inside the picture.
        for t in &texts {
            let b = text_box(&font, t).bounds();
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

/// The distance of `p` from the line through `a` and `b`: positive on its
/// upper-left side (above a roof rising to the right).
fn above(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = dx.hypot(dy);
    ((p.0 - a.0) * dy - (p.1 - a.1) * dx) / len
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

#[test]
fn bandwidth_labels_run_along_their_roofs_just_above_them() {
    // The four levels of the fixture, half a decade apart or more: each
    // label fits in the band above its own roof.
    for (name, c) in [
        ("regions", chart_of(&common::report(), PointSet::Regions)),
        ("loops", chart_of(&hot::report(true), PointSet::Loops)),
    ] {
        let font = EmbeddedFont::new();
        let texts = svg_texts(&svg(&c).unwrap());
        let bandwidth: Vec<_> = c
            .roofs
            .iter()
            .filter(|r| r.roof.kind == RoofKind::Bandwidth)
            .collect();
        assert_eq!(bandwidth.len(), 4, "{name}");
        for r in bandwidth {
            let t = texts
                .iter()
                .find(|t| t.text == r.roof.label)
                .unwrap_or_else(|| panic!("{name}: no label {:?}", r.roof.label));
            // Turned by the roof's slope on the picture (y grows downwards).
            let slope = (r.from.1 - r.to.1).atan2(r.to.0 - r.from.0).to_degrees();
            assert!(slope > 20.0 && slope < 70.0, "{name}: {slope}");
            assert!(
                (t.angle - slope).abs() < 0.01,
                "{name}: {:?} turned {} degrees, its roof {slope}",
                t.text,
                t.angle
            );
            // Its box's lower edge (the corners under the first and the
            // last letter) runs parallel to the roof a few pixels above it.
            let b = text_box(&font, t);
            for corner in [b.0[3], b.0[2]] {
                let d = above(corner, r.from, r.to);
                assert!(
                    (2.0..=6.0).contains(&d),
                    "{name}: {:?} is {d:.1} pixels above its roof",
                    t.text
                );
            }
            assert!(r.label.leader.is_none(), "{name}: {:?}", t.text);
        }
    }
}

#[test]
fn levels_close_together_in_narrow_and_wide_charts() {
    // Bandwidths of real machines, a core's and a socket's, and levels
    // 1.7x and only 1.4x apart; charts from narrow (steep roofs, thin
    // bands between them) to wide. Where a band is thinner than a label, the label goes
    // just below its roof, or further out with a leader to it: never
    // across another roof.
    let levels: [&[(&str, f64)]; 4] = [
        &[("L1", 180.0), ("L2", 95.0), ("L3", 55.0), ("DRAM", 20.5)],
        &[
            ("L1", 3000.0),
            ("L2", 1500.0),
            ("L3", 400.0),
            ("DRAM", 100.0),
        ],
        &[
            ("L1", 1500.0),
            ("L2", 900.0),
            ("L3", 500.0),
            ("DRAM", 300.0),
        ],
        &[
            ("L1", 1500.0),
            ("L2", 1100.0),
            ("L3", 800.0),
            ("DRAM", 600.0),
        ],
    ];
    for set in levels {
        let mut ceilings = common::ceilings();
        ceilings.bandwidth = set
            .iter()
            .map(|(level, gbytes_per_s)| BandwidthCeiling {
                level: level.to_string(),
                gbytes_per_s: *gbytes_per_s,
                measured: true,
            })
            .collect();
        for width in [640, 960, 1400, 4000] {
            for (what, report, points) in [
                ("regions", common::report(), PointSet::Regions),
                ("loops", hot::report(true), PointSet::Loops),
                ("the whole program", common::report(), PointSet::Total),
            ] {
                let c = chart_with(
                    &report,
                    &ceilings,
                    ChartOptions {
                        width,
                        points,
                        ..Default::default()
                    },
                );
                let name = format!("{what} under {set:?} at {width} pixels");
                check(&name, &c);
                let bandwidth = c
                    .roofs
                    .iter()
                    .filter(|r| r.roof.kind == RoofKind::Bandwidth)
                    .count();
                assert_eq!(bandwidth, 4, "{name}");
            }
        }
    }
}
