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

/// A convex quadrilateral in pixels: a [`Rect`] turned about a point (the
/// box of a label written along a bandwidth roof). Corners in order around
/// it; y grows downwards.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quad(pub [(f64, f64); 4]);

impl From<Rect> for Quad {
    fn from(r: Rect) -> Quad {
        Quad([
            (r.x, r.y),
            (r.right(), r.y),
            (r.right(), r.bottom()),
            (r.x, r.bottom()),
        ])
    }
}

/// Twice the signed area of the triangle a, b, c: positive when c lies left
/// of a -> b as the picture shows it (y down: clockwise on paper).
fn cross(a: (f64, f64), b: (f64, f64), c: (f64, f64)) -> f64 {
    (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
}

/// Area of a polygon (shoelace).
fn area(p: &[(f64, f64)]) -> f64 {
    let n = p.len();
    (0..n)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % n]);
            a.0 * b.1 - b.0 * a.1
        })
        .sum::<f64>()
        .abs()
        / 2.0
}

impl Quad {
    /// `r` turned `degrees` counterclockwise as seen (text rising to the
    /// right for a positive angle) about `about`.
    pub fn turned(r: &Rect, degrees: f64, about: (f64, f64)) -> Quad {
        if degrees == 0.0 {
            return Quad::from(*r);
        }
        let (sin, cos) = degrees.to_radians().sin_cos();
        let Quad(mut c) = Quad::from(*r);
        for p in &mut c {
            let (dx, dy) = (p.0 - about.0, p.1 - about.1);
            // Counterclockwise on the screen is clockwise in y-down coordinates.
            *p = (about.0 + dx * cos + dy * sin, about.1 - dx * sin + dy * cos);
        }
        Quad(c)
    }

