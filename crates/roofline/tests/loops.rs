//! The roofline of loops and functions: one dot per row above the share
//! threshold, sized by time, coloured by function (loops) or module
//! (functions); the fallback with a note when there is no time; labels
//! that never cover each other or a dot, even in a crowd; SVG (golden)
//! and PNG.

mod common;
mod hot;

use flopscope_model::{LoopRow, Report};
use flopscope_roofline::chart::{Chart, Marker};
use flopscope_roofline::palette::{self, Rgb};
use flopscope_roofline::scale::{Quad, Rect};
use flopscope_roofline::{chart, png, svg, ChartOptions, Input, PointSet};

fn chart_of(r: &Report, points: PointSet, min_share: f64) -> Chart {
    chart(
        &[Input {
            label: "solver.json",
            report: r,
        }],
        &common::ceilings(),
        &ChartOptions {
            title: "Roofline: ./solver 512".into(),
            points,
            min_share,
            ..Default::default()
        },
    )
}

fn labels(c: &Chart) -> Vec<&str> {
    c.points.iter().map(|p| p.data.label.as_str()).collect()
}

#[test]
fn svg_chart_of_loops() {
    let c = chart_of(&hot::report(true), PointSet::Auto, 0.01);
    insta::assert_snapshot!(svg(&c).unwrap());
}

#[test]
fn loops_above_one_percent_of_their_own_flop_are_dots() {
    let c = chart_of(&hot::report(true), PointSet::Auto, 0.01);
    // The two outer dgemm loops hold no FLOP of their own; relax holds 0.6%.
    assert_eq!(
        labels(&c),
        [
            "dgemm_block solver.c:13",
            // 20,000,000 FLOP each: by name.
            "norm solver.c:28",
            "stream_triad solver.c:21",
            "smooth solver.c:35"
        ]
    );
    assert!(c.notes.is_empty(), "{:?}", c.notes);
    assert!(c
        .points
        .iter()
        .all(|p| p.marker == Marker::Dot && p.l1.is_some()));
    // Area by time: dgemm's loop ran 0.059 s, smooth's 0.004 s.
    let (big, small) = (c.points[0].radius, c.points[3].radius);
    let ratio = (big / small).powi(2);
    assert!((ratio - 0.059 / 0.004).abs() < 0.01, "{ratio}");
    // One colour per function.
    let mut colors: Vec<Rgb> = c.points.iter().map(|p| p.color).collect();
    colors.dedup();
    assert_eq!(colors.len(), 4);
    let lower = chart_of(&hot::report(true), PointSet::Loops, 0.005);
    assert!(labels(&lower).contains(&"relax solver.c:41"));
}

#[test]
fn functions_are_coloured_by_module() {
    let c = chart_of(&hot::report(true), PointSet::Functions, 0.01);
    assert_eq!(
        labels(&c),
        [
            "dgemm_block",
            "stream_triad",
            "norm",
            "sq",
            "smooth",
            "__exp_fma"
        ]
    );
    let color = |name: &str| {
        c.points
            .iter()
            .find(|p| p.data.label == name)
            .unwrap()
            .color
    };
    assert_eq!(color("dgemm_block"), color("sq"));
    assert_ne!(color("dgemm_block"), color("__exp_fma"));
}

#[test]
fn without_time_the_chart_shows_the_whole_program_and_says_why() {
    let c = chart_of(&hot::report(false), PointSet::Auto, 0.01);
    assert_eq!(labels(&c), ["whole program"]);
    assert_eq!(c.notes.len(), 1);
    assert!(
        c.notes[0].contains("4 loops") && c.notes[0].contains("add --runs N"),
        "{}",
        c.notes[0]
    );
    let text = svg(&c).unwrap();
    assert!(text.contains("cannot be placed on the performance axis"));
    assert!(text.contains("add --runs N"));
    // The regions' chart is as before.
    let r = chart_of(&hot::report(false), PointSet::Regions, 0.01);
    assert!(r.notes.is_empty());
}

/// Whether a rectangle and a disc share any point.
fn touches_disc(r: &Rect, c: (f64, f64), radius: f64) -> bool {
    let (nx, ny) = r.nearest(c);
    (nx - c.0).hypot(ny - c.1) < radius
}

/// Thirty loops of nearly the same intensity and speed, of five functions.
fn crowd() -> Report {
    let mut r = hot::report(true);
    let template = r.loops[3].clone();
    r.loops = (0..30u32)
        .map(|i| {
            let mut l: LoopRow = template.clone();
            l.function = format!("kernel_{}", i % 5);
            l.line = Some(100 + i);
            let f = 10_000_000 + u64::from(i) * 150_000;
            l.summary.flop.total = f;
            l.self_counts.flop.total = f;
            // AI from 0.04 to 0.16 FLOP/byte, 1 to 4 GFLOP/s: within a
            // factor of four on each axis, many dots on top of each other.
            let b = l.summary.bytes.as_mut().unwrap();
            b.read = f * 16 / (2 + u64::from(i % 4));
            b.written = f * 8 / (2 + u64::from(i % 4));
            l.time_s = Some(0.004 + f64::from(i) * 0.0003);
            l.gflops = Some(1.0 + f64::from(i % 7) * 0.5);
            l
        })
        .collect();
    r
}

