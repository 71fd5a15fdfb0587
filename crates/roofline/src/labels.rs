//! Label placement without overlaps: each label tries its candidate boxes
//! (upright, or turned along a bandwidth roof) in order and takes the first
//! that stays inside the bounds and clear of every label placed before it
//! and every obstacle (markers); among those, the one crossing the fewest
//! lines, then the nearest. Boxes are compared as the turned rectangles
//! they are ([`Quad`]), not by their upright bounds. A label whose candidates all
//! collide takes the one with the least overlap and says so, unless it
//! is optional ([`place_optional`]: the labels of a crowd of loop dots),
//! in which case it is left out: placed labels then never overlap.

use crate::scale::{Quad, Rect};

/// Where a label may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The box before it is turned.
    pub rect: Rect,
    /// Degrees the box (and its text) is turned counterclockwise about its
    /// centre: 0, or the slope of the roof it runs along.
    pub angle: f64,
    /// Draw a leader line from this point (the marker) to the box.
    pub leader_from: Option<(f64, f64)>,
}

impl Candidate {
    /// An upright box.
    pub fn upright(rect: Rect, leader_from: Option<(f64, f64)>) -> Candidate {
        Candidate {
            rect,
            angle: 0.0,
            leader_from,
        }
    }

    /// The box as it lies on the chart.
    pub fn shape(&self) -> Quad {
        turned(&self.rect, self.angle, 0.0)
    }
}

/// `r` grown by `pad` on every side and turned `angle` degrees about its centre.
fn turned(r: &Rect, angle: f64, pad: f64) -> Quad {
    Quad::turned(&r.inflate(pad), angle, (r.x + r.w / 2.0, r.y + r.h / 2.0))
}

/// A placed label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// The box before it is turned.
    pub rect: Rect,
    /// Degrees turned counterclockwise about the box's centre.
    pub angle: f64,
    /// Leader line from the marker to the nearest point of the box.
    pub leader: Option<((f64, f64), (f64, f64))>,
    /// No candidate was free: this one overlaps something.
    pub overlaps: bool,
}

impl Placed {
    /// The box as it lies on the chart.
    pub fn shape(&self) -> Quad {
        turned(&self.rect, self.angle, 0.0)
    }

    /// Where a point `(dx, dy)` from the box's top-left corner (before
    /// turning) lies on the chart: the start of its text.
    pub fn at(&self, dx: f64, dy: f64) -> (f64, f64) {
        let r = Rect {
            x: self.rect.x + dx,
            y: self.rect.y + dy,
            w: 0.0,
            h: 0.0,
        };
        let c = (
            self.rect.x + self.rect.w / 2.0,
            self.rect.y + self.rect.h / 2.0,
        );
        Quad::turned(&r, self.angle, c).0[0]
    }
}

/// Space kept between labels.
const PAD: f64 = 2.0;

/// A line segment between two pixels.
pub type Segment = ((f64, f64), (f64, f64));

/// Places labels in order, each from its candidates (see the module docs).
/// `obstacles` are kept clear of; `lines` are avoided when possible.
pub fn place(
    requests: &[Vec<Candidate>],
    obstacles: &[Rect],
    lines: &[Segment],
    bounds: Rect,
) -> Vec<Placed> {
    place_optional(requests, &[], obstacles, lines, bounds)
        .into_iter()
        .flatten()
        .collect()
}

/// As [`place`], one answer per request: a request marked `optional`
/// whose candidates all collide gets `None` instead of an overlapping box
/// (requests beyond `optional`'s length are not optional).
pub fn place_optional(
    requests: &[Vec<Candidate>],
    optional: &[bool],
    obstacles: &[Rect],
    lines: &[Segment],
    bounds: Rect,
) -> Vec<Option<Placed>> {
    let mut taken: Vec<Quad> = obstacles.iter().map(|o| Quad::from(*o)).collect();
    // Labels and leader lines placed so far: a new leader should not run
    // through a label, nor a new label over a leader.
    let mut labels: Vec<Quad> = Vec::new();
    let mut leaders: Vec<Segment> = Vec::new();
    let mut out = Vec::with_capacity(requests.len());
    for (i, candidates) in requests.iter().enumerate() {
        let may_drop = optional.get(i).copied().unwrap_or(false);
        let overlap = |c: &Candidate| -> f64 {
            let padded = turned(&c.rect, c.angle, PAD);
            taken.iter().map(|t| padded.overlap(t)).sum()
        };
        let tangles = |c: &Candidate| {
            let shape = c.shape();
            let over_leaders = leaders
                .iter()
                .filter(|(a, b)| shape.crosses(*a, *b))
                .count();
            let through_labels = c.leader_from.map_or(0, |p| {
                let q = shape.nearest(p);
                labels.iter().filter(|l| l.crosses(p, q)).count()
            });
            over_leaders + through_labels
        };
        let crossings = |c: &Candidate| {
            let shape = c.shape();
            lines.iter().filter(|(a, b)| shape.crosses(*a, *b)).count() + tangles(c)
        };
        // Clear of lines first (a label across a roof hides where the
        // roof is), then near. An optional label is left out rather than
        // tangled with another's leader.
        let free = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.shape().inside(&bounds) && overlap(c) == 0.0)
            .filter(|(_, c)| !may_drop || tangles(c) == 0)
            .min_by_key(|(i, c)| (crossings(c), i / 8))
            .map(|(_, c)| (*c, false));
        let chosen = free.or_else(|| {
            if may_drop {
                return None;
            }
            candidates
                .iter()
                .filter(|c| c.shape().inside(&bounds))
                .chain(candidates.iter())
                .min_by(|a, b| overlap(a).total_cmp(&overlap(b)))
                .map(|c| (*c, true))
        });
        let Some((c, overlaps)) = chosen else {
            out.push(None);
            continue;
        };
        let shape = c.shape();
        taken.push(shape);
        labels.push(shape);
        let leader = c.leader_from.map(|p| (p, shape.nearest(p)));
        leaders.extend(leader);
        out.push(Some(Placed {
            rect: c.rect,
            angle: c.angle,
            leader,
            overlaps,
        }));
    }
    out
}

