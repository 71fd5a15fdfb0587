//! Paints a laid-out [`Chart`] with plotters: SVG text, or RGB pixels and
//! PNG bytes. Text uses the embedded font (see [`crate::font`]).

use crate::chart::{Anchor, Chart, Marker, Text, MARKER};
use crate::font::{self, FAMILY};
use crate::palette::{self, Rgb};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

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

fn text<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, t: &Text) -> Result<(), RenderError> {
    let h = match t.anchor {
        Anchor::Left => HPos::Left,
        Anchor::Right => HPos::Right,
        Anchor::Center => HPos::Center,
    };
    let c = color(t.color);
    let mut style = TextStyle::from((FAMILY, t.size).into_font())
        .color(&c)
        .pos(Pos::new(h, VPos::Top));
    if t.vertical {
        style = style.transform(FontTransform::Rotate270);
    }
    // Glyphs sit a little low on their top anchor: see chart::label_box.
    area.draw_text(&t.text, &style, pt((t.x, t.y + 0.1 * t.size)))
        .map_err(draw_err)
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

    // Labels over everything, on a white ground.
    let ground = RGBColor(255, 255, 255).mix(0.85).filled();
    let labels = chart
        .roofs
        .iter()
        .map(|r| {
            (
                r.label,
                r.roof.label.as_str(),
                r.roof.color,
                crate::chart::LABEL_SIZE - 1.0,
            )
        })
        .chain(chart.points.iter().filter_map(|p| {
            Some((
                p.label?,
                p.data.label.as_str(),
                p.color,
                crate::chart::LABEL_SIZE,
            ))
        }));
    for (placed, label, c, size) in labels {
        if let Some((from, to)) = placed.leader {
            area.draw(&PathElement::new(
                vec![pt(from), pt(to)],
                color(palette::LEADER),
            ))
            .map_err(draw_err)?;
        }
        let r = placed.rect;
        area.draw(&Rectangle::new(
            [pt((r.x, r.y)), pt((r.right(), r.bottom()))],
            ground,
        ))
        .map_err(draw_err)?;
        let t = Text {
            x: r.x + 2.0,
            y: r.y + 2.0,
            size,
            text: label.to_string(),
            color: c,
            anchor: Anchor::Left,
            vertical: false,
        };
        text(area, &t)?;
    }

    for t in &chart.texts {
        text(area, t)?;
    }

    // The table under the plot.
    let tab = &chart.table;
    for (i, h) in tab.header.iter().enumerate() {
        let t = Text {
            x: tab.columns[i],
            y: tab.header_y,
            size: crate::chart::TEXT_SIZE,
            text: h.clone(),
            color: palette::TEXT,
            anchor: Anchor::Left,
            vertical: false,
        };
        text(area, &t)?;
    }
    let rule_y = tab.header_y + crate::chart::ROW - 3.0;
    let right = tab.columns.last().copied().unwrap_or(f.right()) + 120.0;
    area.draw(&PathElement::new(
        vec![
            pt((f.x, rule_y)),
            pt((right.min(f64::from(chart.width) - 8.0), rule_y)),
        ],
        color(palette::FRAME),
    ))
    .map_err(draw_err)?;
    for row in &tab.rows {
        if let Some((c, m)) = row.marker {
            marker(area, (tab.columns[0] + 6.0, row.y + 7.0), c, m, 4.0)?;
        }
        for (i, cell) in row.cells.iter().enumerate().skip(1) {
            let t = Text {
                x: tab.columns[i],
                y: row.y,
                size: crate::chart::TEXT_SIZE,
                text: cell.clone(),
                color: palette::TEXT,
                anchor: Anchor::Left,
                vertical: false,
            };
            text(area, &t)?;
        }
    }
    area.present().map_err(draw_err)
}

/// The chart as an SVG document.
pub fn svg(chart: &Chart) -> Result<String, RenderError> {
    font::register();
    let mut out = String::new();
    {
        let area =
            SVGBackend::with_string(&mut out, (chart.width, chart.height)).into_drawing_area();
        paint(&area, chart)?;
    }
    Ok(out)
}

/// The chart as RGB pixels, row by row (width x height x 3 bytes).
pub fn rgb(chart: &Chart) -> Result<Vec<u8>, RenderError> {
    font::register();
    let mut buf = vec![255u8; chart.width as usize * chart.height as usize * 3];
    {
        let area =
            BitMapBackend::with_buffer(&mut buf, (chart.width, chart.height)).into_drawing_area();
        paint(&area, chart)?;
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
