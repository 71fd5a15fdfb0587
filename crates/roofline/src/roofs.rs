//! The roofs of a machine as line segments of the chart, and the attainable
//! performance under them.

use crate::palette::{self, Rgb};
use crate::scale::{sig3, LogAxis};
use flopscope_model::{BandwidthCeiling, Ceilings, ComputeCeiling};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoofKind {
    /// A horizontal roof: a peak FLOP rate.
    Compute,
    /// A diagonal roof: GFLOP/s = bandwidth x intensity.
    Bandwidth,
}

/// One roof, clipped to the chart's axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub kind: RoofKind,
    /// What the chart writes beside it.
    pub label: String,
    /// Measured by a benchmark (drawn solid) or from the data sheet (dashed).
    pub measured: bool,
    pub color: Rgb,
    /// GFLOP/s of a compute roof, GB/s of a bandwidth roof.
    pub value: f64,
    /// Ends in data coordinates (FLOP/byte, GFLOP/s).
    pub from: (f64, f64),
    pub to: (f64, f64),
}

fn source_word(measured: bool) -> &'static str {
    if measured {
        "measured"
    } else {
        "theoretical"
    }
}

/// A compute roof's name without the word saying where it comes from
/// (machine records name theirs "fp64 AVX/AVX2, theoretical"): labels
/// say that once, at their end.
pub fn short_name(c: &ComputeCeiling) -> &str {
    let mut name = c.name.trim();
    for suffix in [
        ", theoretical",
        ", measured",
        " (theoretical)",
        " (measured)",
    ] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    name
}

/// "fp64 AVX2 FMA (theoretical)".
pub fn compute_name(c: &ComputeCeiling) -> String {
    format!("{} ({})", short_name(c), source_word(c.measured))
}

/// Whether a compute roof is a vector one (wider than one element).
pub fn is_vector(c: &ComputeCeiling) -> bool {
    let element = match c.precision.as_str() {
        "fp64" => 64,
        "fp32" => 32,
        _ => 16,
    };
    c.width_bits > element
}

/// The roofs a chart draws, and the compute roofs it leaves out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Per precision drawn, its highest measured roof then its highest
    /// theoretical one (each where there is one).
    pub compute: Vec<ComputeCeiling>,
    /// One per memory level, L1 to DRAM: measured first, else the highest.
    pub bandwidth: Vec<BandwidthCeiling>,
    /// The other compute roofs of the precisions drawn.
    pub not_drawn: Vec<ComputeCeiling>,
}

const PRECISIONS: [&str; 4] = ["fp64", "fp32", "fp16", "bf16"];

fn level_rank(level: &str) -> usize {
    match level.to_ascii_uppercase().as_str() {
        "L1" => 0,
        "L2" => 1,
        "L3" => 2,
        "DRAM" | "MEM" | "MEMORY" => 3,
        _ => 4,
    }
}

/// The roofs that matter for points of `precisions` (those with FLOP of
/// them): one solid (measured) and one dashed (theoretical) compute roof
/// per precision, not one per ISA, and every memory level's bandwidth.
/// Without any precision (nothing plotted), those of fp64, else of the
/// precision of the highest roof.
pub fn select(ceilings: &Ceilings, precisions: &[String]) -> Selection {
    let usable: Vec<&ComputeCeiling> = ceilings.compute.iter().filter(|c| c.gflops > 0.0).collect();
    let mut wanted: Vec<String> = PRECISIONS
        .iter()
        .filter(|p| precisions.iter().any(|q| q == *p))
        .map(|p| p.to_string())
        .collect();
    if !wanted
        .iter()
        .any(|p| usable.iter().any(|c| c.precision == *p))
    {
        let fallback = if usable.iter().any(|c| c.precision == "fp64") {
            Some("fp64".to_string())
        } else {
            usable
                .iter()
                .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
                .map(|c| c.precision.clone())
        };
        wanted.extend(fallback);
    }
    let mut sel = Selection::default();
    for p in &wanted {
        for measured in [true, false] {
            let best = usable
                .iter()
                .filter(|c| c.precision == *p && c.measured == measured)
                .max_by(|a, b| a.gflops.total_cmp(&b.gflops));
            sel.compute.extend(best.map(|c| (*c).clone()));
        }
        let mut rest: Vec<ComputeCeiling> = usable
            .iter()
            .filter(|c| c.precision == *p && !sel.compute.contains(c))
            .map(|c| (*c).clone())
            .collect();
        rest.sort_by(|a, b| b.gflops.total_cmp(&a.gflops));
        sel.not_drawn.extend(rest);
    }
    let mut levels: Vec<&BandwidthCeiling> = ceilings
        .bandwidth
        .iter()
        .filter(|b| b.gbytes_per_s > 0.0)
        .collect();
    levels.sort_by_key(|b| level_rank(&b.level));
    for b in levels {
        if !sel
            .bandwidth
            .iter()
            .any(|s| s.level.eq_ignore_ascii_case(&b.level))
        {
            sel.bandwidth
                .extend(bandwidth_roof(ceilings, &b.level).cloned());
        }
    }
    sel
}

