//! The chart rendered to PNG, decoded, and checked pixel by pixel against
//! the layout: each roof's colour along its path, each point's colour at
//! its marker, each point where the log scales put it, each turned label's
//! ink inside its turned box.

mod common;

use flopscope_roofline::chart::{text_box, Marker};
use flopscope_roofline::font::EmbeddedFont;
use flopscope_roofline::palette::Rgb;
use flopscope_roofline::{chart, png, ChartOptions, Input};

struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Picture {
    fn decode(bytes: &[u8]) -> Picture {
        let mut d = png::Decoder::new(bytes).read_info().expect("a PNG header");
        let mut buf = vec![0; d.output_buffer_size()];
        let info = d.next_frame(&mut buf).expect("PNG pixels");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        buf.truncate(info.buffer_size());
        Picture {
            width: info.width as usize,
            height: info.height as usize,
            rgb: buf,
        }
    }

    fn at(&self, x: i64, y: i64) -> Option<Rgb> {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return None;
        }
        let i = (y as usize * self.width + x as usize) * 3;
        Some(Rgb(self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]))
    }

    /// Whether `c` (give or take anti-aliasing) is within `r` pixels of (x, y).
    fn has_near(&self, x: f64, y: f64, r: i64, c: Rgb, tolerance: i32) -> bool {
        let (x, y) = (x.round() as i64, y.round() as i64);
        (-r..=r).any(|dy| {
            (-r..=r).any(|dx| {
                self.at(x + dx, y + dy)
                    .is_some_and(|p| close(p, c, tolerance))
            })
        })
    }
}

fn close(a: Rgb, b: Rgb, tolerance: i32) -> bool {
    (i32::from(a.0) - i32::from(b.0)).abs() <= tolerance
        && (i32::from(a.1) - i32::from(b.1)).abs() <= tolerance
        && (i32::from(a.2) - i32::from(b.2)).abs() <= tolerance
}

fn rendered() -> (flopscope_roofline::Chart, Picture) {
    let r = common::report();
    let c = chart(
        &[Input {
            label: "solver.json",
            report: &r,
        }],
        &common::ceilings(),
        &ChartOptions::default(),
    );
    let bytes = png(&c).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let p = Picture::decode(&bytes);
    assert_eq!((p.width, p.height), (c.width as usize, c.height as usize));
    (c, p)
}

#[test]
fn every_roof_is_drawn_in_its_colour_along_its_path() {
    let (c, pic) = rendered();
    // fp64: measured and theoretical AVX2; fp32: theoretical; not the
    // fp64 scalar roof; 4 bandwidth roofs.
    assert_eq!(c.roofs.len(), 7, "3 compute + 4 bandwidth roofs");
    for r in &c.roofs {
        let samples = 60;
        let hits = (0..=samples)
            .filter(|i| {
                let t = f64::from(*i) / f64::from(samples);
                let (x, y) = (
                    r.from.0 + t * (r.to.0 - r.from.0),
                    r.from.1 + t * (r.to.1 - r.from.1),
                );
                pic.has_near(x, y, 1, r.roof.color, 24)
            })
            .count();
        // Dashed (theoretical) roofs show about 9 pixels of every 14; labels and
        // markers may sit on a few samples of any roof.
        let needed = if r.roof.measured { 0.8 } else { 0.45 };
        assert!(
            hits as f64 >= needed * f64::from(samples),
            "{}: colour {} found at {hits} of {samples} samples",
            r.roof.label,
            r.roof.color.hex()
        );
        // And not far from the path: 25 pixels below a compute roof there is no such colour.
        if r.from.1 == r.to.1 {
            let mid = ((r.from.0 + r.to.0) / 2.0, r.from.1 + 25.0);
            assert!(
                !pic.has_near(mid.0, mid.1, 0, r.roof.color, 0),
                "{} also below its path",
                r.roof.label
            );
        }
    }
}

