//! Label placement without overlaps: each label tries its candidate boxes
//! in order and takes the first that stays inside the bounds and clear of
//! every label placed before it and every obstacle (markers); among those,
//! the one crossing the fewest lines, then the nearest. A label whose candidates all
//! collide takes the one with the least overlap and says so, unless it
//! is optional ([`place_optional`]: the labels of a crowd of loop dots),
//! in which case it is left out: placed labels then never overlap.

use crate::scale::Rect;

/// Where a label may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub rect: Rect,
    /// Draw a leader line from this point (the marker) to the box.
    pub leader_from: Option<(f64, f64)>,
}

/// A placed label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub rect: Rect,
    /// Leader line from the marker to the nearest point of the box.
    pub leader: Option<((f64, f64), (f64, f64))>,
    /// No candidate was free: this one overlaps something.
    pub overlaps: bool,
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
    let mut taken: Vec<Rect> = obstacles.to_vec();
    // Labels and leader lines placed so far: a new leader should not run
    // through a label, nor a new label over a leader.
    let mut labels: Vec<Rect> = Vec::new();
    let mut leaders: Vec<Segment> = Vec::new();
    let mut out = Vec::with_capacity(requests.len());
    for (i, candidates) in requests.iter().enumerate() {
        let may_drop = optional.get(i).copied().unwrap_or(false);
        let overlap = |r: &Rect| -> f64 { taken.iter().map(|t| r.inflate(PAD).overlap(t)).sum() };
        let tangles = |c: &Candidate| {
            let over_leaders = leaders
                .iter()
                .filter(|(a, b)| c.rect.crosses(*a, *b))
                .count();
            let through_labels = c.leader_from.map_or(0, |p| {
                let q = c.rect.nearest(p);
                labels.iter().filter(|l| l.crosses(p, q)).count()
            });
            over_leaders + through_labels
        };
        let crossings = |c: &Candidate| {
            lines.iter().filter(|(a, b)| c.rect.crosses(*a, *b)).count() + tangles(c)
        };
        // Clear of lines first (a label across a roof hides where the
        // roof is), then near. An optional label is left out rather than
        // tangled with another's leader.
        let free = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| bounds.contains(&c.rect) && overlap(&c.rect) == 0.0)
            .filter(|(_, c)| !may_drop || tangles(c) == 0)
            .min_by_key(|(i, c)| (crossings(c), i / 8))
            .map(|(_, c)| (*c, false));
        let chosen = free.or_else(|| {
            if may_drop {
                return None;
            }
            candidates
                .iter()
                .filter(|c| bounds.contains(&c.rect))
                .chain(candidates.iter())
                .min_by(|a, b| overlap(&a.rect).total_cmp(&overlap(&b.rect)))
                .map(|c| (*c, true))
        });
        let Some((c, overlaps)) = chosen else {
            out.push(None);
            continue;
        };
        taken.push(c.rect);
        labels.push(c.rect);
        let leader = c.leader_from.map(|p| (p, c.rect.nearest(p)));
        leaders.extend(leader);
        out.push(Some(Placed {
            rect: c.rect,
            leader,
            overlaps,
        }));
    }
    out
}

/// Candidate boxes of size `w` x `h` around a marker at `p` of radius `r`:
/// eight directions at growing distances, the nearest first; the far ones
/// carry a leader line.
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
            out.push(Candidate {
                rect: Rect { x, y, w, h },
                leader_from: Some(p),
            });
        }
    }
    out
}

fn rings(p: (f64, f64), r: f64, w: f64, h: f64, gaps: &[f64]) -> Vec<Candidate> {
    let mut out = Vec::new();
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
        for (bx, by) in boxes {
            out.push(Candidate {
                rect: Rect { x: bx, y: by, w, h },
                leader_from: (ring > 0).then_some(p),
            });
        }
    }
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
