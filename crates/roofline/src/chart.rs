//! The laid-out chart: every roof, point, label and table cell at its pixel
//! position. Pure: the renderers only paint what this decides, and tests
//! check pictures against it.

use crate::font::{TextMeasure, LINE_EM};
use crate::hotspots::{Plot, PointSet, DEFAULT_MIN_SHARE};
use crate::labels::{self, Candidate, Placed};
use crate::palette::{self, Rgb};
use crate::points::PointData;
use crate::roofs::{self, Attainable, Roof, RoofKind, Selection};
use crate::scale::{sig3, tick_label, LogAxis, Plane, Quad, Rect};
use flopscope_model::Ceilings;

/// Text sizes in CSS pixels (the em; see [`crate::font`]).
pub const TITLE_SIZE: f64 = 18.0;
pub const TEXT_SIZE: f64 = 13.0;
pub const LABEL_SIZE: f64 = 13.0;
/// Roof labels, and the legend under the table.
pub const SMALL_SIZE: f64 = 12.0;
/// Marker radius in pixels.
pub const MARKER: f64 = 5.0;
/// Height of one table row.
pub const ROW: f64 = 20.0;
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

/// A line of text: `(x, y)` is the anchor point on the text's top edge,
/// and the text is turned `angle` degrees counterclockwise about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub size: f64,
    pub text: String,
    pub color: Rgb,
    pub anchor: Anchor,
    /// 0 for most; 90 for the y axis title (reading upwards, its top edge
    /// on the left); a bandwidth roof's label runs up along its roof.
    pub angle: f64,
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

impl ChartPoint {
    /// Its markers on the chart (the filled one, then the hollow AI(DRAM)
    /// one), each with the radius of the circle holding all it paints.
    pub fn markers(&self) -> Vec<((f64, f64), f64)> {
        let mut out: Vec<((f64, f64), f64)> = Vec::new();
        out.extend(self.l1.map(|m| (m, reach(self.marker, self.radius))));
        out.extend(self.dram.map(|m| (m, reach(Marker::Hollow, MARKER))));
        out
    }
}

/// The radius of the circle holding a marker of radius `r` as the
/// renderers paint it: a ring's stroke reaches a pixel further, a
/// triangle's corners further still.
pub fn reach(m: Marker, r: f64) -> f64 {
    match m {
        Marker::Circle | Marker::Dot => r,
        Marker::Hollow => r + 1.0,
        Marker::Triangle => {
            // Corners at (0, -s - 1) and (+-s, s - 1): see render::marker.
            let s = r.round() + 1.0;
            (s + 1.0).max(s.hypot(s - 1.0))
        }
    }
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
    /// The lines under the table: what the markers and lines mean, and the
    /// roofs not drawn.
    pub legend: Vec<Text>,
    /// What the chart says above the plot about its points (see
    /// [`Plot::notes`]) and its roofs.
    pub notes: Vec<String>,
}

impl Chart {
    /// Every text of the chart, as the renderers draw it: titles, ticks,
    /// roof and point labels, table cells and legend.
    pub fn all_texts(&self) -> Vec<Text> {
        let mut out = self.texts.clone();
        let label = |p: &Placed, text: &str, size: f64, color: Rgb| {
            let (x, y) = p.at(LABEL_PAD, LABEL_PAD);
            Text {
                x,
                y,
                size,
                text: text.to_string(),
                color,
                anchor: Anchor::Left,
                angle: p.angle,
            }
        };
        for r in &self.roofs {
            out.push(label(&r.label, &r.roof.label, SMALL_SIZE, r.roof.color));
        }
        for p in &self.points {
            if let Some(l) = &p.label {
                out.push(label(l, &p.data.label, LABEL_SIZE, p.color));
            }
        }
        let t = &self.table;
        let cell = |x: f64, y: f64, text: &str| Text {
            x,
            y,
            size: TEXT_SIZE,
            text: text.to_string(),
            color: palette::TEXT,
            anchor: Anchor::Left,
            angle: 0.0,
        };
        for (h, x) in t.header.iter().zip(&t.columns) {
            if !h.is_empty() {
                out.push(cell(*x, t.header_y, h));
            }
        }
        for row in &t.rows {
            for (c, x) in row.cells.iter().zip(&t.columns) {
                if !c.is_empty() {
                    out.push(cell(*x, row.y, c));
                }
            }
        }
        out.extend(self.legend.iter().cloned());
        out
    }

