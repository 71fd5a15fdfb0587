//! `flopscope flame`: a report in, a flame graph of its FLOP (or bytes,
//! instructions, time) out, as an SVG a browser opens.

use super::roofline::label_of;
use anyhow::Result;
use clap::{Args, ValueEnum};
use flopscope_model::Report;
use flopscope_roofline::flame::{self, FlameOptions, Metric};
use std::path::PathBuf;

#[derive(Args)]
#[command(
    after_help = "Frames are stacked module, function, loops (outer to inner), source line; each is as wide as its \
FLOP (exclusive at the leaves, so widths nest exactly). Loops appear where the function's source lines reproduce \
their counts exactly; point at a frame in the browser for its exact counts.\n\n\
Examples:\n  flopscope count --engine native -o app.json -- ./app\n  flopscope flame app.json -o flame.svg\n  \
flopscope flame app.json --metric bytes -o bytes.svg\n  flopscope flame app.json --metric time --width 1600 -o time.svg"
)]
pub struct FlameArgs {
    /// A report written by `flopscope count -o FILE.json` (with its
    /// functions[], loops[] and lines[]).
    #[arg(value_name = "REPORT.json")]
    report: PathBuf,
    /// Where to write the SVG (atomically).
    #[arg(short = 'o', long, value_name = "FILE.svg")]
    output: PathBuf,
    /// What a frame's width measures: time needs a report with time per
    /// function (from `flopscope count` without --no-native); without it the
    /// graph shows FLOP and says so.
    /// Example: --metric bytes
    #[arg(long, value_enum, default_value_t = MetricArg::Flop)]
    metric: MetricArg,
    /// The graph's title (default: "<metric> flame graph: <report file>").
    /// Example: --title "solver, 4096^2"
    #[arg(long)]
    title: Option<String>,
    /// Width of the graph in pixels. Example: --width 1600
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(400..=10000))]
    width: u32,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum MetricArg {
    Flop,
    Bytes,
    Instructions,
    Time,
}

pub fn run(a: FlameArgs) -> Result<i32> {
    let report = Report::load(&a.report)?;
    let metric = match a.metric {
        MetricArg::Flop => Metric::Flop,
        MetricArg::Bytes => Metric::Bytes,
        MetricArg::Instructions => Metric::Instructions,
        MetricArg::Time => Metric::Time,
    };
    let graph = flame::flame(&report, metric);
    for n in &graph.notes {
        eprintln!("flopscope: warning: {n}");
    }
    let title = a.title.unwrap_or_else(|| {
        format!(
            "{} flame graph: {}",
            graph.metric.name(),
            label_of(&a.report)
        )
    });
    let svg = flame::svg(
        &graph,
        &FlameOptions {
            width: a.width,
            title,
        },
    );
    flopscope_model::write_atomic(&a.output, svg.as_bytes())?;
    eprintln!("flopscope: wrote {}", a.output.display());
    Ok(0)
}
