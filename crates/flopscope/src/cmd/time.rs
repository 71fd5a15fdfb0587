//! `flopscope time`: one native, uninstrumented run for wall time and region
//! times only. Under an MPI launcher, where a rank cannot run its program
//! twice, it gives the FLOP/s that `flopscope count` then cannot: merge the
//! two with `flopscope report`.

use super::count::{emit, exit_code_of, Format};
use crate::launch;
use crate::timed::{native_run, RunOptions};
use anyhow::Result;
use clap::Args;
use flopscope_model::{ExitStatus, Region, Report};
use std::path::PathBuf;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  mpirun -n 4 flopscope count -o out/count.%r.json -- ./app\n  mpirun -n 4 flopscope time  -o out/time.%r.json  -- ./app\n  flopscope report out/count.*.json out/time.*.json"
)]
pub struct TimeArgs {
    /// Output format (default: from the -o file's extension, else table).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write the report to FILE; `%r`, `%p` and `%h` expand to the MPI rank,
    /// the pid and the host.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// How long processes the program started may run on after it ended
    /// before flopscope stops them (as for `count`).
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = crate::cmd::count::parse_seconds)]
    linger: std::time::Duration,
    /// The program and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM")]
    command: Vec<String>,
}

pub fn run(a: TimeArgs) -> Result<i32> {
    let rank = launch::rank_info();
    // Checked before the program runs: a wrong path must not cost the run.
    let output = a
        .output
        .as_deref()
        .map(|o| launch::output_path(o, rank.as_ref()))
        .transpose()?;
    let work = crate::workdir::create(&std::env::temp_dir())?;
    let native = native_run(
        &a.command,
        &work.path().join("region-times"),
        &RunOptions {
            linger: a.linger,
            ..RunOptions::default()
        },
    )?;
    if let Some(sig) = crate::signals::received() {
        anyhow::bail!(
            "{sig} received during the timed run (passed on to the program): no time was measured"
        );
    }
    let mut report = Report::new("time", a.command.clone());
    report.exit_status = ExitStatus::from_std(native.status);
    report.complete = matches!(report.exit_status, ExitStatus::Code(_));
    if let Some(w) = &native.stopped {
        report.warnings.push(w.clone());
    }
    report.mpi = rank.clone();
    report.regions = native
        .regions
        .iter()
        .map(|(name, (entries, ns))| Region {
            name: name.clone(),
            entries: *entries,
            native_time_s: Some(*ns as f64 / 1e9),
            ..Default::default()
        })
        .collect();
    report.warnings.push("timing only (no counts): merge with the `flopscope count` reports of the same job with `flopscope report`".into());
    report.set_native_time(Some(native.time));
    let format = a.format.unwrap_or_else(|| {
        a.output
            .as_deref()
            .map(Format::from_path)
            .unwrap_or(Format::Table)
    });
    emit(&report, format, output.as_deref())?;
    Ok(exit_code_of(&report.exit_status))
}
