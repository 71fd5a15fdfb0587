//! Counter files turned into a [`Report`]: one process's, and a run's with
//! the counter files its child processes left beside it.

use crate::read::{child_files, CounterFile, FileCounts};
use flopscope_model::{ExitStatus, Region, Report, Summary, ThreadRow};
use std::path::Path;

/// The report of a run whose main process counted into `main` (read from
/// `counter_path`); children's files beside it are read and added: the job's
/// totals include every process, `processes` lists the children.
pub fn report_of_run(
    engine: &str,
    argv: &[String],
    main: &FileCounts,
    counter_path: &Path,
    exit_status: ExitStatus,
) -> Report {
    let mut job = main.total.clone();
    let mut children = Vec::new();
    let mut warnings = Vec::new();
    for path in child_files(counter_path) {
        let child = CounterFile::open(&path).and_then(|c| c.read().map_err(std::io::Error::other));
        match child {
            Ok(c) => {
                let how = if path.to_string_lossy().contains(".exec.") {
                    "exec'd"
                } else {
                    "forked"
                };
                let mut r = report_of(
                    engine,
                    &[format!("({how} child, pid {})", c.pid)],
                    &c,
                    ExitStatus::Unknown,
                );
                r.complete = c.overflow == 0;
                job.merge(&c.total);
                children.push(r);
            }
            Err(e) => warnings.push(format!(
                "a child process's counts could not be read ({}): {e}",
                path.display()
            )),
        }
    }
    let mut report = report_of(engine, argv, main, exit_status);
    if !children.is_empty() {
        // The job's totals include every process; `processes` has the children's.
        report.summary = Summary::from_counts(&job);
        report.refresh_derived();
    }
    report.processes = children;
    report.warnings.extend(warnings);
    report
}

/// The report of one process's counter file.
pub fn report_of(engine: &str, argv: &[String], c: &FileCounts, exit_status: ExitStatus) -> Report {
    let mut r = Report::new(engine, argv.to_vec());
    r.summary = Summary::from_counts(&c.total);
    r.threads = c
        .per_vcpu
        .iter()
        .map(|(tid, t)| ThreadRow {
            tid: u64::from(*tid),
            summary: Summary::from_counts(t),
        })
        .collect();
    r.regions = c
        .regions
        .iter()
        .map(|reg| Region {
            name: reg.name.clone(),
            entries: reg.entries,
            summary: Summary::from_counts(&reg.counts),
            native_time_s: None,
            gflops: None,
            ..Default::default()
        })
        .collect();
    if !c.regions.is_empty() {
        r.unmarked = Some(Summary::from_counts(&c.unmarked));
    }
    if c.mismatches > 0 {
        r.warnings.push(format!(
            "{} region marker(s) did not match: {}",
            c.mismatches, c.mismatch_text
        ));
    }
    let exited = matches!(exit_status, ExitStatus::Code(_));
    r.exit_status = exit_status;
    r.complete = exited && c.overflow == 0;
    if c.overflow > 0 {
        r.warnings.push(format!(
            "{} block(s) could not be counted (counter file full: more than {} threads or kinds of instruction): counts are low",
            c.overflow,
            crate::layout::MAX_BANKS
        ));
    }
    if !exited {
        r.warnings.push("the program did not exit normally: counts are partial (up to the block that was executing)".into());
    }
    r.refresh_derived();
    r
}