/// Candidate boxes of size `w` x `h` around a marker at `p` of radius `r`:
/// eight directions at growing distances, the nearest first, then east and
/// west a little lower and higher; the far ones carry a leader line.
pub fn around(p: (f64, f64), r: f64, w: f64, h: f64) -> Vec<Candidate> {
    rings(p, r, w, h, &[3.0, 14.0, 28.0, 46.0, 70.0, 100.0, 140.0])
}

/// As [`around`], reaching further, with eight more directions on the far
/// rings: for a crowd of loop dots, where the near places run out.
pub fn around_far(p: (f64, f64), r: f64, w: f64, h: f64) -> Vec<Candidate> {
    let mut out = rings(
        p,
        r,
        w,
        h,
        &[3.0, 14.0, 28.0, 46.0, 70.0, 100.0, 140.0, 190.0, 250.0],
    );
    for gap in [46.0, 70.0, 100.0, 140.0, 190.0, 250.0] {
        let d = r + gap;
        for k in 0..8 {
            // Halfway between the eight directions.
            let a = std::f64::consts::PI / 8.0 * f64::from(2 * k + 1);
            let (cx, cy) = (p.0 + d * a.cos(), p.1 - d * a.sin());
            let x = if a.cos() >= 0.0 { cx } else { cx - w };
            let y = if a.sin() >= 0.0 { cy - h } else { cy };
            out.push(Candidate::upright(Rect { x, y, w, h }, Some(p)));
        }
    }
    out
}

