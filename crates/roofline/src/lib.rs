//! Roofline charts and the self-contained HTML report of flopscope reports.
//!
//! - [`chart`]: reports and the machine's [`Ceilings`] in, a laid-out
//!   [`Chart`] out: log-log axes (FLOP/byte vs GFLOP/s), compute roofs (by
//!   precision, vector or scalar, measured solid and theoretical dashed),
//!   bandwidth roofs (L1, L2, L3, DRAM), one point per region and one for
//!   the whole program, or one dot per loop or function ([`hotspots`]),
//!   AI(L1) and AI(DRAM) as a joined pair, labels placed without overlaps
//!   ([`labels`]; a bandwidth roof's written along it, turned to its
//!   slope, and compared as the turned box it is: [`scale::Quad`]), and a
//!   table of each point's percent of attainable performance
//!   ([`roofs::attainable`]).
//! - [`svg`], [`png`], [`rgb`]: the chart drawn with plotters and the
//!   embedded DejaVu Sans font ([`font`]): no system fonts needed.
//! - [`html::report`]: one HTML file with the chart inline, the regions,
//!   sortable tables of functions and loops, the annotated source files,
//!   the instruction mix and the run's metadata; nothing loaded from a
//!   network.
//! - [`flame`]: a FLOP flame graph (module, function, loops, source line)
//!   as a self-written SVG.
//!
//! ```
//! use flopscope_model::{BandwidthCeiling, Ceilings, ComputeCeiling, Report};
//! use flopscope_roofline::{chart, svg, ChartOptions, Input};
//! let ceilings = Ceilings {
//!     source: "theoretical".into(),
//!     machine: "example".into(),
//!     compute: vec![ComputeCeiling { name: "fp64 FMA".into(), precision: "fp64".into(), width_bits: 256, gflops: 100.0, measured: false }],
//!     bandwidth: vec![BandwidthCeiling { level: "DRAM".into(), gbytes_per_s: 20.0, measured: true }],
//! };
//! let report = Report::new("emulate", vec!["./app".into()]);
//! let c = chart(&[Input { label: "app.json", report: &report }], &ceilings, &ChartOptions::default());
//! assert_eq!(c.roofs.len(), 2);
//! assert!(svg(&c).unwrap().starts_with("<svg"));
//! ```

pub mod chart;
pub mod flame;
pub mod font;
pub mod hotspots;
pub mod html;
pub mod labels;
pub mod palette;
pub mod points;
pub mod render;
pub mod roofs;
pub mod scale;

pub use chart::{Chart, ChartOptions};
pub use flopscope_model::Ceilings;
pub use hotspots::{Plot, PointSet};
pub use points::PointData;
pub use render::{png, rgb, svg, RenderError};

use flopscope_model::Report;

/// One report to plot and the name to show for it (its file name).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub label: &'a str,
    pub report: &'a Report,
}

/// The points `opts` asks for of several reports: labels carry the
/// report's name when there is more than one.
pub fn plot(inputs: &[Input], opts: &ChartOptions) -> Plot {
    hotspots::plot(inputs, opts.points, opts.min_share)
}

/// The chart of `inputs` under the roofs of `ceilings`, measured with the
/// embedded font. What it could not show as asked is in [`Chart::notes`].
pub fn chart(inputs: &[Input], ceilings: &Ceilings, opts: &ChartOptions) -> Chart {
    chart::layout(
        ceilings,
        plot(inputs, opts),
        opts,
        &font::EmbeddedFont::new(),
    )
}