    /// What would make the chart hard to read, one line each (none when
    /// all is well): a label without a free place, a label's box (its
    /// white ground) crossing a roof or covering a marker, and the clashes
    /// of its texts ([`Chart::clashes`]).
    pub fn problems(&self, measure: &dyn TextMeasure) -> Vec<String> {
        let mut out = Vec::new();
        let labels = self.roofs.iter().map(|r| (&r.roof.label, r.label)).chain(
            self.points
                .iter()
                .filter_map(|p| Some((&p.data.label, p.label?))),
        );
        for (text, placed) in labels {
            if placed.overlaps {
                out.push(format!("{text:?} found no free place"));
            }
            let shape = placed.shape();
            for r in &self.roofs {
                if shape.crosses(r.from, r.to) {
                    out.push(format!("{text:?} crosses the roof {:?}", r.roof.label));
                }
            }
            for p in &self.points {
                for (m, reach) in p.markers() {
                    if shape.distance(m) < reach {
                        out.push(format!("{text:?} covers the marker of {:?}", p.data.label));
                    }
                }
            }
        }
        out.extend(self.clashes(&self.all_texts(), measure));
        out
    }

    /// Where `texts` would be hard to read on this chart, one line each:
    /// two texts' boxes overlapping (a turned text's box compared as the
    /// turned rectangle it is), a text crossing a roof, a text covering a
    /// marker. `texts` are the chart's own ([`Chart::all_texts`]) or those
    /// read back from its SVG ([`crate::render::svg_texts`]).
    pub fn clashes(&self, texts: &[Text], measure: &dyn TextMeasure) -> Vec<String> {
        let mut out = Vec::new();
        let boxes: Vec<Quad> = texts.iter().map(|t| text_box(measure, t)).collect();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if boxes[i].overlap(&boxes[j]) > 0.0 {
                    out.push(format!("{:?} overlaps {:?}", texts[i].text, texts[j].text));
                }
            }
        }
        for (t, b) in texts.iter().zip(&boxes) {
            for r in &self.roofs {
                if b.crosses(r.from, r.to) {
                    out.push(format!("{:?} crosses the roof {:?}", t.text, r.roof.label));
                }
            }
            for p in &self.points {
                for (m, reach) in p.markers() {
                    if b.distance(m) < reach {
                        out.push(format!(
                            "{:?} covers the marker of {:?}",
                            t.text, p.data.label
                        ));
                    }
                }
            }
        }
        out
    }

    /// The chart without the table under the plot (the HTML page shows it
    /// as an HTML table): the legend moves up into its place.
    pub fn without_table(&self) -> Chart {
        let mut c = self.clone();
        let top = c.table.header_y;
        let shift = c.legend.first().map_or(0.0, |t| t.y - top).max(0.0);
        c.table.header.clear();
        c.table.rows.clear();
        for t in &mut c.legend {
            t.y -= shift;
        }
        c.height = (f64::from(c.height) - shift).ceil() as u32;
        c
    }
}

/// The box a text covers (turned with it), with the same font metrics the
/// layout uses.
pub fn text_box(measure: &dyn TextMeasure, t: &Text) -> Quad {
    let w = measure.width(&t.text, t.size);
    let along = match t.anchor {
        Anchor::Left => 0.0,
        Anchor::Center => w / 2.0,
        Anchor::Right => w,
    };
    let upright = Rect {
        x: t.x - along,
        y: t.y,
        w,
        h: LINE_EM * t.size,
    };
    Quad::turned(&upright, t.angle, (t.x, t.y))
}

/// Height of a line of the notes above the plot.
const NOTE_LINE: f64 = 17.0;
/// Space between a label's box and its text.
pub const LABEL_PAD: f64 = 2.0;

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

/// `text` on one line at most `width` wide: cut with an ellipsis where it
/// is wider (a long command as the title).
pub fn cut_to(measure: &dyn TextMeasure, text: &str, size: f64, width: f64) -> String {
    if measure.width(text, size) <= width {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let cut = format!("{}…", chars.iter().collect::<String>().trim_end());
        if measure.width(&cut, size) <= width {
            return cut;
        }
    }
    "…".into()
}

