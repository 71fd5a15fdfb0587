//! The embedded font (DejaVu Sans, fonts/DejaVuSans-LICENSE.txt): text is
//! measured and rasterised with it, so charts look the same on a machine
//! without any font installed. SVG text names it first and `sans-serif`
//! after it; a browser without it falls back to a narrower face, so boxes
//! measured with it stay apart.
//!
//! Sizes are CSS pixels (the em), as SVG's `font-size` and the browser
//! take them, in every output: the PNG is rasterised here (not by
//! plotters, whose text at 11 px lost commas and kerning) at the same em.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// DejaVu Sans's ascent (top of a line to its baseline) and line height,
/// per em: every text's box is its width by `LINE_EM` x its size.
pub const ASCENT_EM: f64 = 0.928;
pub const LINE_EM: f64 = 1.164;

/// The family list SVG text is drawn with.
pub const FAMILY: &str = "DejaVu Sans, Verdana, sans-serif";

/// Text width in pixels: what the layout needs to keep labels apart.
pub trait TextMeasure {
    fn width(&self, text: &str, size: f64) -> f64;
}

/// Measures with the embedded font at a CSS font size (the em).
pub struct EmbeddedFont {
    font: FontRef<'static>,
    /// ab_glyph's pixel scale is the font's height (ascent - descent);
    /// this is that height per em.
    height_per_em: f64,
}

impl EmbeddedFont {
    pub fn new() -> EmbeddedFont {
        let font = FontRef::try_from_slice(DEJAVU_SANS).expect("the embedded font parses");
        let em = font.units_per_em().unwrap_or(2048.0);
        EmbeddedFont {
            height_per_em: f64::from(font.height_unscaled() / em),
            font,
        }
    }

    fn scale(&self, size: f64) -> PxScale {
        PxScale::from((size * self.height_per_em) as f32)
    }

    /// Distance from a line's top to its baseline.
    pub fn ascent(&self, size: f64) -> f64 {
        f64::from(self.font.as_scaled(self.scale(size)).ascent())
    }

    /// Height of a line of text: ascent plus descent.
    pub fn line_height(&self, size: f64) -> f64 {
        size * self.height_per_em
    }

    /// `text` rasterised at `size`: coverage (0..1) of a box as wide as the
    /// text and one line high, its top-left at (0, 0), the baseline on a
    /// whole pixel.
    pub fn raster(&self, text: &str, size: f64) -> Coverage {
        let f = self.font.as_scaled(self.scale(size));
        let w = self.width(text, size).ceil() as usize + 2;
        let h = self.line_height(size).ceil() as usize + 1;
        let mut data = vec![0f32; w * h];
        let baseline = f.ascent().round();
        let mut caret = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = f.glyph_id(c);
            if let Some(p) = prev {
                caret += f.kern(p, id);
            }
            prev = Some(id);
            // Glyphs start on whole pixels: the same letter looks the
            // same everywhere, and stems stay sharp without hinting.
            let glyph = id.with_scale_and_position(f.scale(), point(caret.round(), baseline));
            caret += f.h_advance(id);
            let Some(outline) = self.font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            outline.draw(|gx, gy, cov| {
                let x = b.min.x as i64 + i64::from(gx);
                let y = b.min.y as i64 + i64::from(gy);
                if x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h {
                    let v = &mut data[y as usize * w + x as usize];
                    *v = (*v + cov).min(1.0);
                }
            });
        }
        Coverage { w, h, data }
    }
}

/// A rasterised line of text (see [`EmbeddedFont::raster`]).
pub struct Coverage {
    pub w: usize,
    pub h: usize,
    /// Row by row, 0 (none) to 1 (full).
    pub data: Vec<f32>,
}

impl Default for EmbeddedFont {
    fn default() -> Self {
        Self::new()
    }
}

impl TextMeasure for EmbeddedFont {
    fn width(&self, text: &str, size: f64) -> f64 {
        let f = self.font.as_scaled(self.scale(size));
        let mut w = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let g = f.glyph_id(c);
            w += f.h_advance(g);
            if let Some(p) = prev {
                w += f.kern(p, g);
            }
            prev = Some(g);
        }
        f64::from(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wider_text_measures_wider() {
        let f = EmbeddedFont::new();
        let a = f.width("L1", 12.0);
        let b = f.width("L1 bandwidth", 12.0);
        assert!(a > 5.0 && b > 3.0 * a, "{a} {b}");
        assert!((f.width("x", 24.0) - 2.0 * f.width("x", 12.0)).abs() < 0.5);
        assert!((f.ascent(100.0) - 100.0 * ASCENT_EM).abs() < 0.5);
        assert!((f.line_height(100.0) - 100.0 * LINE_EM).abs() < 0.5);
    }

    #[test]
    fn a_comma_reaches_below_the_baseline_and_a_period_does_not() {
        let f = EmbeddedFont::new();
        let base = f.ascent(13.0).round() as usize;
        let below =
            |c: &Coverage| (base + 1..c.h).any(|y| (0..c.w).any(|x| c.data[y * c.w + x] > 0.3));
        assert!(below(&f.raster(",", 13.0)));
        assert!(!below(&f.raster(".", 13.0)));
    }
}
