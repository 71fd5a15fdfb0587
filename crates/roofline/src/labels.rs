//! Label placement without overlaps: each label tries its candidate boxes
//! in order and takes the first that stays inside the bounds and clear of
//! every label placed before it and every obstacle (markers); among those,
//! one that no line crosses is preferred. A label whose candidates all
//! collide takes the one with the least overlap and says so.

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
    let mut taken: Vec<Rect> = obstacles.to_vec();
    let mut out = Vec::with_capacity(requests.len());
    for candidates in requests {
        let overlap = |r: &Rect| -> f64 { taken.iter().map(|t| r.inflate(PAD).overlap(t)).sum() };
        let crossings = |r: &Rect| lines.iter().filter(|(a, b)| r.crosses(*a, *b)).count();
        // Near and clear of lines first: a crossed line costs as much as
        // moving three rings (24 candidates) further out.
        let free = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| bounds.contains(&c.rect) && overlap(&c.rect) == 0.0)
            .min_by_key(|(i, c)| i / 8 + 3 * crossings(&c.rect))
            .map(|(_, c)| (*c, false));
        let chosen = free.or_else(|| {
            candidates
                .iter()
                .filter(|c| bounds.contains(&c.rect))
                .chain(candidates.iter())
                .min_by(|a, b| overlap(&a.rect).total_cmp(&overlap(&b.rect)))
                .map(|c| (*c, true))
        });
        let Some((c, overlaps)) = chosen else {
            continue;
        };
        taken.push(c.rect);
        let leader = c.leader_from.map(|p| (p, c.rect.nearest(p)));
        out.push(Placed {
            rect: c.rect,
            leader,
            overlaps,
        });
    }
    out
}

/// Candidate boxes of size `w` x `h` around a marker at `p` of radius `r`:
/// eight directions at growing distances, the nearest first; the far ones
/// carry a leader line.
pub fn around(p: (f64, f64), r: f64, w: f64, h: f64) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (ring, gap) in [3.0, 14.0, 28.0, 46.0, 70.0, 100.0, 140.0]
        .into_iter()
        .enumerate()
    {
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