fn label_box(measure: &dyn TextMeasure, text: &str, size: f64) -> (f64, f64) {
    (
        measure.width(text, size).ceil() + 2.0 * LABEL_PAD,
        (LINE_EM * size).ceil() + 2.0 * LABEL_PAD,
    )
}

/// Whether a point can be placed on the chart.
fn plottable(p: &PointData) -> bool {
    p.flop > 0 && p.gflops.is_some_and(|g| g > 0.0) && p.ai_l1.is_some_and(|a| a > 0.0)
}

/// The axes holding the points and roofs, and `extra_x` and `extra_y`
/// (intensities and rates to keep room for).
fn axes(
    ceilings: &Selection,
    points: &[PointData],
    extra_x: &[f64],
    extra_y: &[f64],
) -> (LogAxis, LogAxis) {
    let plotted = points.iter().filter(|p| plottable(p));
    let mut xs: Vec<f64> = extra_x.to_vec();
    let mut ys: Vec<f64> = extra_y.to_vec();
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

/// Gap between a bandwidth roof's line (its middle) and its label's box:
/// the 2-pixel line stays whole beside the label's white ground.
const ROOF_GAP: f64 = 2.0;

fn roof_candidates(r: &Roof, from: (f64, f64), to: (f64, f64), w: f64, h: f64) -> Vec<Candidate> {
    let mut out = Vec::new();
    match r.kind {
        RoofKind::Compute => {
            // Above the roof at its right end first, then below, then
            // further left, in steps small enough to find a gap between
            // markers.
            let y = from.1;
            let mut right = to.0 - 4.0;
            while right - w >= from.0 - 1.0 {
                for y in [y - h - 1.0, y + 1.0] {
                    out.push(Candidate::upright(
                        Rect {
                            x: right - w,
                            y,
                            w,
                            h,
                        },
                        None,
                    ));
                }
                right -= 12.0;
            }
        }
        RoofKind::Bandwidth => {
            // Written along the roof, reading up its slope (as Intel
            // Advisor writes them), just above the line: in the band
            // between it and the next faster level's roof, where a label
            // is read as belonging to the line under it. From near the
            // roof's lower end upwards (labels of levels close together
            // then form a ladder, each in its own band); then the same
            // just below the line. Where both bands are narrower than the
            // label (levels under about 1.8x apart in a chart of the
            // default size; a narrow chart's roofs are steeper, its bands
            // thinner), further out, beyond the neighbouring roofs, with a
            // leader from its own roof.
            let (dx, dy) = (to.0 - from.0, to.1 - from.1);
            let len = dx.hypot(dy);
            if len <= w {
                return out;
            }
            let (ux, uy) = (dx / len, dy / len);
            // Up-left of a line rising to the right.
            let (nx, ny) = (uy, -ux);
            let angle = (-uy).atan2(ux).to_degrees();
            let step = 8.0;
            for out_by in (0..=10).map(|k| f64::from(k) * h / 2.0) {
                for side in [1.0, -1.0] {
                    let off = side * (ROOF_GAP + h / 2.0 + out_by);
                    let mut along = 18.0_f64.min((len - w) / 2.0);
                    while along + w <= len {
                        let foot = (
                            from.0 + ux * (along + w / 2.0),
                            from.1 + uy * (along + w / 2.0),
                        );
                        let c = (foot.0 + nx * off, foot.1 + ny * off);
                        out.push(Candidate {
                            rect: Rect {
                                x: c.0 - w / 2.0,
                                y: c.1 - h / 2.0,
                                w,
                                h,
                            },
                            angle,
                            leader_from: (out_by > 0.0).then_some(foot),
                        });
                        along += step;
                    }
                }
            }
        }
    }
    out
}

/// The order in which roofs' labels take their places: compute roofs
/// first (their places are few), then the bandwidth roofs with the most
/// room beside them: the fastest and the slowest (each has a side with no
/// roof beyond it), then the others by their wider band, so that where the
/// bands are too thin for a label, those that need a leader do not take
/// the places of those that do not.
fn placing_order(roofs: &[Roof]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..roofs.len())
        .filter(|i| roofs[*i].kind == RoofKind::Compute)
        .collect();
    let bandwidth: Vec<usize> = (0..roofs.len())
        .filter(|i| roofs[*i].kind == RoofKind::Bandwidth)
        .collect();
    let band = |i: usize| -> f64 {
        let v = roofs[i].value;
        let faster = bandwidth
            .iter()
            .map(|j| roofs[*j].value)
            .filter(|w| *w > v)
            .fold(f64::INFINITY, f64::min);
        let slower = bandwidth
            .iter()
            .map(|j| roofs[*j].value)
            .filter(|w| *w < v)
            .fold(0.0, f64::max);
        (faster / v).max(v / slower)
    };
    let mut ranked: Vec<(usize, f64)> = bandwidth.iter().map(|i| (*i, band(*i))).collect();
    // Stable: levels with equal room keep their order, fastest first.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    order.extend(ranked.into_iter().map(|(i, _)| i));
    order
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

/// The legend line naming the compute roofs of the drawn precisions that
/// are not drawn, by where their figures come from.
fn not_drawn(sel: &Selection) -> Vec<String> {
    let mut out = Vec::new();
    for (measured, word) in [(true, "measured"), (false, "theoretical")] {
        let names: Vec<String> = sel
            .not_drawn
            .iter()
            .filter(|c| c.measured == measured)
            .map(|c| format!("{} {}", roofs::short_name(c), sig3(c.gflops)))
            .collect();
        if !names.is_empty() {
            out.push(format!(
                "Lower {word} roofs, not drawn: {} GFLOP/s.",
                names.join(", ")
            ));
        }
    }
    out
}

/// Lays out the chart of `plot` under the roofs of `ceilings`.
pub fn layout(
    ceilings: &Ceilings,
    plot: Plot,
    opts: &ChartOptions,
    measure: &dyn TextMeasure,
) -> Chart {
    let Plot { points, mut notes } = plot;
    // The roofs that matter: those of the precisions the plotted points compute in.
    let mut precisions: Vec<String> = Vec::new();
    for p in points.iter().filter(|p| plottable(p)) {
        for q in &p.precisions {
            if !precisions.contains(q) {
                precisions.push(q.clone());
            }
        }
    }
    let selection = roofs::select(ceilings, &precisions);
    if ceilings.bandwidth.iter().all(|b| b.gbytes_per_s <= 0.0) {
        notes.push(
            "No bandwidth roof: the machine record has none; run `flopscope bench --save` to measure them."
                .into(),
        );
    }
    // Room for the roofs' labels, the axes grown until there is: right of
    // the last ridge (where the slowest bandwidth roof meets the highest
    // compute roof) and of the markers under the compute roofs, for the
    // compute roofs' labels, where the compute roofs are the only lines
    // and nothing covers them; and along the fastest bandwidth roof (the
    // shortest: it meets the compute roofs first) for its label.
    let max_peak = selection
        .compute
        .iter()
        .map(|c| c.gflops)
        .fold(0.0, f64::max);
    let min_peak = selection
        .compute
        .iter()
        .map(|c| c.gflops)
        .filter(|g| *g > 0.0)
        .fold(f64::INFINITY, f64::min);
    let min_bw = selection
        .bandwidth
        .iter()
        .map(|b| b.gbytes_per_s)
        .fold(f64::INFINITY, f64::min);
    let (mut extra_x, mut extra_y) = (Vec::new(), Vec::new());
    let (mut x, mut y) = axes(&selection, &points, &extra_x, &extra_y);
    let first = roofs::roofs(&selection, x, y);
    let label_room = first
        .iter()
        .filter(|r| r.kind == RoofKind::Compute)
        .map(|r| measure.width(&r.label, SMALL_SIZE) + 24.0)
        .fold(0.0, f64::max);
    let fastest = first
        .iter()
        .filter(|r| r.kind == RoofKind::Bandwidth)
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .map(|r| (r.value, measure.width(&r.label, SMALL_SIZE) + 60.0));
    let plot_w = f64::from(opts.width) - 78.0 - 24.0;
    let plot_h = f64::from(opts.plot_height);
    let roof_label_h = label_box(measure, "", SMALL_SIZE).1;
    for _ in 0..4 {
        let per_x = plot_w / (x.hi / x.lo).log10();
        let per_y = plot_h / (y.hi / y.lo).log10();
        let mut grown = false;
        if max_peak > 0.0 && min_bw.is_finite() && label_room > 0.0 {
            // Right of the points just under (or over) the compute roofs
            // too: a label there would cover their markers.
            let near = 10f64.powf(2.0 * roof_label_h / per_y);
            let beside = points
                .iter()
                .filter(|p| plottable(p))
                .filter(|p| {
                    p.gflops
                        .is_some_and(|g| g * near >= min_peak && g <= max_peak * near)
                })
                .flat_map(|p| [p.ai_l1, p.ai_dram])
                .flatten()
                .map(|ai| ai * 10f64.powf((DOT_MAX + 8.0) / per_x))
                .fold(max_peak / min_bw, f64::max);
            let room = (x.hi / beside).log10() * per_x;
            if room < label_room {
                extra_x.push(beside * 10f64.powf(label_room / per_x));
                grown = true;
            }
        }
        if let (Some((bw, needed)), true) = (fastest, max_peak > 0.0) {
            // A roof rises a decade for every decade it runs right.
            let per_decade = per_x.hypot(per_y);
            let end = (max_peak.min(y.hi) / bw).min(x.hi);
            let start = x.lo.max(y.lo / bw);
            if (end / start).log10() * per_decade < needed {
                let from = end / 10f64.powf(needed / per_decade);
                extra_x.push(from);
                extra_y.push(from * bw);
                grown = true;
            }
        }
        if !grown {
            break;
        }
        (x, y) = axes(&selection, &points, &extra_x, &extra_y);
    }
    let y_ticks: Vec<(f64, String)> = y
        .decades()
        .into_iter()
        .map(|d| (d, tick_label(d)))
        .collect();
    let widest_tick = y_ticks
        .iter()
        .map(|(_, t)| measure.width(t, TEXT_SIZE))
        .fold(0.0, f64::max);
    // Room for the axis title (one line, turned) and the tick labels.
    let left = (12.0 + LINE_EM * (TEXT_SIZE + 1.0) + 10.0 + widest_tick + 8.0)
        .max(78.0)
        .ceil();
    let right_margin = 24.0;
    let note_lines: Vec<String> = notes
        .iter()
        .flat_map(|n| {
            wrap(
                measure,
                n,
                TEXT_SIZE,
                f64::from(opts.width) - left - right_margin,
            )
        })
        .collect();
    let machine = if ceilings.machine.is_empty() {
        String::new()
    } else {
        format!("{}; ", ceilings.machine)
    };
    let subtitle = wrap(
        measure,
        &format!("{machine}roofs: {}", ceilings.source),
        TEXT_SIZE,
        f64::from(opts.width) - left - right_margin,
    );
    let notes_top = 56.0 + NOTE_LINE * (subtitle.len().max(1) - 1) as f64;
    let notes_height = notes_top - 56.0 + NOTE_LINE * note_lines.len() as f64;
    let frame = Rect {
        x: left,
        y: 64.0 + notes_height,
        w: f64::from(opts.width) - left - right_margin,
        h: f64::from(opts.plot_height),
    };
    let plane = Plane { frame, x, y };

    // Roofs in pixels.
    let roof_list = roofs::roofs(&selection, x, y);
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

    // Labels: roofs first (their places are few), then points; markers
    // are obstacles, lines are crossed only where nothing else is free.
    let markers: Vec<Rect> = chart_points
        .iter()
        .flat_map(|p| p.markers())
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
    let order = placing_order(&roof_list);
    for (r, (a, b)) in order.iter().map(|i| (&roof_list[*i], &roof_px[*i])) {
        let (w, h) = label_box(measure, &r.label, SMALL_SIZE);
        let mut candidates = roof_candidates(r, *a, *b, w, h);
        if candidates.is_empty() {
            // A roof too short for its label: beside its start, whatever it covers.
            candidates.push(Candidate::upright(
                Rect {
                    x: a.0,
                    y: a.1 - h - 2.0,
                    w,
                    h,
                },
                None,
            ));
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
    let mut roof_labels: Vec<Option<Placed>> = vec![None; roof_list.len()];
    for i in &order {
        roof_labels[*i] = placed.next().flatten();
    }
    let roofs: Vec<PlacedRoof> = roof_list
        .into_iter()
        .zip(roof_px)
        .zip(roof_labels)
        .map(|((roof, (from, to)), label)| PlacedRoof {
            roof,
            from,
            to,
            label: label.expect("one placement per roof"),
        })
        .collect();
    for i in plotted {
        let p = &mut chart_points[i];
        p.label = placed.next().flatten();
        // A leader starts at the marker's edge, not across its inside.
        if let Some(Placed {
            leader: Some((from, to)),
            ..
        }) = &mut p.label
        {
            let (dx, dy) = (to.0 - from.0, to.1 - from.1);
            let d = dx.hypot(dy);
            let edge = p.radius + 1.5;
            if d > edge {
                *from = (from.0 + dx / d * edge, from.1 + dy / d * edge);
            }
        }
    }

    // Texts: title, machine, notes, axes.
    let text = |x: f64, y: f64, size: f64, t: String, anchor: Anchor| Text {
        x,
        y,
        size,
        text: t,
        color: palette::TEXT,
        anchor,
        angle: 0.0,
    };
    let title_width = f64::from(opts.width) - frame.x - right_margin;
    let mut texts = vec![text(
        frame.x,
        10.0,
        TITLE_SIZE,
        cut_to(measure, &opts.title, TITLE_SIZE, title_width),
        Anchor::Left,
    )];
    for (i, line) in subtitle.into_iter().enumerate() {
        texts.push(text(
            frame.x,
            36.0 + NOTE_LINE * i as f64,
            TEXT_SIZE,
            line,
            Anchor::Left,
        ));
    }
    for (i, line) in note_lines.into_iter().enumerate() {
        texts.push(Text {
            color: palette::NOTE,
            ..text(
                frame.x,
                notes_top + NOTE_LINE * i as f64,
                TEXT_SIZE,
                line,
                Anchor::Left,
            )
        });
    }
    // Every decade labelled where there is room, else every second (or
    // third...) one, counted from 1: the labels of a narrow chart whose
    // axis spans many decades stay apart.
    let decades = x.decades();
    let per_decade = frame.w / (decades.len().max(2) - 1) as f64;
    let widest = decades
        .iter()
        .map(|d| measure.width(&tick_label(*d), TEXT_SIZE))
        .fold(0.0, f64::max);
    let every = ((widest + 8.0) / per_decade).ceil().max(1.0) as i32;
    for d in decades {
        if (d.log10().round() as i32).rem_euclid(every) != 0 {
            continue;
        }
        let (px, _) = plane.px(d, y.lo);
        texts.push(text(
            px,
            frame.bottom() + 9.0,
            TEXT_SIZE,
            tick_label(d),
            Anchor::Center,
        ));
    }
    for (d, label) in y_ticks {
        let (_, py) = plane.px(x.lo, d);
        texts.push(text(
            frame.x - 8.0,
            py - LINE_EM * TEXT_SIZE / 2.0,
            TEXT_SIZE,
            label,
            Anchor::Right,
        ));
    }
    texts.push(text(
        frame.x + frame.w / 2.0,
        frame.bottom() + 30.0,
        TEXT_SIZE + 1.0,
        "Arithmetic intensity (FLOP/byte)".into(),
        Anchor::Center,
    ));
    texts.push(Text {
        angle: 90.0,
        ..text(
            12.0,
            frame.y + frame.h / 2.0,
            TEXT_SIZE + 1.0,
            "Performance (GFLOP/s)".into(),
            Anchor::Center,
        )
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
    let table_top = frame.bottom() + 60.0;
    let mut rows = Vec::new();
    let mut row_y = table_top + ROW + 4.0;
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
        // A "not plotted" note spans the columns after the label: the
        // column is as wide as its widest other cell.
        let widest = if c == 2 {
            rows.iter()
                .filter(|r| r.marker.is_some())
                .filter_map(|r| r.cells.get(c))
                .chain([head])
                .map(|t| measure.width(t, TEXT_SIZE))
                .fold(0.0, f64::max)
        } else {
            widest
        };
        at += widest.ceil() + 16.0;
    }
    // A "not plotted" note may be wider than the columns it spans.
    let note_right = rows
        .iter()
        .filter(|r| r.marker.is_none())
        .filter_map(|r| r.cells.get(2))
        .map(|t| columns[2] + measure.width(t, TEXT_SIZE))
        .fold(0.0, f64::max);
    let table = Table {
        columns,
        header_y: table_top,
        header,
        rows,
    };
    let table_right = (table.columns.last().copied().unwrap_or(frame.x)
        + table
            .rows
            .iter()
            .filter_map(|r| r.cells.get(7))
            .chain(table.header.last())
            .map(|t| measure.width(t, TEXT_SIZE))
            .fold(0.0, f64::max))
    .max(note_right);
    let width = f64::from(opts.width).max(table_right + right_margin).ceil();

    // The legend: what the lines and markers mean, only those on the chart.
    let mut legend_lines: Vec<String> = vec![
        "Roofs: solid = measured by a benchmark, dashed = theoretical (from the data sheet)."
            .into(),
    ];
    legend_lines.extend(not_drawn(&selection));
    let has = |m: Marker| chart_points.iter().any(|p| p.l1.is_some() && p.marker == m);
    let mut shapes = Vec::new();
    if has(Marker::Triangle) {
        shapes.push("triangle: the whole program");
    }
    if has(Marker::Circle) {
        shapes.push("circles: regions");
    }
    if chart_points.iter().any(|p| p.dram.is_some()) {
        shapes.push("filled: AI(L1), FLOP per byte the cores moved; hollow: AI(DRAM), joined to the same point's AI(L1)");
    }
    if !shapes.is_empty() {
        let mut line = shapes.join("; ");
        line.replace_range(..1, &line[..1].to_uppercase());
        legend_lines.push(format!("{line}."));
    }
    let dots: Vec<&ChartPoint> = chart_points
        .iter()
        .filter(|p| p.l1.is_some() && p.marker == Marker::Dot)
        .collect();
    if !dots.is_empty() {
        legend_lines.push(if dots.iter().all(|p| p.data.gflops.is_some()) {
            "Dots: loops (coloured by function) or functions (by module), each at its FLOP per byte and GFLOP/s; area by time.".into()
        } else {
            "Dots: loops (coloured by function) or functions (by module), each at its FLOP per byte and GFLOP/s; area by FLOP (some have no time).".into()
        });
    }
    legend_lines.push("% of attainable: GFLOP/s over min(compute roof of the point's precision, AI x bandwidth of the memory level).".into());
    let legend_y = row_y + 10.0;
    let legend: Vec<Text> = legend_lines
        .iter()
        .flat_map(|l| wrap(measure, l, SMALL_SIZE, width - frame.x - right_margin))
        .enumerate()
        .map(|(i, line)| {
            text(
                frame.x,
                legend_y + i as f64 * 17.0,
                SMALL_SIZE,
                line,
                Anchor::Left,
            )
        })
        .collect();
    let height = (legend_y + legend.len() as f64 * 17.0 + 10.0).ceil() as u32;
    Chart {
        width: width as u32,
        height,
        plane,
        texts,
        roofs,
        points: chart_points,
        table,
        legend,
        notes,
    }
}

#[cfg(test)]
mod title_tests {
    use super::cut_to;
    use crate::font::{EmbeddedFont, TextMeasure};

    #[test]
    fn a_title_wider_than_the_chart_is_cut_with_an_ellipsis() {
        let f = EmbeddedFont::new();
        let short = "Roofline: ./triad 1000";
        assert_eq!(cut_to(&f, short, 16.0, 900.0), short);
        let long = format!("Roofline: node {}", "--a-long-option ".repeat(40));
        let cut = cut_to(&f, &long, 16.0, 900.0);
        assert!(
            cut.ends_with('…') && long.starts_with(cut.trim_end_matches('…')),
            "{cut}"
        );
        let width = f.width(&cut, 16.0);
        assert!(width <= 900.0 && width > 850.0, "{width}: as much as fits");
    }
}
