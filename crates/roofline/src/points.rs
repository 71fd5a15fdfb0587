//! The points of a chart: one per region and one for the whole program of
//! each report (the loops' and functions' points are [`crate::hotspots`]').

use flopscope_model::{Report, Summary};

/// One thing to plot.
#[derive(Debug, Clone, PartialEq)]
pub struct PointData {
    pub label: String,
    pub whole_program: bool,
    pub flop: u64,
    /// Measured on a native run; `None` when the report has no native time.
    pub gflops: Option<f64>,
    /// FLOP per byte of core-side (L1) traffic.
    pub ai_l1: Option<f64>,
    /// FLOP per byte of DRAM traffic (hardware counters only).
    pub ai_dram: Option<f64>,
    /// The precision that dominates its FLOP (`fp32` or `fp64`): its roof.
    pub precision: String,
    /// Every precision it has FLOP of: the chart draws their roofs.
    pub precisions: Vec<String>,
    /// A loop's or function's dot: its area relative to the largest dot's
    /// (1.0), from its time (or its FLOP when the report has no time).
    /// `None` for the fixed-size markers of regions and whole programs.
    pub area: Option<f64>,
    /// The colour group (function of a loop, module of a function), an
    /// index into the point palette; `None`: a colour per point.
    pub color_group: Option<usize>,
}

/// The precision that dominates a summary's FLOP.
pub fn dominant(s: &Summary) -> String {
    let f = &s.flop;
    if f.fp32.unwrap_or(0) > f.fp64.unwrap_or(0) {
        "fp32".into()
    } else {
        "fp64".into()
    }
}

/// The precisions of a summary's FLOP (x87 has no roof of its own).
pub fn precisions(s: &Summary) -> Vec<String> {
    let f = &s.flop;
    [
        ("fp64", f.fp64),
        ("fp32", f.fp32),
        ("fp16", f.fp16),
        ("bf16", f.bf16),
    ]
    .into_iter()
    .filter(|(_, n)| n.unwrap_or(0) > 0)
    .map(|(p, _)| p.to_string())
    .collect()
}

/// The whole program, then each region, of one report. With a `source`
/// (several reports on one chart) labels are prefixed with it.
pub fn points_of(r: &Report, source: Option<&str>) -> Vec<PointData> {
    let name = |n: &str| match source {
        Some(s) => format!("{s}: {n}"),
        None => n.to_string(),
    };
    let mut out = vec![PointData {
        label: name("whole program"),
        whole_program: true,
        flop: r.summary.flop.total,
        gflops: r.gflops,
        ai_l1: r.summary.intensity_l1(),
        ai_dram: r.arithmetic_intensity.dram,
        precision: dominant(&r.summary),
        precisions: precisions(&r.summary),
        area: None,
        color_group: None,
    }];
    for reg in &r.regions {
        out.push(PointData {
            label: name(&reg.name),
            whole_program: false,
            flop: reg.summary.flop.total,
            gflops: reg.gflops,
            ai_l1: reg.summary.intensity_l1(),
            ai_dram: None,
            precision: dominant(&reg.summary),
            precisions: precisions(&reg.summary),
            area: None,
            color_group: None,
        });
    }
    out
}
