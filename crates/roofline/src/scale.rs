//! Log axes and pixel rectangles: where a (FLOP/byte, GFLOP/s) pair lands.

/// A pixel rectangle (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Area shared with `o` (0 when they only touch).
    pub fn overlap(&self, o: &Rect) -> f64 {
        let w = self.right().min(o.right()) - self.x.max(o.x);
        let h = self.bottom().min(o.bottom()) - self.y.max(o.y);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }

    pub fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x && o.y >= self.y && o.right() <= self.right() && o.bottom() <= self.bottom()
    }

    pub fn inflate(&self, by: f64) -> Rect {
        Rect {
            x: self.x - by,
            y: self.y - by,
            w: self.w + 2.0 * by,
            h: self.h + 2.0 * by,
        }
    }

    /// Whether the segment a-b passes through the rectangle (Liang-Barsky).
    pub fn crosses(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x),
            (dx, self.right() - a.0),
            (-dy, a.1 - self.y),
            (dy, self.bottom() - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
                if t0 > t1 {
                    return false;
                }
            }
        }
        true
    }

    /// The point of the rectangle nearest to `p`.
    pub fn nearest(&self, p: (f64, f64)) -> (f64, f64) {
        (
            p.0.clamp(self.x, self.right()),
            p.1.clamp(self.y, self.bottom()),
        )
    }
}

/// A base-10 log axis from `lo` to `hi`, both powers of ten.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogAxis {
    pub lo: f64,
    pub hi: f64,
}

impl LogAxis {
    /// The smallest decade-aligned axis holding every positive finite value,
    /// at least `min_decades` wide; `fallback` when there is none.
    pub fn covering(values: &[f64], min_decades: i32, fallback: (f64, f64)) -> LogAxis {
        let v: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        if v.is_empty() {
            return LogAxis {
                lo: fallback.0,
                hi: fallback.1,
            };
        }
        let lo = v
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .log10()
            .floor() as i32;
        let mut hi = v.iter().copied().fold(0.0, f64::max).log10().ceil() as i32;
        if hi - lo < min_decades {
            hi = lo + min_decades;
        }
        LogAxis {
            lo: 10f64.powi(lo),
            hi: 10f64.powi(hi),
        }
    }

    /// Where `v` sits between `lo` (0) and `hi` (1).
    pub fn frac(&self, v: f64) -> f64 {
        (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
    }

    pub fn contains(&self, v: f64) -> bool {
        v >= self.lo * (1.0 - 1e-9) && v <= self.hi * (1.0 + 1e-9)
    }

    /// The powers of ten from `lo` to `hi`.
    pub fn decades(&self) -> Vec<f64> {
        let (a, b) = (
            self.lo.log10().round() as i32,
            self.hi.log10().round() as i32,
        );
        (a..=b).map(|e| 10f64.powi(e)).collect()
    }

    /// 2..9 times each decade, inside the axis.
    pub fn minor(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for d in self.decades() {
            for m in 2..10 {
                let v = d * f64::from(m);
                if v < self.hi {
                    out.push(v);
                }
            }
        }
        out
    }
}

/// A tick label: 0.001 ... 10000 written out, beyond that 1e5, 1e-4.
pub fn tick_label(v: f64) -> String {
    let e = v.log10().round() as i32;
    match e {
        0..=4 => format!("{}", 10u64.pow(e as u32)),
        -3..=-1 => format!("{:.*}", (-e) as usize, v),
        _ => format!("1e{e}"),
    }
}

/// Three significant digits: 1234 -> "1230", 12.34 -> "12.3", 0.01234 -> "0.0123".
pub fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 2 - v.abs().log10().floor() as i32;
    if digits <= 0 {
        let p = 10f64.powi(-digits);
        format!("{}", ((v / p).round() * p) as i64)
    } else {
        format!("{:.*}", digits as usize, v)
    }
}

/// The plot frame and its two axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plane {
    pub frame: Rect,
    /// Arithmetic intensity, FLOP/byte.
    pub x: LogAxis,
    /// GFLOP/s.
    pub y: LogAxis,
}

impl Plane {
    /// The pixel of (`ai` FLOP/byte, `gflops` GFLOP/s).
    pub fn px(&self, ai: f64, gflops: f64) -> (f64, f64) {
        (
            self.frame.x + self.frame.w * self.x.frac(ai),
            self.frame.y + self.frame.h * (1.0 - self.y.frac(gflops)),
        )
    }

    pub fn contains(&self, ai: f64, gflops: f64) -> bool {
        self.x.contains(ai) && self.y.contains(gflops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_cover_whole_decades() {
        let a = LogAxis::covering(&[0.03, 7.0], 2, (1.0, 10.0));
        assert_eq!((a.lo, a.hi), (0.01, 10.0));
        let a = LogAxis::covering(&[2.0, 3.0], 2, (1.0, 10.0));
        assert_eq!((a.lo, a.hi), (1.0, 100.0));
        assert_eq!(a.decades(), [1.0, 10.0, 100.0]);
        assert_eq!(LogAxis::covering(&[], 2, (0.1, 10.0)).lo, 0.1);
    }

    #[test]
    fn pixels_follow_the_log_scale() {
        let p = Plane {
            frame: Rect {
                x: 100.0,
                y: 50.0,
                w: 400.0,
                h: 200.0,
            },
            x: LogAxis {
                lo: 0.01,
                hi: 100.0,
            },
            y: LogAxis { lo: 1.0, hi: 100.0 },
        };
        assert_eq!(p.px(0.01, 100.0), (100.0, 50.0));
        let (x, y) = p.px(1.0, 10.0);
        assert!((x - 300.0).abs() < 1e-9 && (y - 150.0).abs() < 1e-9);
    }

    #[test]
    fn labels_and_digits() {
        assert_eq!(tick_label(0.01), "0.01");
        assert_eq!(tick_label(1000.0), "1000");
        assert_eq!(tick_label(1e6), "1e6");
        assert_eq!(sig3(1234.0), "1230");
        assert_eq!(sig3(12.34), "12.3");
        assert_eq!(sig3(0.012345), "0.0123");
    }

    #[test]
    fn segments_cross_rectangles() {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w: 10.0,
            h: 10.0,
        };
        assert!(r.crosses((-5.0, 5.0), (15.0, 5.0)));
        assert!(!r.crosses((-5.0, 15.0), (15.0, 12.0)));
        assert!(r.crosses((2.0, 2.0), (3.0, 3.0)));
    }
}
