//! The embedded font (DejaVu Sans, fonts/DejaVuSans-LICENSE.txt): text is
//! measured and rasterised with it, so charts look the same on a machine
//! without any font installed. SVG text names the generic `sans-serif`
//! family, which every viewer has.

use ab_glyph::{Font, FontRef, ScaleFont};
use std::sync::Once;

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// The family name text is drawn with.
pub const FAMILY: &str = "sans-serif";

/// Text width in pixels: what the layout needs to keep labels apart.
pub trait TextMeasure {
    fn width(&self, text: &str, size: f64) -> f64;
}

/// Measures with the embedded font, as plotters' ab_glyph text does.
pub struct EmbeddedFont {
    font: FontRef<'static>,
}

impl EmbeddedFont {
    pub fn new() -> EmbeddedFont {
        EmbeddedFont {
            font: FontRef::try_from_slice(DEJAVU_SANS).expect("the embedded font parses"),
        }
    }
}

impl EmbeddedFont {
    /// Measures text as a browser lays out CSS `font-size: N px` of this
    /// font (whose em is smaller than ab_glyph's pixel height), for SVG
    /// written by hand.
    pub fn css(&self) -> CssMeasure<'_> {
        let em = self.font.units_per_em().unwrap_or(2048.0);
        CssMeasure {
            font: self,
            scale: f64::from(self.font.height_unscaled() / em),
        }
    }
}

/// See [`EmbeddedFont::css`].
pub struct CssMeasure<'a> {
    font: &'a EmbeddedFont,
    scale: f64,
}

impl TextMeasure for CssMeasure<'_> {
    fn width(&self, text: &str, size: f64) -> f64 {
        self.font.width(text, size * self.scale)
    }
}

impl Default for EmbeddedFont {
    fn default() -> Self {
        Self::new()
    }
}

impl TextMeasure for EmbeddedFont {
    fn width(&self, text: &str, size: f64) -> f64 {
        let f = self.font.as_scaled(size as f32);
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

/// Registers the embedded font with plotters (once per process).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, DEJAVU_SANS)
            .is_err()
        {
            unreachable!("the embedded font parses");
        }
    });
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
    }
}
