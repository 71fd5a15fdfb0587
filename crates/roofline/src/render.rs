//! Paints a laid-out [`Chart`] with plotters: SVG text, or RGB pixels and
//! PNG bytes. Text is not plotters': SVG `<text>` elements at their
//! baselines, and in pixels rasterised with the embedded font (see
//! [`crate::font`]).

use crate::chart::{Anchor, Chart, Marker, Text, MARKER};
use crate::font::{EmbeddedFont, TextMeasure, ASCENT_EM, FAMILY};
use crate::palette::{self, Rgb};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::fmt::Write;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    #[error("encoding the chart as PNG failed: {0}")]
    Png(#[from] png::EncodingError),
}

fn color(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn pt(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

fn draw_err<E: std::fmt::Debug>(e: E) -> RenderError {
    RenderError::Draw(format!("{e:?}"))
}

/// How far along its line a text's anchor lies from the line's start.
fn along(font: &EmbeddedFont, t: &Text) -> f64 {
    let w = font.width(&t.text, t.size);
    match t.anchor {
        Anchor::Left => 0.0,
        Anchor::Center => w / 2.0,
        Anchor::Right => w,
    }
}

/// An angle as SVG writes it: to a hundredth of a degree, whole ones
/// without decimals.
fn degrees(a: f64) -> String {
    format!("{}", (a * 100.0).round() / 100.0)
}

/// One SVG `<text>` element: its baseline given, the anchor left to the
/// viewer (whose fallback font may be narrower than DejaVu Sans); a turned
/// text turned about its anchor on the baseline.
fn svg_text(out: &mut String, t: &Text) {
    let anchor = match t.anchor {
        Anchor::Left => "start",
        Anchor::Center => "middle",
        Anchor::Right => "end",
    };
    let escaped = crate::html::escape(&t.text);
    let fill = t.color.hex();
    let size = t.size;
    // From the top edge down to the baseline, in the text's own frame.
    let (sin, cos) = t.angle.to_radians().sin_cos();
    let x = t.x + ASCENT_EM * size * sin;
    let y = t.y + ASCENT_EM * size * cos;
    let turn = if t.angle == 0.0 {
        String::new()
    } else {
        format!(" transform=\"rotate({} {x:.1} {y:.1})\"", degrees(-t.angle))
    };
    let _ = writeln!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\"{turn} font-family=\"{FAMILY}\" font-size=\"{size}\" fill=\"{fill}\" text-anchor=\"{anchor}\">{escaped}</text>"
    );
}

/// The texts of an SVG chart written by [`svg`], read back from its
/// `<text>` elements (position, size, anchor, turn): with
/// [`crate::chart::text_box`], what tests check for overlaps.
pub fn svg_texts(svg: &str) -> Vec<Text> {
    let attr = |line: &str, key: &str| -> Option<String> {
        let at = line.find(&format!(" {key}=\""))? + key.len() + 3;
        let end = line[at..].find('"')? + at;
        Some(line[at..end].to_string())
    };
    let num = |line: &str, key: &str| attr(line, key).and_then(|v| v.parse::<f64>().ok());
    let unescape = |t: &str| {
        t.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    };
    let mut out = Vec::new();
    for line in svg.lines().filter(|l| l.starts_with("<text ")) {
        let (Some(x), Some(y), Some(size)) =
            (num(line, "x"), num(line, "y"), num(line, "font-size"))
        else {
            continue;
        };
        let Some(open) = line.find('>') else { continue };
        let Some(close) = line.rfind("</text>") else {
            continue;
        };
        // rotate(-A X Y): turned A degrees counterclockwise about the anchor.
        let angle = attr(line, "transform")
            .and_then(|t| {
                let inner = t.strip_prefix("rotate(")?.strip_suffix(')')?;
                inner.split_whitespace().next()?.parse::<f64>().ok()
            })
            .map_or(0.0, |a| -a);
        let anchor = match attr(line, "text-anchor").as_deref() {
            Some("middle") => Anchor::Center,
            Some("end") => Anchor::Right,
            _ => Anchor::Left,
        };
        let fill = attr(line, "fill").unwrap_or_default();
        let hex =
            |i: usize| u8::from_str_radix(fill.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
        // Back from the baseline to the top edge, in the text's own frame.
        let (sin, cos) = angle.to_radians().sin_cos();
        out.push(Text {
            x: x - ASCENT_EM * size * sin,
            y: y - ASCENT_EM * size * cos,
            size,
            text: unescape(&line[open + 1..close]),
            color: Rgb(hex(1), hex(3), hex(5)),
            anchor,
            angle,
        });
    }
    out
}

/// Blends `a` (0..1 coverage) of `ink` into the pixel at (x, y).
fn blend(buf: &mut [u8], width: u32, x: usize, y: usize, ink: Rgb, a: f32) {
    // A little darker than linear coverage: thin stems of small text stay
    // legible on white.
    let a = a.clamp(0.0, 1.0).powf(0.8);
    let i = (y * width as usize + x) * 3;
    for (k, ink) in [ink.0, ink.1, ink.2].into_iter().enumerate() {
        let bg = f32::from(buf[i + k]);
        buf[i + k] = (bg + (f32::from(ink) - bg) * a).round() as u8;
    }
}

/// Blends a text rasterised with the embedded font into RGB pixels.
fn raster_text(font: &EmbeddedFont, buf: &mut [u8], width: u32, height: u32, t: &Text) {
    if t.angle != 0.0 && t.angle != 90.0 {
        return raster_turned(font, buf, width, height, t);
    }
    let cov = font.raster(&t.text, t.size);
    let vertical = t.angle == 90.0;
    let from = if vertical {
        t.y + along(font, t)
    } else {
        t.x - along(font, t)
    };
    let (w, h) = (i64::from(width), i64::from(height));
    let (x0, y0) = (t.x.round() as i64, t.y.round() as i64);
    let from = from.round() as i64;
    for v in 0..cov.h {
        for u in 0..cov.w {
            let c = cov.data[v * cov.w + u];
            if c <= 0.0 {
                continue;
            }
            let (x, y) = if vertical {
                (x0 + v as i64, from - u as i64)
            } else {
                (from + u as i64, y0 + v as i64)
            };
            if x < 0 || y < 0 || x >= w || y >= h {
                continue;
            }
            blend(buf, width, x as usize, y as usize, t.color, c);
        }
    }
}

/// Samples per pixel side of a turned text.
const SUPERSAMPLE: usize = 4;

/// A text turned by an angle other than a quarter: rasterised upright at
/// [`SUPERSAMPLE`] times its size, then each pixel of its turned box
/// averages that many samples squared, each read back through the turn.
fn raster_turned(font: &EmbeddedFont, buf: &mut [u8], width: u32, height: u32, t: &Text) {
    let k = SUPERSAMPLE as f64;
    let cov = font.raster(&t.text, t.size * k);
    let (sin, cos) = t.angle.to_radians().sin_cos();
    // The text's own frame: along its line and down from its top edge.
    let (u, v) = ((cos, -sin), (sin, cos));
    let back = along(font, t);
    let origin = (t.x - u.0 * back, t.y - u.1 * back);
    let b = crate::chart::text_box(font, t).bounds();
    let x0 = (b.x.floor() as i64 - 1).max(0);
    let y0 = (b.y.floor() as i64 - 1).max(0);
    let x1 = (b.right().ceil() as i64 + 1).min(i64::from(width));
    let y1 = (b.bottom().ceil() as i64 + 1).min(i64::from(height));
    for py in y0..y1 {
        for px in x0..x1 {
            let mut sum = 0f32;
            for sy in 0..SUPERSAMPLE {
                for sx in 0..SUPERSAMPLE {
                    let qx = px as f64 + (sx as f64 + 0.5) / k - origin.0;
                    let qy = py as f64 + (sy as f64 + 0.5) / k - origin.1;
                    let cu = ((qx * u.0 + qy * u.1) * k).floor();
                    let cv = ((qx * v.0 + qy * v.1) * k).floor();
                    if cu >= 0.0 && cv >= 0.0 && (cu as usize) < cov.w && (cv as usize) < cov.h {
                        sum += cov.data[cv as usize * cov.w + cu as usize];
                    }
                }
            }
            if sum > 0.0 {
                let a = sum / (SUPERSAMPLE * SUPERSAMPLE) as f32;
                blend(buf, width, px as usize, py as usize, t.color, a);
            }
        }
    }
}

fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (f64, f64),
    c: Rgb,
    m: Marker,
    r: f64,
) -> Result<(), RenderError> {
    let (x, y) = pt(at);
    let r = r.round() as i32;
    let fill = color(c).filled();
    match m {
        Marker::Circle => area.draw(&Circle::new((x, y), r, fill)),
        Marker::Dot => {
            // Translucent, so that dots on top of each other stay visible.
            area.draw(&Circle::new((x, y), r, color(c).mix(0.55).filled()))
                .map_err(draw_err)?;
            area.draw(&Circle::new((x, y), r, color(c).stroke_width(1)))
        }
        Marker::Hollow => {
            area.draw(&Circle::new((x, y), r, WHITE.filled()))
                .map_err(draw_err)?;
            area.draw(&Circle::new((x, y), r, color(c).stroke_width(2)))
        }
        Marker::Triangle => {
            let s = r + 1;
            area.draw(&Polygon::new(
                vec![(x, y - s - 1), (x - s, y + s - 1), (x + s, y + s - 1)],
                fill,
            ))
        }
    }
    .map_err(draw_err)
}

fn paint<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), RenderError> {
    area.fill(&WHITE).map_err(draw_err)?;
    let plane = &chart.plane;
    let f = plane.frame;
    // Grid: minor lines, then decades.
    for (values, grid) in [
        (plane.x.minor(), palette::GRID_MINOR),
        (plane.x.decades(), palette::GRID_MAJOR),
    ] {
        for v in values {
            let (x, _) = plane.px(v, plane.y.lo);
            area.draw(&PathElement::new(
                vec![pt((x, f.y)), pt((x, f.bottom()))],
                color(grid),
            ))
            .map_err(draw_err)?;
        }
    }
    for (values, grid) in [
        (plane.y.minor(), palette::GRID_MINOR),
        (plane.y.decades(), palette::GRID_MAJOR),
    ] {
        for v in values {
            let (_, y) = plane.px(plane.x.lo, v);
            area.draw(&PathElement::new(
                vec![pt((f.x, y)), pt((f.right(), y))],
                color(grid),
            ))
            .map_err(draw_err)?;
        }
    }
    area.draw(&Rectangle::new(
        [pt((f.x, f.y)), pt((f.right(), f.bottom()))],
        color(palette::FRAME),
    ))
    .map_err(draw_err)?;

    // Roofs: solid when measured, dashed when theoretical.
    for r in &chart.roofs {
        let style = color(r.roof.color).stroke_width(2);
        let path = vec![pt(r.from), pt(r.to)];
        if r.roof.measured {
            area.draw(&PathElement::new(path, style))
                .map_err(draw_err)?;
        } else {
            area.draw(&DashedPathElement::new(path, 9, 5, style))
                .map_err(draw_err)?;
        }
    }

    // Hierarchical pairs: AI(L1) to AI(DRAM) of the same point.
    for p in &chart.points {
        if let (Some(a), Some(b)) = (p.l1, p.dram) {
            area.draw(&DashedPathElement::new(
                vec![pt(a), pt(b)],
                4,
                3,
                color(p.color).stroke_width(1),
            ))
            .map_err(draw_err)?;
        }
    }
    // Larger dots first, so that a small one is never hidden under a large one.
    let mut order: Vec<_> = chart.points.iter().collect();
    order.sort_by(|a, b| b.radius.total_cmp(&a.radius));
    for p in order {
        if let Some(b) = p.dram {
            marker(area, b, p.color, Marker::Hollow, MARKER)?;
        }
        if let Some(a) = p.l1 {
            marker(area, a, p.color, p.marker, p.radius)?;
        }
    }

    // Labels over everything, on a white ground (their texts come last).
    let ground = RGBColor(255, 255, 255).mix(0.85).filled();
    let labels = chart
        .roofs
        .iter()
        .map(|r| r.label)
        .chain(chart.points.iter().filter_map(|p| p.label));
    for placed in labels {
        if let Some((from, to)) = placed.leader {
            area.draw(&PathElement::new(
                vec![pt(from), pt(to)],
                color(palette::LEADER),
            ))
            .map_err(draw_err)?;
        }
        if placed.angle == 0.0 {
            let r = placed.rect;
            area.draw(&Rectangle::new(
                [pt((r.x, r.y)), pt((r.right(), r.bottom()))],
                ground,
            ))
            .map_err(draw_err)?;
        } else {
            let corners = placed.shape().0.map(pt).to_vec();
            area.draw(&Polygon::new(corners, ground))
                .map_err(draw_err)?;
        }
    }

    // The table's rule and markers (its cells are texts).
    let tab = &chart.table;
    if !tab.header.is_empty() {
        let rule_y = tab.header_y + crate::chart::ROW;
        let right = tab.columns.last().copied().unwrap_or(f.right()) + 120.0;
        area.draw(&PathElement::new(
            vec![
                pt((f.x, rule_y)),
                pt((right.min(f64::from(chart.width) - 8.0), rule_y)),
            ],
            color(palette::FRAME),
        ))
        .map_err(draw_err)?;
    }
    for row in &tab.rows {
        if let Some((c, m)) = row.marker {
            marker(
                area,
                (tab.columns[0] + 6.0, row.y + crate::chart::TEXT_SIZE * 0.6),
                c,
                m,
                4.0,
            )?;
        }
    }
    area.present().map_err(draw_err)
}

