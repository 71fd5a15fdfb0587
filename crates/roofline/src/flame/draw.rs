//! The flame graph as SVG text, written by hand (no drawing library): one
//! `<g class="frame">` per frame with its `<title>` tooltip, rectangle and
//! name, the root at the bottom. Each frame carries `data-kind` and
//! `data-value` (its exact width in the metric's unit) for scripts.

use super::tree::{Frame, FrameKind};
use super::{Flame, FlameOptions, Metric};
use crate::chart::wrap;
use crate::font::{EmbeddedFont, TextMeasure};
use crate::html::escape;
use crate::palette::{self, Rgb};
use flopscope_model::render::{duration, thousands};
use std::fmt::Write;

/// Height of a frame, side margins, and the frame text's size, in pixels.
const FRAME_H: f64 = 17.0;
const PAD: f64 = 10.0;
const TEXT: f64 = 11.0;
/// Frames narrower than this are left out (with everything on them).
const MIN_WIDTH: f64 = 0.1;

/// A frame's colour: its module's point colour, lighter up the stack,
/// a little lighter or darker by name so that neighbours stand apart.
fn fill(f: &Frame) -> Rgb {
    let white = match f.kind {
        FrameKind::Root => return Rgb(0xd8, 0xd8, 0xd8),
        FrameKind::Rest => return Rgb(0xee, 0xee, 0xee),
        FrameKind::Module => 0.35,
        FrameKind::Function => 0.5,
        FrameKind::Loop => 0.62,
        FrameKind::Line => 0.74,
    };
    // FNV-1a of the name: the same shade for the same name in every graph.
    let hash = f.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let jitter = (hash % 13) as f64 / 100.0 - 0.06;
    palette::lighten(palette::point(f.module), white + jitter)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * part as f64 / whole as f64)
    }
}

/// The tooltip: what the frame is and its exact counts.
fn tooltip(f: &Frame, metric: Metric, total: u64) -> String {
    let t = &f.totals;
    let mut lines = vec![f.detail.clone()];
    let share = |v: u64| format!(" ({} of the total)", percent(v, total));
    let mark = |m: Metric| {
        if m == metric {
            share(f.value)
        } else {
            String::new()
        }
    };
    lines.push(format!("FLOP {}{}", thousands(t.flop), mark(Metric::Flop)));
    lines.push(format!(
        "bytes {} read, {} written{}",
        thousands(t.bytes_read),
        thousands(t.bytes_written),
        mark(Metric::Bytes)
    ));
    lines.push(format!(
        "instructions {}{}",
        thousands(t.instructions),
        mark(Metric::Instructions)
    ));
    match (t.time_s, t.samples) {
        (Some(s), Some(n)) => lines.push(format!(
            "time {}, {} samples{}",
            duration(s),
            thousands(n),
            mark(Metric::Time)
        )),
        (Some(s), None) => lines.push(format!("time {}", duration(s))),
        (None, Some(n)) => lines.push(format!("{} samples{}", thousands(n), mark(Metric::Time))),
        (None, None) => {}
    }
    if let Some((iterations, entries)) = f.iterations {
        let per = if entries > 0 {
            format!(" ({:.1} per entry)", iterations as f64 / entries as f64)
        } else {
            String::new()
        };
        lines.push(format!(
            "{} iterations in {} entries{per}",
            thousands(iterations),
            thousands(entries)
        ));
    }
    escape(&lines.join("\n"))
}

/// `name` cut to fit `room` pixels ("..": cut), or nothing when under 3 characters fit.
fn fitted(measure: &dyn TextMeasure, name: &str, room: f64) -> Option<String> {
    if measure.width(name, TEXT) <= room {
        return Some(name.to_string());
    }
    let chars: Vec<char> = name.chars().collect();
    (3..chars.len())
        .rev()
        .map(|n| format!("{}..", chars[..n].iter().collect::<String>()))
        .find(|s| measure.width(s, TEXT) <= room)
}