#[test]
fn crowded_labels_never_cover_each_other_or_a_dot() {
    let c = chart_of(&crowd(), PointSet::Loops, 0.01);
    assert_eq!(c.points.len(), 30);
    let dots: Vec<((f64, f64), f64)> = c
        .points
        .iter()
        .filter_map(|p| Some((p.l1?, p.radius)))
        .collect();
    assert_eq!(dots.len(), 30);
    // Roof labels as they lie (a bandwidth roof's turned along its roof).
    let roof_labels: Vec<Quad> = c.roofs.iter().map(|r| r.label.shape()).collect();
    let shown: Vec<Rect> = c
        .points
        .iter()
        .filter_map(|p| p.label.map(|l| l.rect))
        .collect();
    // (At 13 px text, a third of the crowd finds a free place.)
    assert!(shown.len() >= 9, "only {} labels", shown.len());
    for (i, a) in shown.iter().enumerate() {
        assert!(c.plane.frame.contains(a), "{a:?} outside the frame");
        for (center, radius) in &dots {
            assert!(
                !touches_disc(a, *center, *radius),
                "{a:?} covers the dot at {center:?}"
            );
        }
        for b in &shown[i + 1..] {
            assert_eq!(a.overlap(b), 0.0, "{a:?} overlaps {b:?}");
        }
        for b in &roof_labels {
            assert_eq!(Quad::from(*a).overlap(b), 0.0, "{a:?} overlaps {b:?}");
        }
    }
    // Every dot is still named in the table.
    assert_eq!(c.table.rows.len(), 30);
}

fn close(a: Rgb, b: Rgb, tolerance: i32) -> bool {
    (i32::from(a.0) - i32::from(b.0)).abs() <= tolerance
        && (i32::from(a.1) - i32::from(b.1)).abs() <= tolerance
        && (i32::from(a.2) - i32::from(b.2)).abs() <= tolerance
}

#[test]
fn png_has_each_dot_in_its_colour_where_the_layout_put_it() {
    let c = chart_of(&hot::report(true), PointSet::Auto, 0.01);
    let bytes = png(&c).unwrap();
    let mut d = png::Decoder::new(&bytes[..]).read_info().unwrap();
    let mut buf = vec![0; d.output_buffer_size()];
    let info = d.next_frame(&mut buf).unwrap();
    let width = info.width as usize;
    assert_eq!((info.width, info.height), (c.width, c.height));
    let at = |x: f64, y: f64| {
        let i = (y.round() as usize * width + x.round() as usize) * 3;
        Rgb(buf[i], buf[i + 1], buf[i + 2])
    };
    for p in &c.points {
        let (x, y) = p.l1.unwrap();
        // Translucent fill over white, unless a smaller dot lies on top.
        let covered = c.points.iter().any(|o| {
            o.radius < p.radius
                && o.l1
                    .is_some_and(|(ox, oy)| (ox - x).hypot(oy - y) < o.radius + 1.0)
        });
        if !covered {
            // Most of the disc's inside (a roof may pass under it).
            let fill = palette::lighten(p.color, 0.45);
            let r = (p.radius * 0.6) as i32;
            let inside: Vec<Rgb> = (-r..=r)
                .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
                .filter(|(dx, dy)| dx * dx + dy * dy <= r * r)
                .map(|(dx, dy)| at(x + f64::from(dx), y + f64::from(dy)))
                .collect();
            let filled = inside.iter().filter(|c| close(**c, fill, 14)).count();
            assert!(
                2 * filled > inside.len(),
                "{}: {filled} of {} pixels in {fill:?}",
                p.data.label,
                inside.len()
            );
        }
        // Its outline, in the full colour, on the dot's right edge.
        let edge = (-1..=1).any(|dx| close(at(x + p.radius + f64::from(dx), y), p.color, 40));
        assert!(edge, "{}: no outline", p.data.label);
    }
}

/// A run sampled too briefly to time its loops says so, rather than
/// asking for the native engine it was counted under.
#[test]
fn a_run_too_short_for_its_samples_says_so() {
    let mut r = hot::report(false);
    r.sampling = Some(flopscope_model::Sampling {
        source: "the counted run".into(),
        interval_s: 0.001,
        samples: 3,
        signals: 3.0,
        unplaced: 0,
    });
    let c = chart_of(&r, PointSet::Auto, 0.01);
    assert_eq!(labels(&c), ["whole program"]);
    assert!(
        c.notes[0].contains("4 loops hold")
            && c.notes[0].contains("the counted run took 3 samples of 1 ms, too few to time them")
            && !c.notes[0].contains("count under the native engine"),
        "{}",
        c.notes[0]
    );
}