/// The chart as an SVG document.
pub fn svg(chart: &Chart) -> Result<String, RenderError> {
    let mut out = String::new();
    {
        let area =
            SVGBackend::with_string(&mut out, (chart.width, chart.height)).into_drawing_area();
        paint(&area, chart)?;
    }
    let end = out.rfind("</svg>").unwrap_or(out.len());
    let mut texts = String::new();
    for t in chart.all_texts() {
        svg_text(&mut texts, &t);
    }
    out.insert_str(end, &texts);
    // The notes whole (the picture wraps them into lines), for readers
    // that read text rather than pictures.
    if !chart.notes.is_empty() {
        if let Some(open) = out
            .find("<svg")
            .and_then(|i| out[i..].find('>').map(|j| i + j + 1))
        {
            let desc = format!(
                "\n<desc>{}</desc>",
                crate::html::escape(&chart.notes.join(" "))
            );
            out.insert_str(open, &desc);
        }
    }
    Ok(out)
}

/// The chart as RGB pixels, row by row (width x height x 3 bytes).
pub fn rgb(chart: &Chart) -> Result<Vec<u8>, RenderError> {
    let mut buf = vec![255u8; chart.width as usize * chart.height as usize * 3];
    {
        let area =
            BitMapBackend::with_buffer(&mut buf, (chart.width, chart.height)).into_drawing_area();
        paint(&area, chart)?;
    }
    let font = EmbeddedFont::new();
    for t in chart.all_texts() {
        raster_text(&font, &mut buf, chart.width, chart.height, &t);
    }
    Ok(buf)
}

/// The chart as a PNG file's bytes.
pub fn png(chart: &Chart) -> Result<Vec<u8>, RenderError> {
    let pixels = rgb(chart)?;
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, chart.width, chart.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header()?;
        w.write_image_data(&pixels)?;
    }
    Ok(out)
}
