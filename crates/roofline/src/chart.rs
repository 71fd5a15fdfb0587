//! The laid-out chart: every roof, point, label and table cell at its pixel
//! position. Pure: the renderers only paint what this decides, and tests
//! check pictures against it.

use crate::font::TextMeasure;
use crate::hotspots::{Plot, PointSet, DEFAULT_MIN_SHARE};
use crate::labels::{self, Candidate, Placed};
use crate::palette::{self, Rgb};
use crate::points::PointData;
use crate::roofs::{self, Attainable, Roof, RoofKind};
use crate::scale::{sig3, tick_label, LogAxis, Plane, Rect};
use flopscope_model::Ceilings;

/// Text sizes in pixels.
pub const TITLE_SIZE: f64 = 17.0;
pub const TEXT_SIZE: f64 = 12.0;
pub const LABEL_SIZE: f64 = 12.0;
/// Marker radius in pixels.
pub const MARKER: f64 = 5.0;
/// Height of one table row.
pub const ROW: f64 = 18.0;
/// Radius of the largest loop or function dot, and of the smallest.
pub const DOT_MAX: f64 = 16.0;
pub const DOT_MIN: f64 = 3.0;

#[derive(Debug, Clone, PartialEq)]
pub struct ChartOptions {
    /// Width in pixels (the table may widen it).
    pub width: u32,
    /// Height of the plot frame in pixels.
    pub plot_height: u32,
    pub title: String,
    /// Which points to draw.
    pub points: PointSet,
    /// Loops and functions holding at least this share (a fraction) of the
    /// FLOP get a dot.
    pub min_share: f64,
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            width: 960,
            plot_height: 480,
            title: "Roofline".into(),
            points: PointSet::Auto,
            min_share: DEFAULT_MIN_SHARE,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A region at its AI(L1).
    Circle,
    /// The whole program at its AI(L1).
    Triangle,
    /// The same point at its AI(DRAM): hollow, joined to the L1 marker.
    Hollow,
    /// A loop or function: a translucent disc, its area by time (or FLOP).
    Dot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Left,
    Right,
    Center,
}

/// A line of text: `(x, y)` is the anchor point on the text's top edge.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub size: f64,
    pub text: String,
    pub color: Rgb,
    pub anchor: Anchor,
    /// Turned a quarter left (the y axis title).
    pub vertical: bool,
}

/// A roof with its pixel ends and label.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedRoof {
    pub roof: Roof,
    pub from: (f64, f64),
    pub to: (f64, f64),
    pub label: Placed,
}

/// A point with its pixels, label and distance below its roofs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPoint {
    pub data: PointData,
    pub color: Rgb,
    pub marker: Marker,
    /// Radius of the marker in pixels.
    pub radius: f64,
    /// Pixel of the AI(L1) marker.
    pub l1: Option<(f64, f64)>,
    /// Pixel of the AI(DRAM) marker.
    pub dram: Option<(f64, f64)>,
    pub label: Option<Placed>,
    pub attainable_l1: Option<Attainable>,
    pub attainable_dram: Option<Attainable>,
    /// Why the point is not on the chart.
    pub not_plotted: Option<String>,
}

/// One row of the table under the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    pub y: f64,
    pub marker: Option<(Rgb, Marker)>,
    pub cells: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Left edge of each column; column 0 holds the marker.
    pub columns: Vec<f64>,
    pub header_y: f64,
    pub header: Vec<String>,
    pub rows: Vec<TableRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    pub plane: Plane,
    pub texts: Vec<Text>,
    pub roofs: Vec<PlacedRoof>,
    pub points: Vec<ChartPoint>,
    pub table: Table,
    /// What the chart says above the plot about its points (see
    /// [`Plot::notes`]).
    pub notes: Vec<String>,
}

/// Height of a line of the notes above the plot.
const NOTE_LINE: f64 = 16.0;

