//! `flopscope roofline`: reports in, a roofline chart out (SVG, PNG, or an
//! HTML page with the chart and its tables): one dot per loop or function,
//! or one point per region and the whole program.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use flopscope_model::Report;
use flopscope_roofline::html::{self, HtmlReport};
use flopscope_roofline::{ChartOptions, Input, PointSet};
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope roofline triad.json -o triad.svg\n  flopscope roofline solver.json --machine machine.json -o solver.png\n  flopscope roofline solver.json --points functions --min-share 5 -o functions.svg\n  flopscope roofline solver.json --points regions -o regions.svg\n  flopscope roofline before.json after.json --machine machine.json -o compare.html"
)]
pub struct RooflineArgs {
    /// Reports written by `flopscope count -o FILE.json`.
    #[arg(required = true, value_name = "REPORT.json")]
    reports: Vec<PathBuf>,
    /// What to plot: a dot per loop (coloured by function) or per function
    /// (coloured by module), sized by time, at its FLOP/byte and GFLOP/s;
    /// or a point per region and one for the whole program (regions); or
    /// the whole program alone (total). Default: loops when a report has
    /// loops doing floating-point work, else regions. Loops and functions
    /// need time (from `flopscope count` without --no-native): without it
    /// the chart shows the whole program and says so.
    /// Example: --points functions
    #[arg(long, value_enum, value_name = "WHAT")]
    points: Option<PointsArg>,
    /// With loops or functions: draw those holding at least PERCENT of the
    /// report's FLOP (a loop: in its own body, without its nested loops).
    /// Example: --min-share 5
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0, value_parser = percent)]
    min_share: f64,
    /// The machine's roofs (a machine profile); default: those of the
    /// machine the reports were made on, recorded in them.
    #[arg(long, value_name = "machine.json")]
    machine: Option<PathBuf>,
    /// An HTML page of reports of different programs or engines: the chart
    /// draws each as its own series, the tables are the first report's
    /// (without it such reports are refused: the page would add them up).
    #[arg(long)]
    allow_different: bool,
    /// Where to write the chart: .svg, .png or .html (written atomically).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: PathBuf,
    /// The chart's title (default: the command of the first report).
    #[arg(long)]
    title: Option<String>,
    /// Width of the chart in pixels (tables may widen it), 640 to 4000:
    /// narrower, the labels of close bandwidth levels would cross roofs.
    #[arg(long, default_value_t = 960, value_parser = clap::value_parser!(u32).range(640..=4000))]
    width: u32,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum PointsArg {
    Loops,
    Functions,
    Regions,
    Total,
}

fn percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("`{s}` is not a percentage from 0 to 100")),
    }
}

/// A report file's name, to label its points and rows.
pub(crate) fn label_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

pub(crate) fn load_reports(paths: &[PathBuf]) -> Result<Vec<(String, Report)>> {
    paths
        .iter()
        .map(|p| Ok((label_of(p), Report::load(p)?)))
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Svg,
    Png,
    Html,
}

fn kind_of(p: &Path) -> Result<Kind> {
    match p
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(Kind::Svg),
        Some("png") => Ok(Kind::Png),
        Some("html") | Some("htm") => Ok(Kind::Html),
        _ => bail!(
            "cannot tell the chart format of {}: name it .svg, .png or .html",
            p.display()
        ),
    }
}

pub fn run(a: RooflineArgs) -> Result<i32> {
    let kind = kind_of(&a.output)?;
    let reports = load_reports(&a.reports)?;
    let all: Vec<&flopscope_model::Report> = reports.iter().map(|(_, r)| r).collect();
    let ceilings = super::peak::ceilings_for(a.machine.as_deref(), &all)?;
    let title = a
        .title
        .unwrap_or_else(|| format!("Roofline: {}", reports[0].1.command.join(" ")));
    let opts = ChartOptions {
        width: a.width,
        title: title.clone(),
        points: match a.points {
            None => PointSet::Auto,
            Some(PointsArg::Loops) => PointSet::Loops,
            Some(PointsArg::Functions) => PointSet::Functions,
            Some(PointsArg::Regions) => PointSet::Regions,
            Some(PointsArg::Total) => PointSet::Total,
        },
        min_share: a.min_share / 100.0,
        ..Default::default()
    };
    let inputs: Vec<Input> = reports
        .iter()
        .map(|(label, report)| Input { label, report })
        .collect();
    let chart = flopscope_roofline::chart(&inputs, &ceilings, &opts);
    for n in &chart.notes {
        eprintln!("flopscope: warning: {n}");
    }
    for p in chart.points.iter().filter(|p| p.not_plotted.is_some()) {
        eprintln!(
            "flopscope: {} is not plotted: {}",
            p.data.label,
            p.not_plotted.as_deref().unwrap_or_default()
        );
    }
    let bytes = match kind {
        Kind::Svg => flopscope_roofline::svg(&chart)?.into_bytes(),
        Kind::Png => flopscope_roofline::png(&chart)?,
        Kind::Html => {
            let svg = flopscope_roofline::svg(&chart)?;
            let merged;
            let sources: Vec<flopscope_model::merge::Source> = reports
                .iter()
                .map(|(label, report)| flopscope_model::merge::Source {
                    label: label.clone(),
                    report: report.clone(),
                })
                .collect();
            let different = flopscope_model::merge::not_one_job(&sources);
            if let (Some(why), false) = (&different, a.allow_different) {
                bail!("the reports are not parts of one job ({why}): the page's tables would add up their counts; draw them as an SVG or PNG chart (one series each), or give --allow-different (the tables are then the first report's)");
            }
            let (report, merged_ref) = if reports.len() == 1 || different.is_some() {
                (&reports[0].1, None)
            } else {
                merged = flopscope_model::merge::merge(sources)?;
                (&merged.report, Some(&merged))
            };
            html::report(&HtmlReport {
                title,
                report,
                merged: merged_ref,
                chart: &chart,
                chart_svg: &svg,
                ceilings: &ceilings,
            })
            .into_bytes()
        }
    };
    flopscope_model::write_atomic(&a.output, &bytes)?;
    eprintln!("flopscope: wrote {}", a.output.display());
    Ok(0)
}