#[test]
fn every_point_is_drawn_where_the_log_scales_put_it() {
    let (c, pic) = rendered();
    let plane = c.plane;
    let lg = f64::log10;
    let mut plotted = 0;
    for p in &c.points {
        let Some((x, y)) = p.l1 else {
            assert_eq!(
                p.data.label, "setup",
                "only the region without native time is left out"
            );
            continue;
        };
        plotted += 1;
        // Independent of the chart's own mapping.
        let (ai, g) = (p.data.ai_l1.unwrap(), p.data.gflops.unwrap());
        let ex = plane.frame.x
            + plane.frame.w * (lg(ai) - lg(plane.x.lo)) / (lg(plane.x.hi) - lg(plane.x.lo));
        let ey = plane.frame.bottom()
            - plane.frame.h * (lg(g) - lg(plane.y.lo)) / (lg(plane.y.hi) - lg(plane.y.lo));
        assert!(
            (x - ex).abs() < 1e-6 && (y - ey).abs() < 1e-6,
            "{}: ({x}, {y}) vs ({ex}, {ey})",
            p.data.label
        );
        // The filled marker's colour at its centre (a triangle's centroid sits a pixel lower).
        let cy = if p.marker == Marker::Triangle {
            ey + 1.0
        } else {
            ey
        };
        assert!(
            pic.has_near(ex, cy, 1, p.color, 8),
            "{}: no {} at ({ex:.0}, {cy:.0})",
            p.data.label,
            p.color.hex()
        );
        if let Some((dx, dy)) = p.dram {
            // The hollow AI(DRAM) marker: white inside, coloured ring.
            let ai = p.data.ai_dram.unwrap();
            let ex = plane.frame.x
                + plane.frame.w * (lg(ai) - lg(plane.x.lo)) / (lg(plane.x.hi) - lg(plane.x.lo));
            assert!((dx - ex).abs() < 1e-6 && (dy - ey).abs() < 1e-6);
            assert!(
                pic.has_near(dx + 5.0, dy, 1, p.color, 24),
                "{}: no DRAM ring",
                p.data.label
            );
            assert!(
                !pic.has_near(dx, dy, 0, p.color, 24),
                "{}: DRAM marker is not hollow",
                p.data.label
            );
        }
    }
    assert_eq!(plotted, 4);
    assert!(
        c.points.iter().any(|p| p.dram.is_some()),
        "the whole program has an AI(DRAM) pair"
    );
}

#[test]
fn labels_overlap_nothing_and_stay_inside_the_frame() {
    let (c, _) = rendered();
    // Each label's box as it lies on the chart (a bandwidth roof's turned
    // along its roof).
    let mut boxes: Vec<_> = c
        .roofs
        .iter()
        .map(|r| (r.roof.label.clone(), r.label))
        .collect();
    boxes.extend(
        c.points
            .iter()
            .filter_map(|p| Some((p.data.label.clone(), p.label?))),
    );
    assert_eq!(boxes.len(), 7 + 4);
    for (i, (a, pa)) in boxes.iter().enumerate() {
        assert!(!pa.overlaps, "{a}");
        let shape = pa.shape();
        assert!(shape.inside(&c.plane.frame), "{a} leaves the frame");
        for (b, pb) in &boxes[i + 1..] {
            assert_eq!(shape.overlap(&pb.shape()), 0.0, "{a} overlaps {b}");
        }
        for p in &c.points {
            for (m, reach) in p.markers() {
                assert!(
                    shape.distance(m) >= reach,
                    "{a} covers the marker of {}",
                    p.data.label
                );
            }
        }
    }
}

#[test]
fn turned_labels_are_inked_inside_their_turned_boxes() {
    let (c, pic) = rendered();
    let font = EmbeddedFont::new();
    let texts = c.all_texts();
    let turned: Vec<_> = texts
        .iter()
        .filter(|t| t.angle != 0.0 && t.angle != 90.0)
        .collect();
    assert_eq!(turned.len(), 4, "the four bandwidth roofs' labels");
    for t in turned {
        let b = text_box(&font, t);
        let r = b.bounds();
        // Pixels of the label's colour in the turned box of its text, and
        // in the corners of its upright bounds outside the label's ground
        // (where only the roof and the grid are).
        let (mut inside, mut area, mut corners) = (0, 0, 0);
        for y in r.y.floor() as i64..=r.bottom().ceil() as i64 {
            for x in r.x.floor() as i64..=r.right().ceil() as i64 {
                let centre = (x as f64 + 0.5, y as f64 + 0.5);
                let ink = pic.at(x, y).is_some_and(|p| close(p, t.color, 40));
                let d = b.distance(centre);
                if d == 0.0 {
                    area += 1;
                    inside += usize::from(ink);
                } else if d > 12.0 {
                    corners += usize::from(ink);
                }
            }
        }
        // Text inks about a tenth of its box in its full colour.
        assert!(
            inside * 20 > area,
            "{:?}: {inside} of {area} pixels inked",
            t.text
        );
        // Only a few pixels of its roof's line (text drawn upright, or
        // turned the other way, would put a hundred or more there).
        assert!(
            corners < 60,
            "{:?}: {corners} pixels of its colour beyond its box",
            t.text
        );
    }
}

#[test]
fn percent_of_attainable_is_stated_for_every_plotted_point() {
    let (c, _) = rendered();
    let dgemm = c.points.iter().find(|p| p.data.label == "dgemm").unwrap();
    let a = dgemm.attainable_l1.as_ref().unwrap();
    // 80e9 FLOP in 0.5 s = 160 GFLOP/s under the measured fp64 roof of 301.
    assert_eq!(a.gflops, 301.0);
    assert!((a.percent.unwrap() - 100.0 * 160.0 / 301.0).abs() < 1e-9);
    let triad = c.points.iter().find(|p| p.data.label == "triad").unwrap();
    let a = triad.attainable_l1.as_ref().unwrap();
    assert_eq!(a.bound, "L1 bandwidth");
    let row = c
        .table
        .rows
        .iter()
        .find(|r| r.cells.get(1).map(String::as_str) == Some("dgemm"))
        .unwrap();
    assert_eq!(row.cells[6], "53.2%");
}