struct Painter<'a> {
    out: String,
    measure: &'a dyn TextMeasure,
    metric: Metric,
    total: u64,
    /// Pixels per unit of the metric.
    scale: f64,
    /// The y of the root frame (frames above it are higher up).
    base: f64,
}

impl Painter<'_> {
    fn frame(&mut self, f: &Frame, x: f64, depth: usize) {
        let w = f.value as f64 * self.scale;
        if w < MIN_WIDTH {
            return;
        }
        let y = self.base - depth as f64 * FRAME_H;
        let kind = match f.kind {
            FrameKind::Root => "root",
            FrameKind::Module => "module",
            FrameKind::Function => "function",
            FrameKind::Loop => "loop",
            FrameKind::Line => "line",
            FrameKind::Rest => "rest",
        };
        let _ = write!(
            self.out,
            "<g class=\"frame\" data-kind=\"{kind}\" data-value=\"{}\"><title>{}</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\"/>",
            f.value,
            tooltip(f, self.metric, self.total),
            FRAME_H - 1.0,
            fill(f).hex(),
        );
        if let Some(text) = fitted(self.measure, &f.name, w - 6.0) {
            let _ = write!(
                self.out,
                "<text x=\"{:.2}\" y=\"{:.1}\">{}</text>",
                x + 3.0,
                y + 12.0,
                escape(&text)
            );
        }
        self.out.push_str("</g>\n");
        let mut at = 0u64;
        for c in &f.children {
            self.frame(c, x + at as f64 * self.scale, depth + 1);
            at += c.value;
        }
    }
}

/// The flame graph as an SVG document.
pub fn svg(flame: &Flame, opts: &FlameOptions) -> String {
    let measure = EmbeddedFont::new();
    let width = f64::from(opts.width);
    let room = width - 2.0 * PAD;
    let total = flame.root.value;
    let unit = match flame.metric {
        Metric::Time => "samples".to_string(),
        m => m.name().to_string(),
    };
    let mut header = vec![format!(
        "Width: {} ({} {unit} in all). {}",
        flame.metric.name(),
        thousands(total),
        if flame.command.is_empty() {
            String::new()
        } else {
            format!("Command: {}", flame.command)
        }
    )];
    header.push(
        "Frames: module, function, loops (outer to inner), source line. Point at a frame for its exact counts."
            .to_string(),
    );
    for n in &flame.notes {
        header.extend(wrap(&measure, &format!("Note: {n}"), 12.0, room));
    }
    let top = 36.0 + 16.0 * header.len() as f64 + 8.0;
    let depth = flame.root.depth();
    let height = top + depth as f64 * FRAME_H + PAD;
    let mut p = Painter {
        out: String::new(),
        measure: &measure,
        metric: flame.metric,
        total,
        scale: if total > 0 { room / total as f64 } else { 0.0 },
        base: top + (depth as f64 - 1.0) * FRAME_H,
    };
    let _ = write!(
        p.out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"'DejaVu Sans', Verdana, sans-serif\">\n\
         <style>text {{ font-size: {TEXT}px; fill: #222; pointer-events: none; }} .frame rect {{ stroke: #fff; stroke-width: 0.5; }} .frame:hover rect {{ stroke: #000; stroke-width: 0.8; }} .head {{ font-size: 12px; }} .title {{ font-size: 17px; }}</style>\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n<text class=\"title\" x=\"{PAD}\" y=\"24\">{}</text>\n",
        escape(&opts.title),
        w = opts.width,
        h = height.ceil(),
    );
    for (i, line) in header.iter().enumerate() {
        let _ = writeln!(
            p.out,
            "<text class=\"head\" x=\"{PAD}\" y=\"{}\">{}</text>",
            46.0 + 16.0 * i as f64,
            escape(line)
        );
    }
    if total == 0 {
        let _ = writeln!(
            p.out,
            "<text class=\"head\" x=\"{PAD}\" y=\"{}\">No {} to show.</text>",
            top + 12.0,
            flame.metric.name()
        );
    } else {
        p.frame(&flame.root, PAD, 0);
    }
    p.out.push_str("</svg>\n");
    p.out
}
