//! `flopscope report`: show one report, merge many (ranks, processes), or
//! compare two; export as a table, JSON, CSV, Markdown, an SDE mix, or a
//! self-contained HTML page.

use super::roofline::{label_of, load_reports};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use flopscope_model::merge::{merge, Merged, Source};
use flopscope_model::{diff, markdown, render, sde_mix, Report};
use flopscope_roofline::html::{self, HtmlReport};
use flopscope_roofline::{ChartOptions, Input};
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  flopscope report solver.json\n  flopscope report rank*.json --html ranks.html --machine machine.json\n  flopscope report --diff scalar.json avx2.json\n  flopscope report --diff scalar.json avx2.json --format json -o diff.json\n  flopscope report --diff scalar.json avx2.json --format csv    # scope,name,metric,a,b,ratio\n  flopscope report solver.json --format sde-mix -o solver-mix.txt\n  flopscope report rank*.json --format markdown -o ranks.md"
)]
pub struct ReportArgs {
    /// Reports written by `flopscope count -o FILE.json`; several are
    /// merged: counts summed (per function and loop too, matched by name
    /// and source line), one row per report, load imbalance shown.
    #[arg(value_name = "REPORT.json", required_unless_present = "diff")]
    reports: Vec<PathBuf>,
    /// Compare two reports: what changed per region, precision and width,
    /// and per function and loop (matched by name and source line). As a
    /// table or Markdown (changed rows; --all for every one), or as data:
    /// --format json (counts with A, B, B - A and B / A; rates; functions
    /// and loops) or --format csv (one row per compared quantity: scope,
    /// name, metric, a, b, ratio), both with every quantity.
    #[arg(long, num_args = 2, value_names = ["A.json", "B.json"], conflicts_with_all = ["reports", "html"])]
    diff: Option<Vec<PathBuf>>,
    /// With --diff: list unchanged counts, functions and loops too, and
    /// every changed function and loop (not only the top 20).
    #[arg(long, requires = "diff")]
    all: bool,
    /// Output format (default: from the -o file's extension, else table).
    /// sde-mix is Intel SDE's instruction-mix text, for scripts written for SDE.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write the HTML report (roofline, regions, instruction mix,
    /// metadata) to this file: one self-contained page.
    #[arg(long, value_name = "out.html")]
    html: Option<PathBuf>,
    /// The machine's roofs for the HTML report's chart (a machine profile).
    #[arg(long, value_name = "machine.json")]
    machine: Option<PathBuf>,
    /// Reports of different programs or engines: show each on its own, one
    /// after the other (tables, Markdown) or as a JSON array, never summed
    /// (without it such reports are refused: a merge adds up one job's parts).
    #[arg(long)]
    allow_different: bool,
    /// With --format sde-mix: export this region instead of the whole program.
    #[arg(long, value_name = "NAME")]
    region: Option<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    SdeMix,
}

impl Format {
    fn from_path(p: &Path) -> Format {
        match p.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("csv") => Format::Csv,
            Some("md") | Some("markdown") => Format::Markdown,
            _ => Format::Table,
        }
    }
}

use crate::output::write_text as emit;

fn run_diff(a: &ReportArgs, paths: &[PathBuf], format: Format) -> Result<i32> {
    let [pa, pb] = paths else {
        bail!("--diff takes two reports: --diff A.json B.json")
    };
    let (ra, rb) = (Report::load(pa)?, Report::load(pb)?);
    let d = diff::diff(
        &ra,
        &rb,
        &pa.display().to_string(),
        &pb.display().to_string(),
    );
    let text = match format {
        Format::Table => d.table(a.all),
        Format::Markdown => d.markdown(a.all),
        // The data formats hold every compared quantity (--all or not).
        Format::Json => d.to_json(),
        Format::Csv => d.csv(),
        Format::SdeMix => {
            bail!("--diff compares two reports: an SDE mix is of one report (give --format table, markdown, json or csv)")
        }
    };
    emit(&text, a.output.as_deref())?;
    Ok(0)
}