    /// The smallest upright rectangle holding it.
    pub fn bounds(&self) -> Rect {
        let xs = self.0.map(|p| p.0);
        let ys = self.0.map(|p| p.1);
        let (x0, x1) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (y0, y1) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        Rect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        }
    }

    /// Whether every corner lies inside `r`.
    pub fn inside(&self, r: &Rect) -> bool {
        self.0
            .iter()
            .all(|p| p.0 >= r.x && p.0 <= r.right() && p.1 >= r.y && p.1 <= r.bottom())
    }

    /// +1 or -1: the side of each edge its inside lies on (see [`cross`]).
    fn orientation(&self) -> f64 {
        let c = &self.0;
        if cross(c[0], c[1], c[2]) >= 0.0 {
            1.0
        } else {
            -1.0
        }
    }

    /// Area shared with `o` (0 when they only touch): `self` clipped by
    /// each edge of `o` (Sutherland-Hodgman), both convex.
    pub fn overlap(&self, o: &Quad) -> f64 {
        if self.bounds().overlap(&o.bounds()) == 0.0 {
            return 0.0;
        }
        let side = o.orientation();
        let mut poly: Vec<(f64, f64)> = self.0.to_vec();
        for i in 0..4 {
            let (a, b) = (o.0[i], o.0[(i + 1) % 4]);
            let inside = |p: (f64, f64)| side * cross(a, b, p);
            let mut next = Vec::with_capacity(poly.len() + 1);
            for j in 0..poly.len() {
                let (p, q) = (poly[j], poly[(j + 1) % poly.len()]);
                let (dp, dq) = (inside(p), inside(q));
                if dp >= 0.0 {
                    next.push(p);
                }
                if (dp >= 0.0) != (dq >= 0.0) {
                    let t = dp / (dp - dq);
                    next.push((p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1)));
                }
            }
            poly = next;
            if poly.len() < 3 {
                return 0.0;
            }
        }
        area(&poly)
    }

    /// Whether the segment a-b touches the quadrilateral (Cyrus-Beck: the
    /// segment clipped to each edge's inside).
    pub fn crosses(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let side = self.orientation();
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for i in 0..4 {
            let (p, q) = (self.0[i], self.0[(i + 1) % 4]);
            // Inside where side * cross(p, q, x) >= 0, linear along a-b.
            let fa = side * cross(p, q, a);
            let fb = side * cross(p, q, b);
            if fa < 0.0 && fb < 0.0 {
                return false;
            }
            if fa < 0.0 {
                t0 = t0.max(fa / (fa - fb));
            } else if fb < 0.0 {
                t1 = t1.min(fa / (fa - fb));
            }
            if t0 > t1 {
                return false;
            }
        }
        true
    }

    /// The point of the quadrilateral (its inside included) nearest to `p`.
    pub fn nearest(&self, p: (f64, f64)) -> (f64, f64) {
        let side = self.orientation();
        if (0..4).all(|i| side * cross(self.0[i], self.0[(i + 1) % 4], p) >= 0.0) {
            return p;
        }
        (0..4)
            .map(|i| {
                let (a, b) = (self.0[i], self.0[(i + 1) % 4]);
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let len2 = dx * dx + dy * dy;
                let t = if len2 > 0.0 {
                    (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                (a.0 + t * dx, a.1 + t * dy)
            })
            .min_by(|m, n| {
                let d = |q: &(f64, f64)| (q.0 - p.0).hypot(q.1 - p.1);
                d(m).total_cmp(&d(n))
            })
            .unwrap_or(p)
    }

    /// Distance from `p` to the quadrilateral (0 inside it).
    pub fn distance(&self, p: (f64, f64)) -> f64 {
        let q = self.nearest(p);
        (q.0 - p.0).hypot(q.1 - p.1)
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
    fn turned_rectangles_overlap_by_their_true_area() {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w: 10.0,
            h: 10.0,
        };
        // A square turned 45 degrees about its centre keeps its area and
        // covers the upright one but for four corner triangles.
        let d = Quad::turned(&r, 45.0, (5.0, 5.0));
        assert!((d.overlap(&d) - 100.0).abs() < 1e-9);
        let corners = 4.0 * (10.0 - 50f64.sqrt()).powi(2) / 2.0;
        assert!((d.overlap(&Quad::from(r)) - (100.0 - corners)).abs() < 1e-9);
        assert!((Quad::from(r).overlap(&d) - (100.0 - corners)).abs() < 1e-9);
        // Upright rectangles agree with Rect::overlap, touching is no overlap.
        let s = Rect { x: 5.0, ..r };
        assert!((Quad::from(r).overlap(&Quad::from(s)) - 50.0).abs() < 1e-9);
        let t = Rect { x: 10.0, ..r };
        assert_eq!(Quad::from(r).overlap(&Quad::from(t)), 0.0);
        // Two long thin boxes side by side along a diagonal: their upright
        // bounds overlap, they do not.
        let a = Rect {
            x: 0.0,
            y: 0.0,
            w: 100.0,
            h: 10.0,
        };
        let b = Rect { y: 12.0, ..a };
        let (qa, qb) = (
            Quad::turned(&a, 30.0, (50.0, 11.0)),
            Quad::turned(&b, 30.0, (50.0, 11.0)),
        );
        assert!(qa.bounds().overlap(&qb.bounds()) > 0.0);
        assert_eq!(qa.overlap(&qb), 0.0);
    }

    #[test]
    fn turning_counterclockwise_raises_the_right_end() {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w: 10.0,
            h: 2.0,
        };
        let q = Quad::turned(&r, 30.0, (0.0, 0.0));
        let (x, y) = q.0[1];
        assert!((x - 30f64.to_radians().cos() * 10.0).abs() < 1e-9);
        assert!((y + 5.0).abs() < 1e-9, "{y}");
    }

    #[test]
    fn segments_cross_turned_rectangles() {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w: 20.0,
            h: 4.0,
        };
        let q = Quad::turned(&r, 45.0, (10.0, 2.0));
        // Along its middle, and across it.
        assert!(q.crosses((0.0, 12.0), (20.0, -8.0)));
        assert!(q.crosses((0.0, -8.0), (20.0, 12.0)));
        // Parallel to it, a little off its side; and short of it.
        assert!(!q.crosses((4.0, 12.0), (24.0, -8.0)));
        assert!(!q.crosses((-10.0, -8.0), (2.0, -8.0)));
        // Upright: as Rect::crosses.
        let u = Quad::from(r);
        assert!(u.crosses((-5.0, 2.0), (25.0, 2.0)));
        assert!(!u.crosses((-5.0, 5.0), (25.0, 6.0)));
        assert!(u.crosses((2.0, 1.0), (3.0, 2.0)));
        assert_eq!(q.distance((10.0, 2.0)), 0.0);
        assert!((u.distance((10.0, 9.0)) - 5.0).abs() < 1e-9);
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