/// The roofs of `sel` that cross the axes, compute roofs first.
pub fn roofs(sel: &Selection, x: LogAxis, y: LogAxis) -> Vec<Roof> {
    let max_bw = sel
        .bandwidth
        .iter()
        .map(|b| b.gbytes_per_s)
        .fold(0.0, f64::max);
    let max_peak = sel.compute.iter().map(|c| c.gflops).fold(0.0, f64::max);
    let mut out = Vec::new();
    for c in sel.compute.iter().filter(|c| y.contains(c.gflops)) {
        let start = if max_bw > 0.0 {
            (c.gflops / max_bw).max(x.lo)
        } else {
            x.lo
        };
        if start >= x.hi {
            continue;
        }
        out.push(Roof {
            kind: RoofKind::Compute,
            label: format!(
                "{}: {} GFLOP/s ({})",
                short_name(c),
                sig3(c.gflops),
                source_word(c.measured)
            ),
            measured: c.measured,
            color: palette::compute(&c.precision, is_vector(c), usize::from(!c.measured)),
            value: c.gflops,
            from: (start, c.gflops),
            to: (x.hi, c.gflops),
        });
    }
    for b in &sel.bandwidth {
        let bw = b.gbytes_per_s;
        let top = if max_peak > 0.0 {
            max_peak.min(y.hi)
        } else {
            y.hi
        };
        let start = (y.lo / bw).max(x.lo);
        let end = (top / bw).min(x.hi);
        if start >= end {
            continue;
        }
        out.push(Roof {
            kind: RoofKind::Bandwidth,
            label: format!(
                "{} {} GB/s ({})",
                b.level,
                sig3(bw),
                source_word(b.measured)
            ),
            measured: b.measured,
            color: palette::bandwidth(&b.level),
            value: bw,
            from: (start, start * bw),
            to: (end, end * bw),
        });
    }
    out
}

/// The compute roof a point of `precision` is held to: the best of that
/// precision (measured first), else the best fp64 one, else the highest.
pub fn compute_roof<'a>(c: &'a Ceilings, precision: &str) -> Option<&'a ComputeCeiling> {
    c.best_compute(precision)
        .or_else(|| c.best_compute("fp64"))
        .or_else(|| {
            c.compute
                .iter()
                .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
        })
}

/// The bandwidth roof of a memory level (`L1`, `DRAM`): measured first, then the highest.
pub fn bandwidth_roof<'a>(c: &'a Ceilings, level: &str) -> Option<&'a BandwidthCeiling> {
    let of = |measured: bool| {
        c.bandwidth
            .iter()
            .filter(|b| b.level.eq_ignore_ascii_case(level) && b.measured == measured)
            .max_by(|a, b| a.gbytes_per_s.total_cmp(&b.gbytes_per_s))
    };
    of(true).or_else(|| of(false))
}

/// What a point can attain at its intensity under the roofs of one memory level.
#[derive(Debug, Clone, PartialEq)]
pub struct Attainable {
    /// `L1` or `DRAM`: whose traffic the intensity counts.
    pub level: String,
    pub ai: f64,
    /// min(compute roof, ai x bandwidth of the level).
    pub gflops: f64,
    /// The roof that sets it: the level's bandwidth or the compute roof's name.
    pub bound: String,
    /// The point's GFLOP/s as a percentage of `gflops`.
    pub percent: Option<f64>,
}