/// `--allow-different`: each report on its own, never summed.
fn side_by_side(a: &ReportArgs, sources: &[Source], format: Format) -> Result<i32> {
    if a.html.is_some() {
        bail!("--html shows one job: write one page per report (`flopscope report A.json --html a.html`)");
    }
    let text = match format {
        Format::Table | Format::Markdown => sources
            .iter()
            .map(|s| {
                let body = if format == Format::Table {
                    render::table(&s.report)
                } else {
                    markdown::markdown(&s.report)
                };
                format!("== {} ==\n{body}", s.label)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Json => {
            let all: Vec<&Report> = sources.iter().map(|s| &s.report).collect();
            let mut t = serde_json::to_string_pretty(&all).context("writing the reports as JSON")?;
            t.push('\n');
            t
        }
        Format::Csv | Format::SdeMix => bail!(
            "--allow-different shows the reports one by one as tables, Markdown or a JSON array: give --format table, markdown or json"
        ),
    };
    emit(&text, a.output.as_deref())?;
    Ok(0)
}

fn sde_text(r: &Report, region: Option<&str>) -> Result<String> {
    let Some(name) = region else {
        return Ok(sde_mix::sde_mix(r));
    };
    let Some(reg) = r.regions.iter().find(|g| g.name == name) else {
        let names: Vec<&str> = r.regions.iter().map(|g| g.name.as_str()).collect();
        bail!(
            "the report has no region `{name}` (its regions: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    Ok(sde_mix::sde_mix_of(
        &reg.summary,
        &[
            format!("command: {}", r.command.join(" ")),
            format!("region: {name}"),
        ],
    ))
}

fn render(
    format: Format,
    r: &Report,
    merged: Option<&Merged>,
    region: Option<&str>,
) -> Result<String> {
    Ok(match (format, merged) {
        (Format::Table, None) => render::table(r),
        (Format::Table, Some(m)) => {
            // The inputs are listed as sources, not as child processes.
            let top = Report {
                processes: Vec::new(),
                ..r.clone()
            };
            format!("{}\n{}", render::table(&top), m.sources_table())
        }
        (Format::Json, _) => r.to_json(),
        (Format::Csv, None) => render::csv(r),
        // One table: the merged sources are its `process:` scopes.
        (Format::Csv, Some(_)) => render::csv(r),
        (Format::Markdown, None) => markdown::markdown(r),
        (Format::Markdown, Some(m)) => markdown::merged(m),
        (Format::SdeMix, _) => sde_text(r, region)?,
    })
}

pub fn run(a: ReportArgs) -> Result<i32> {
    let format = a.format.unwrap_or_else(|| {
        a.output
            .as_deref()
            .map(Format::from_path)
            .unwrap_or(Format::Table)
    });
    if let Some(paths) = &a.diff {
        return run_diff(&a, paths, format);
    }
    if a.region.is_some() && format != Format::SdeMix {
        bail!("--region selects what --format sde-mix exports; other formats show every region");
    }
    let (mut reports, unmatched) = flopscope_model::times::join(load_reports(&a.reports)?);
    for u in &unmatched {
        eprintln!("flopscope: warning: {u}");
    }
    if reports.is_empty() {
        bail!("only timing reports were given: add the `flopscope count` reports of the same job");
    }
    let merged = if reports.len() > 1 {
        let sources: Vec<Source> = reports
            .drain(..)
            .map(|(label, report)| Source { label, report })
            .collect();
        if let Some(why) = flopscope_model::merge::not_one_job(&sources) {
            if !a.allow_different {
                bail!("the reports are not parts of one job ({why}): a merge would add up their counts; compare two with `flopscope report --diff A.json B.json`, or give --allow-different to show each on its own");
            }
            return side_by_side(&a, &sources, format);
        }
        Some(merge(sources).context("merging the reports")?)
    } else {
        None
    };
    let report: &Report = match &merged {
        Some(m) => &m.report,
        None => &reports[0].1,
    };
    emit(
        &render(format, report, merged.as_ref(), a.region.as_deref())?,
        a.output.as_deref(),
    )?;
    if let Some(out) = &a.html {
        let ceilings = super::peak::ceilings_for(a.machine.as_deref(), &[report])?;
        let label = match &merged {
            Some(m) => format!("merge of {} reports", m.labels.len()),
            None => label_of(&a.reports[0]),
        };
        let title = format!("flopscope: {}", report.command.join(" "));
        let chart = flopscope_roofline::chart(
            &[Input {
                label: &label,
                report,
            }],
            &ceilings,
            &ChartOptions {
                title: format!("Roofline: {}", report.command.join(" ")),
                ..Default::default()
            },
        );
        let svg = flopscope_roofline::svg(&chart)?;
        let page = html::report(&HtmlReport {
            title,
            report,
            merged: merged.as_ref(),
            chart: &chart,
            chart_svg: &svg,
            ceilings: &ceilings,
        });
        flopscope_model::write_atomic(out, page.as_bytes())?;
        eprintln!("flopscope: wrote {}", out.display());
    }
    Ok(0)
}