/// `text` cut into lines no wider than `width` pixels, at spaces.
pub fn wrap(measure: &dyn TextMeasure, text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let longer = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && measure.width(&longer, size) > width {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = longer;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn label_box(measure: &dyn TextMeasure, text: &str, size: f64) -> (f64, f64) {
    (measure.width(text, size).ceil() + 4.0, size + 4.0)
}

fn axes(ceilings: &Ceilings, points: &[PointData]) -> (LogAxis, LogAxis) {
    let plotted = points
        .iter()
        .filter(|p| p.gflops.is_some_and(|g| g > 0.0) && p.ai_l1.is_some_and(|a| a > 0.0));
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for p in plotted {
        for ai in [p.ai_l1, p.ai_dram].into_iter().flatten() {
            xs.extend([ai / 2.0, ai * 2.0]);
        }
        let g = p.gflops.unwrap_or(1.0);
        // Dots are larger than markers: more room below them for labels.
        let below = if p.area.is_some() { 3.0 } else { 2.0 };
        ys.extend([g / below, g * 1.5]);
    }
    let peaks: Vec<f64> = ceilings
        .compute
        .iter()
        .map(|c| c.gflops)
        .filter(|g| *g > 0.0)
        .collect();
    for g in &peaks {
        ys.extend([g / 4.0, g * 1.6]);
    }
    let max_peak = peaks.iter().copied().fold(0.0, f64::max);
    for b in ceilings.bandwidth.iter().filter(|b| b.gbytes_per_s > 0.0) {
        if max_peak > 0.0 {
            // Both ridge points: where the roof meets the highest and the lowest compute roof.
            let low = peaks.iter().copied().fold(f64::INFINITY, f64::min);
            xs.extend([low / b.gbytes_per_s / 2.0, max_peak / b.gbytes_per_s * 2.0]);
        }
    }
    (
        LogAxis::covering(&xs, 3, (0.01, 100.0)),
        LogAxis::covering(&ys, 2, (0.1, 1000.0)),
    )
}

fn roof_candidates(r: &Roof, from: (f64, f64), to: (f64, f64), w: f64, h: f64) -> Vec<Candidate> {
    let mut out = Vec::new();
    match r.kind {
        RoofKind::Compute => {
            let y = from.1;
            let mut right = to.0 - 4.0;
            while right - w >= from.0 - 1.0 {
                for top in [y - h - 2.0, y + 2.0] {
                    out.push(Candidate {
                        rect: Rect {
                            x: right - w,
                            y: top,
                            w,
                            h,
                        },
                        leader_from: None,
                    });
                }
                right -= w / 2.0 + 10.0;
            }
        }
        RoofKind::Bandwidth => {
            for t in [0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 0.05] {
                let p = (from.0 + t * (to.0 - from.0), from.1 + t * (to.1 - from.1));
                out.push(Candidate {
                    rect: Rect {
                        x: p.0 - w - 2.0,
                        y: p.1 - h - 2.0,
                        w,
                        h,
                    },
                    leader_from: None,
                });
                out.push(Candidate {
                    rect: Rect {
                        x: p.0 + 2.0,
                        y: p.1 + 2.0,
                        w,
                        h,
                    },
                    leader_from: None,
                });
            }
        }
    }
    out
}

fn percent(a: &Option<Attainable>) -> String {
    match a.as_ref().and_then(|a| a.percent) {
        Some(p) => format!("{p:.1}%"),
        None => "-".into(),
    }
}

/// The radius of a point's marker: a dot's area is its `area` share of
/// the largest dot's.
fn radius(p: &PointData) -> f64 {
    match p.area {
        Some(a) => (DOT_MAX * a.clamp(0.0, 1.0).sqrt()).max(DOT_MIN),
        None => MARKER,
    }
}

/// Lays out the chart of `plot` under the roofs of `ceilings`.
pub fn layout(
    ceilings: &Ceilings,
    plot: Plot,
    opts: &ChartOptions,
    measure: &dyn TextMeasure,
) -> Chart {
    let Plot { points, notes } = plot;
    let (x, y) = axes(ceilings, &points);
    let note_lines: Vec<String> = notes
        .iter()
        .flat_map(|n| wrap(measure, n, TEXT_SIZE, f64::from(opts.width) - 78.0 - 24.0))
        .collect();
    let notes_height = NOTE_LINE * note_lines.len() as f64;
    let frame = Rect {
        x: 78.0,
        y: 62.0 + notes_height,
        w: f64::from(opts.width) - 78.0 - 24.0,
        h: f64::from(opts.plot_height),
    };
    let plane = Plane { frame, x, y };

    // Roofs in pixels.
    let roof_list = roofs::roofs(ceilings, x, y);
    let roof_px: Vec<((f64, f64), (f64, f64))> = roof_list
        .iter()
        .map(|r| (plane.px(r.from.0, r.from.1), plane.px(r.to.0, r.to.1)))
        .collect();

    // Points in pixels.
    let mut chart_points = Vec::new();
    for (i, p) in points.into_iter().enumerate() {
        let color = palette::point(p.color_group.unwrap_or(i));
        let marker = match (p.whole_program, p.area) {
            (true, _) => Marker::Triangle,
            (false, Some(_)) => Marker::Dot,
            (false, None) => Marker::Circle,
        };
        let r = radius(&p);
        let not_plotted = match (p.gflops, p.ai_l1) {
            _ if p.flop == 0 => Some("no FLOP".to_string()),
            // A loop's or function's: the run was sampled, but not there.
            (None, _) if p.area.is_some() => Some("no time: no sample fell in it".to_string()),
            (None, _) => Some("no time (count it natively, or with --runs N)".to_string()),
            (Some(g), _) if g <= 0.0 => Some("no FLOP/s".to_string()),
            (_, None) => Some("no byte counts".to_string()),
            _ => None,
        };
        let (mut l1, mut dram, mut att_l1, mut att_dram) = (None, None, None, None);
        if not_plotted.is_none() {
            let g = p.gflops.unwrap_or_default();
            let ai = p.ai_l1.unwrap_or_default();
            l1 = Some(plane.px(ai, g));
            att_l1 = roofs::attainable(ceilings, &p.precision, "L1", ai, Some(g));
            if let Some(d) = p.ai_dram.filter(|d| *d > 0.0) {
                dram = Some(plane.px(d, g));
                att_dram = roofs::attainable(ceilings, &p.precision, "DRAM", d, Some(g));
            }
        }
        chart_points.push(ChartPoint {
            data: p,
            color,
            marker,
            radius: r,
            l1,
            dram,
            label: None,
            attainable_l1: att_l1,
            attainable_dram: att_dram,
            not_plotted,
        });
    }

    // Labels: roofs first (their places are few), then points; markers are obstacles.
    let markers: Vec<Rect> = chart_points
        .iter()
        .flat_map(|p| [p.l1, p.dram].map(|m| m.map(|m| (m, p.radius))))
        .flatten()
        .map(|((mx, my), r)| Rect {
            x: mx - r - 1.0,
            y: my - r - 1.0,
            w: 2.0 * r + 2.0,
            h: 2.0 * r + 2.0,
        })
        .collect();
    let mut lines = roof_px.clone();
    lines.extend(chart_points.iter().filter_map(|p| Some((p.l1?, p.dram?))));
    let mut requests = Vec::new();
    let mut optional = Vec::new();
    for (r, (a, b)) in roof_list.iter().zip(&roof_px) {
        let (w, h) = label_box(measure, &r.label, LABEL_SIZE - 1.0);
        let mut candidates = roof_candidates(r, *a, *b, w, h);
        if candidates.is_empty() {
            // A roof too short for its label: beside its start, whatever it covers.
            candidates.push(Candidate {
                rect: Rect {
                    x: a.0,
                    y: a.1 - h - 2.0,
                    w,
                    h,
                },
                leader_from: None,
            });
        }
        requests.push(candidates);
        optional.push(false);
    }
    let plotted: Vec<usize> = (0..chart_points.len())
        .filter(|i| chart_points[*i].l1.is_some())
        .collect();
    for i in &plotted {
        let p = &chart_points[*i];
        let (w, h) = label_box(measure, &p.data.label, LABEL_SIZE);
        // Beside the filled (L1) marker; the hollow one is an obstacle like any marker.
        let Some(anchor) = p.l1 else { continue };
        requests.push(if p.marker == Marker::Dot {
            labels::around_far(anchor, p.radius, w, h)
        } else {
            labels::around(anchor, p.radius, w, h)
        });
        // A dot's label that finds no free place is left out (the table
        // names the dot): labels never cover each other or a dot.
        optional.push(p.marker == Marker::Dot);
    }
    let mut placed =
        labels::place_optional(&requests, &optional, &markers, &lines, frame).into_iter();
    let roofs: Vec<PlacedRoof> = roof_list
        .into_iter()
        .zip(roof_px)
        .map(|(roof, (from, to))| PlacedRoof {
            roof,
            from,
            to,
            label: placed.next().flatten().expect("one placement per roof"),
        })
        .collect();
    for i in plotted {
        chart_points[i].label = placed.next().flatten();
    }

    // Texts: title, axes.
    let mut texts = vec![Text {
        x: frame.x,
        y: 12.0,
        size: TITLE_SIZE,
        text: opts.title.clone(),
        color: palette::TEXT,
        anchor: Anchor::Left,
        vertical: false,
    }];
    let machine = if ceilings.machine.is_empty() {
        String::new()
    } else {
        format!("{}; ", ceilings.machine)
    };
    texts.push(Text {
        x: frame.x,
        y: 36.0,
        size: TEXT_SIZE,
        text: format!("{machine}roofs: {}", ceilings.source),
        color: palette::TEXT,
        anchor: Anchor::Left,
        vertical: false,
    });
    for (i, line) in note_lines.into_iter().enumerate() {
        texts.push(Text {
            x: frame.x,
            y: 54.0 + NOTE_LINE * i as f64,
            size: TEXT_SIZE,
            text: line,
            color: palette::NOTE,
            anchor: Anchor::Left,
            vertical: false,
        });
    }
    for d in x.decades() {
        let (px, _) = plane.px(d, y.lo);
        texts.push(Text {
            x: px,
            y: frame.bottom() + 6.0,
            size: TEXT_SIZE,
            text: tick_label(d),
            color: palette::TEXT,
            anchor: Anchor::Center,
            vertical: false,
        });
    }
    for d in y.decades() {
        let (_, py) = plane.px(x.lo, d);
        texts.push(Text {
            x: frame.x - 6.0,
            y: py - TEXT_SIZE / 2.0,
            size: TEXT_SIZE,
            text: tick_label(d),
            color: palette::TEXT,
            anchor: Anchor::Right,
            vertical: false,
        });
    }
    texts.push(Text {
        x: frame.x + frame.w / 2.0,
        y: frame.bottom() + 26.0,
        size: TEXT_SIZE + 1.0,
        text: "Arithmetic intensity (FLOP/byte)".into(),
        color: palette::TEXT,
        anchor: Anchor::Center,
        vertical: false,
    });
    texts.push(Text {
        x: 16.0,
        y: frame.y + frame.h / 2.0,
        size: TEXT_SIZE + 1.0,
        text: "Performance (GFLOP/s)".into(),
        color: palette::TEXT,
        anchor: Anchor::Center,
        vertical: true,
    });

    // The table: one row per point and memory level.
    let header: Vec<String> = [
        "",
        "point",
        "memory",
        "AI (FLOP/byte)",
        "GFLOP/s",
        "attainable GFLOP/s",
        "% of attainable",
        "bound by",
    ]
    .map(String::from)
    .into();
    let mut rows = Vec::new();
    let mut row_y = frame.bottom() + 52.0 + ROW;
    for p in &chart_points {
        let g = p.data.gflops.map(sig3).unwrap_or_else(|| "-".into());
        if let Some(why) = &p.not_plotted {
            rows.push(TableRow {
                y: row_y,
                marker: None,
                cells: vec![
                    String::new(),
                    p.data.label.clone(),
                    format!("not plotted: {why}"),
                ],
            });
            row_y += ROW;
            continue;
        }
        for (level, ai, att, marker) in [
            ("L1", p.data.ai_l1, &p.attainable_l1, p.marker),
            ("DRAM", p.data.ai_dram, &p.attainable_dram, Marker::Hollow),
        ] {
            let Some(ai) = ai else { continue };
            let cells = vec![
                String::new(),
                if level == "L1" {
                    p.data.label.clone()
                } else {
                    String::new()
                },
                level.to_string(),
                sig3(ai),
                g.clone(),
                att.as_ref()
                    .map(|a| sig3(a.gflops))
                    .unwrap_or_else(|| "-".into()),
                percent(att),
                att.as_ref()
                    .map(|a| a.bound.clone())
                    .unwrap_or_else(|| "no roof".into()),
            ];
            rows.push(TableRow {
                y: row_y,
                marker: Some((p.color, marker)),
                cells,
            });
            row_y += ROW;
        }
    }
    let mut columns = vec![frame.x];
    let mut at = frame.x + 18.0;
    for (c, head) in header.iter().enumerate().skip(1) {
        columns.push(at);
        let widest = rows
            .iter()
            .filter_map(|r| r.cells.get(c))
            .chain([head])
            .map(|t| measure.width(t, TEXT_SIZE))
            .fold(0.0, f64::max);
        // A "not plotted" note spans the columns after the label.
        let widest = if c == 2 {
            widest.min(measure.width("memory", TEXT_SIZE) + 40.0)
        } else {
            widest
        };
        at += widest.ceil() + 16.0;
    }
    let table = Table {
        columns,
        header_y: frame.bottom() + 52.0,
        header,
        rows,
    };
    let notes_y = row_y + 8.0;
    let mut legend = vec![
        "Roofs: solid = measured by a benchmark, dashed = theoretical (from the data sheet).",
        "Filled markers: AI(L1), FLOP per byte the cores moved; hollow: AI(DRAM), joined to the same point's AI(L1).",
        "% of attainable: GFLOP/s over min(compute roof of the point's precision, AI x bandwidth of the memory level).",
    ];
    let mut dots = chart_points.iter().filter(|p| p.marker == Marker::Dot);
    if dots.clone().next().is_some() {
        legend.push(if dots.all(|p| p.data.gflops.is_some()) {
            "Dots: loops (coloured by function) or functions (by module), each at its FLOP per byte and GFLOP/s; area by time."
        } else {
            "Dots: loops (coloured by function) or functions (by module), each at its FLOP per byte and GFLOP/s; area by FLOP (some have no time)."
        });
    }
    let mut widest_note: f64 = 0.0;
    for (i, n) in legend.iter().enumerate() {
        widest_note = widest_note.max(measure.width(n, TEXT_SIZE - 1.0));
        texts.push(Text {
            x: frame.x,
            y: notes_y + i as f64 * 16.0,
            size: TEXT_SIZE - 1.0,
            text: n.to_string(),
            color: palette::TEXT,
            anchor: Anchor::Left,
            vertical: false,
        });
    }
    let table_right = table.columns.last().copied().unwrap_or(frame.x)
        + table
            .rows
            .iter()
            .filter_map(|r| r.cells.last())
            .chain(table.header.last())
            .map(|t| measure.width(t, TEXT_SIZE))
            .fold(0.0, f64::max);
    let width = (f64::from(opts.width))
        .max(table_right + 24.0)
        .max(frame.x + widest_note + 24.0)
        .ceil() as u32;
    let height = (notes_y + legend.len() as f64 * 16.0 + 12.0).ceil() as u32;
    Chart {
        width,
        height,
        plane,
        texts,
        roofs,
        points: chart_points,
        table,
        notes,
    }
}