fn rings(p: (f64, f64), r: f64, w: f64, h: f64, gaps: &[f64]) -> Vec<Candidate> {
    let mut out = Vec::new();
    // East and west a third of a box lower and higher, after all the
    // others: beside a marker just under a roof, where the others are
    // across the roof or taken.
    let mut shifted = Vec::new();
    for (ring, gap) in gaps.iter().copied().enumerate() {
        let d = r + gap;
        let (x, y) = p;
        let boxes = [
            (x + d, y - h / 2.0),               // E
            (x + d * 0.7, y - d * 0.7 - h),     // NE
            (x - w / 2.0, y - d - h),           // N
            (x - d * 0.7 - w, y - d * 0.7 - h), // NW
            (x - d - w, y - h / 2.0),           // W
            (x - d * 0.7 - w, y + d * 0.7),     // SW
            (x - w / 2.0, y + d),               // S
            (x + d * 0.7, y + d * 0.7),         // SE
        ];
        let leader = (ring > 0).then_some(p);
        for (bx, by) in boxes {
            out.push(Candidate::upright(Rect { x: bx, y: by, w, h }, leader));
        }
        for (bx, by) in [
            (x + d, y - h / 6.0),
            (x + d, y - h * 5.0 / 6.0),
            (x - d - w, y - h / 6.0),
            (x - d - w, y - h * 5.0 / 6.0),
        ] {
            shifted.push(Candidate::upright(Rect { x: bx, y: by, w, h }, leader));
        }
    }
    out.extend(shifted);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crowd_of_labels_never_overlaps() {
        let bounds = Rect {
            x: 0.0,
            y: 0.0,
            w: 800.0,
            h: 500.0,
        };
        // Twelve markers within a few pixels of each other.
        let markers: Vec<(f64, f64)> = (0..12)
            .map(|i| (400.0 + (i % 4) as f64 * 3.0, 250.0 + (i / 4) as f64 * 3.0))
            .collect();
        let obstacles: Vec<Rect> = markers
            .iter()
            .map(|(x, y)| Rect {
                x: x - 5.0,
                y: y - 5.0,
                w: 10.0,
                h: 10.0,
            })
            .collect();
        let requests: Vec<_> = markers
            .iter()
            .map(|p| around(*p, 5.0, 90.0, 14.0))
            .collect();
        let placed = place(&requests, &obstacles, &[], bounds);
        assert_eq!(placed.len(), 12);
        for (i, a) in placed.iter().enumerate() {
            assert!(!a.overlaps);
            assert!(bounds.contains(&a.rect));
            for o in &obstacles {
                assert_eq!(a.rect.overlap(o), 0.0);
            }
            for b in &placed[i + 1..] {
                assert_eq!(a.rect.overlap(&b.rect), 0.0, "{a:?} {b:?}");
            }
        }
    }

    /// Whether a rectangle and a disc share any point.
    fn touches_disc(r: &Rect, c: (f64, f64), radius: f64) -> bool {
        let (nx, ny) = r.nearest(c);
        (nx - c.0).hypot(ny - c.1) < radius
    }

    #[test]
    fn optional_labels_of_a_crowd_of_dots_never_cover_a_dot_or_a_label() {
        let bounds = Rect {
            x: 0.0,
            y: 0.0,
            w: 600.0,
            h: 360.0,
        };
        // Forty dots of radius 3 to 16 on a 8 x 5 grid 24 pixels apart:
        // more labels than there is room for.
        let dots: Vec<((f64, f64), f64)> = (0..40)
            .map(|i| {
                let p = (200.0 + (i % 8) as f64 * 24.0, 120.0 + (i / 8) as f64 * 24.0);
                (p, 3.0 + (i * 7 % 14) as f64)
            })
            .collect();
        let obstacles: Vec<Rect> = dots
            .iter()
            .map(|((x, y), r)| Rect {
                x: x - r - 1.0,
                y: y - r - 1.0,
                w: 2.0 * r + 2.0,
                h: 2.0 * r + 2.0,
            })
            .collect();
        let requests: Vec<_> = dots
            .iter()
            .map(|(p, r)| around_far(*p, *r, 110.0, 16.0))
            .collect();
        let placed = place_optional(&requests, &[true; 40], &obstacles, &[], bounds);
        assert_eq!(placed.len(), 40);
        let shown: Vec<&Placed> = placed.iter().flatten().collect();
        assert!(shown.len() >= 15, "only {} labels placed", shown.len());
        for (i, a) in shown.iter().enumerate() {
            assert!(!a.overlaps);
            assert!(bounds.contains(&a.rect));
            for (c, r) in &dots {
                assert!(
                    !touches_disc(&a.rect, *c, *r),
                    "{a:?} covers the dot at {c:?}"
                );
            }
            for b in &shown[i + 1..] {
                assert_eq!(a.rect.overlap(&b.rect), 0.0, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn turned_labels_are_kept_apart_as_turned_boxes() {
        let bounds = Rect {
            x: 0.0,
            y: 0.0,
            w: 400.0,
            h: 400.0,
        };
        // Two labels along a roof rising at 35 degrees, one box apart
        // across it: their upright bounds overlap, they do not, and both
        // stay where they were asked to go.
        // `across` pixels from the first, down-right across the roof.
        let turned = |across: f64| {
            let (sin, cos) = 35f64.to_radians().sin_cos();
            Candidate {
                rect: Rect {
                    x: 100.0 + across * sin,
                    y: 200.0 + across * cos,
                    w: 150.0,
                    h: 18.0,
                },
                angle: 35.0,
                leader_from: None,
            }
        };
        let (a, b) = (turned(0.0), turned(22.0));
        assert!(a.shape().bounds().overlap(&b.shape().bounds()) > 0.0);
        let placed = place(&[vec![a], vec![b]], &[], &[], bounds);
        assert!(placed.iter().all(|p| !p.overlaps));
        assert_eq!((placed[0].rect, placed[1].rect), (a.rect, b.rect));
        // A third on top of the first is not free.
        let placed = place(&[vec![a], vec![turned(10.0)]], &[], &[], bounds);
        assert!(placed[1].overlaps);
        // Nor is one whose turned box, not its upright one, leaves the bounds.
        let corner = Candidate {
            rect: Rect {
                x: 2.0,
                y: 380.0,
                w: 150.0,
                h: 18.0,
            },
            ..a
        };
        assert!(bounds.contains(&corner.rect));
        assert!(!corner.shape().inside(&bounds));
    }

    #[test]
    fn labels_avoid_lines_when_they_can() {
        let bounds = Rect {
            x: 0.0,
            y: 0.0,
            w: 400.0,
            h: 400.0,
        };
        // A horizontal line right through the east candidate.
        let line = ((0.0, 200.0), (400.0, 200.0));
        let placed = place(
            &[around((200.0, 200.0), 4.0, 40.0, 12.0)],
            &[],
            &[line],
            bounds,
        );
        assert!(!placed[0].rect.crosses(line.0, line.1));
    }
}