/// The attainable GFLOP/s at intensity `ai` of memory `level` for FLOP of
/// `precision`, and how close `achieved` GFLOP/s comes to it. `None` when the
/// machine has no roof at all.
pub fn attainable(
    c: &Ceilings,
    precision: &str,
    level: &str,
    ai: f64,
    achieved: Option<f64>,
) -> Option<Attainable> {
    let compute = compute_roof(c, precision);
    let memory = bandwidth_roof(c, level);
    let (gflops, bound) = match (compute, memory) {
        (None, None) => return None,
        (Some(p), None) if c.bandwidth.is_empty() => (p.gflops, compute_name(p)),
        (Some(p), None) => (p.gflops, format!("{}; no {level} roof", compute_name(p))),
        (None, Some(b)) => (ai * b.gbytes_per_s, format!("{} bandwidth", b.level)),
        (Some(p), Some(b)) => {
            let mem = ai * b.gbytes_per_s;
            if mem < p.gflops {
                (mem, format!("{} bandwidth", b.level))
            } else {
                (p.gflops, compute_name(p))
            }
        }
    };
    let percent = achieved
        .filter(|_| gflops > 0.0)
        .map(|g| 100.0 * g / gflops);
    Some(Attainable {
        level: level.to_string(),
        ai,
        gflops,
        bound,
        percent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn ceilings() -> Ceilings {
        let c = |name: &str, precision: &str, width_bits, gflops, measured| ComputeCeiling {
            name: name.into(),
            precision: precision.into(),
            width_bits,
            gflops,
            measured,
        };
        let b = |level: &str, gbytes_per_s, measured| BandwidthCeiling {
            level: level.into(),
            gbytes_per_s,
            measured,
        };
        Ceilings {
            source: "test".into(),
            machine: "test machine".into(),
            compute: vec![
                c("fp64 AVX2 FMA", "fp64", 256, 200.0, false),
                c("fp64 AVX2 FMA", "fp64", 256, 150.0, true),
                c("fp64 scalar", "fp64", 64, 25.0, false),
            ],
            bandwidth: vec![b("L1", 800.0, true), b("DRAM", 20.0, true)],
        }
    }

    fn axes() -> (LogAxis, LogAxis) {
        (
            LogAxis {
                lo: 0.01,
                hi: 100.0,
            },
            LogAxis {
                lo: 0.1,
                hi: 1000.0,
            },
        )
    }

    #[test]
    fn roofs_are_clipped_to_the_axes_and_the_top_roof() {
        let (x, y) = axes();
        let r = roofs(&select(&ceilings(), &["fp64".into()]), x, y);
        // fp64: the measured and the theoretical AVX2 roof; L1 and DRAM.
        assert_eq!(r.len(), 4);
        let top = &r[1];
        assert_eq!((top.from, top.to), ((0.25, 200.0), (100.0, 200.0)));
        assert_eq!(top.label, "fp64 AVX2 FMA: 200 GFLOP/s (theoretical)");
        assert_eq!(r[0].label, "fp64 AVX2 FMA: 150 GFLOP/s (measured)");
        let dram = r.iter().find(|r| r.label.starts_with("DRAM")).unwrap();
        assert_eq!(dram.label, "DRAM 20.0 GB/s (measured)");
        assert_eq!(dram.from, (0.01, 0.2));
        assert_eq!(dram.to, (10.0, 200.0));
        assert_ne!(r[0].color, r[1].color);
    }

    #[test]
    fn only_the_roofs_of_the_points_precisions_are_drawn() {
        let mut c = ceilings();
        c.compute.push(ComputeCeiling {
            name: "fp32 AVX2 FMA, theoretical".into(),
            precision: "fp32".into(),
            width_bits: 256,
            gflops: 400.0,
            measured: false,
        });
        let sel = select(&c, &["fp64".into()]);
        let names: Vec<String> = sel.compute.iter().map(compute_name).collect();
        assert_eq!(
            names,
            ["fp64 AVX2 FMA (measured)", "fp64 AVX2 FMA (theoretical)"]
        );
        assert_eq!(sel.not_drawn.len(), 1, "fp64 scalar");
        let both = select(&c, &["fp32".into(), "fp64".into()]);
        assert_eq!(both.compute.len(), 3);
        assert_eq!(
            compute_name(&both.compute[2]),
            "fp32 AVX2 FMA (theoretical)"
        );
        // Nothing plotted: fp64's.
        assert_eq!(select(&c, &[]).compute, sel.compute);
    }

    #[test]
    fn attainable_takes_the_lower_roof_of_the_level() {
        let c = ceilings();
        let a = attainable(&c, "fp64", "DRAM", 0.5, Some(5.0)).unwrap();
        assert_eq!(
            (a.gflops, a.bound.as_str(), a.percent),
            (10.0, "DRAM bandwidth", Some(50.0))
        );
        // Measured roofs win: 150, not 200.
        let a = attainable(&c, "fp64", "L1", 10.0, Some(75.0)).unwrap();
        assert_eq!(
            (a.gflops, a.bound.as_str(), a.percent),
            (150.0, "fp64 AVX2 FMA (measured)", Some(50.0))
        );
        let a = attainable(&c, "fp64", "L3", 10.0, None).unwrap();
        assert_eq!(a.bound, "fp64 AVX2 FMA (measured); no L3 roof");
    }
}
