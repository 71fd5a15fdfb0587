//! Counter files turned into a [`Report`]: one process's, and a run's with
//! the counter files its child processes left beside it.
//!
//! A process as the user thinks of it may have left several files: a
//! forked child counts into `<path>.fork.<pid>` until it calls `execve`, and
//! the program it starts counts into a file of its own
//! (`<path>.exec.<pid>.<ns>`). [`processes_of_run`] puts the files of one
//! process back together (same pid, in the order they were started, each
//! after one that ended in `execve`), so that `flopscope count -- ./run.sh`
//! lists the programs the script ran, each with its command, its exit
//! status and its counts.

use crate::layout::ProcessEnd;
use crate::read::{child_files, CounterFile, FileCounts, RegionCounts};
use flopscope_model::status::signal_name;
use flopscope_model::{ExitStatus, Region, Report, Summary, ThreadRow};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// The counter files of one process, in the order they were started.
#[derive(Debug, Clone)]
pub struct ProcessFiles {
    pub pid: u64,
    pub files: Vec<(PathBuf, FileCounts)>,
}

impl ProcessFiles {
    fn last(&self) -> &FileCounts {
        &self.files.last().expect("a process has a file").1
    }
}

/// Whether `path` is a forked child's file (else the main one, or a
/// program started with exec): the last of `.fork.` and `.exec.` in its
/// name says, since a child of an exec'd program is named after its file.
fn is_fork_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match (name.rfind(".fork."), name.rfind(".exec.")) {
        (Some(f), Some(e)) => f > e,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The run's processes: the first is the main process (`main`, read from
/// `counter_path`, and any program it exec'd), then the children in the
/// order they started. Also the warnings about files that could not be read.
pub fn processes_of_run(
    main: &FileCounts,
    counter_path: &Path,
) -> (Vec<ProcessFiles>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut children: Vec<(PathBuf, FileCounts)> = Vec::new();
    for path in child_files(counter_path) {
        match CounterFile::open(&path).and_then(|c| c.read().map_err(std::io::Error::other)) {
            Ok(c) => children.push((path, c)),
            Err(e) => warnings.push(format!(
                "a child process's counts could not be read ({}): {e}",
                path.display()
            )),
        }
    }
    children.sort_by(|a, b| (a.1.started_ns, &a.0).cmp(&(b.1.started_ns, &b.0)));
    let mut procs = vec![ProcessFiles {
        pid: main.pid,
        files: vec![(counter_path.to_path_buf(), main.clone())],
    }];
    for (path, c) in children {
        if !is_fork_file(&path) {
            // A program started with exec goes on with the latest process of
            // its pid that called execve (or whose end was not seen).
            let continued = procs.iter_mut().rev().find(|p| {
                p.pid == c.pid && matches!(p.last().end, ProcessEnd::Exec | ProcessEnd::NotSeen)
            });
            if let Some(p) = continued {
                p.files.push((path, c));
                continue;
            }
        }
        procs.push(ProcessFiles {
            pid: c.pid,
            files: vec![(path, c)],
        });
    }
    (procs, warnings)
}

/// The counter files of each process of the run whose main process
/// counted into `counter_path`, in [`processes_of_run`]'s order (the main
/// process first; then those `report_of_run` lists in `processes`).
pub fn process_paths(counter_path: &Path) -> Vec<Vec<PathBuf>> {
    let Ok(main) =
        CounterFile::open(counter_path).and_then(|c| c.read().map_err(std::io::Error::other))
    else {
        return Vec::new();
    };
    processes_of_run(&main, counter_path)
        .0
        .into_iter()
        .map(|p| p.files.into_iter().map(|(path, _)| path).collect())
        .collect()
}

/// Adds `from`'s regions into `into`, matched by name (new ones last).
fn add_regions(into: &mut Vec<RegionCounts>, from: &[RegionCounts]) {
    for r in from {
        match into.iter_mut().find(|x| x.name == r.name) {
            Some(x) => {
                x.entries += r.entries;
                x.counts.merge(&r.counts);
            }
            None => into.push(r.clone()),
        }
    }
}

/// The files of one process as one: counts added, the command and the end
/// of its last program.
fn combine(files: &[(PathBuf, FileCounts)]) -> FileCounts {
    let mut out = files[0].1.clone();
    for (_, f) in &files[1..] {
        out.total.merge(&f.total);
        for (vcpu, c) in &f.per_vcpu {
            out.per_vcpu.entry(*vcpu).or_default().merge(c);
        }
        out.finished = f.finished;
        out.overflow += f.overflow;
        out.flush_locked_out |= f.flush_locked_out;
        out.unsupported = out.unsupported.take().or_else(|| f.unsupported.clone());
        add_regions(&mut out.regions, &f.regions);
        out.unmarked.merge(&f.unmarked);
        out.uncounted_state = out.uncounted_state.or(f.uncounted_state);
        out.generated_code_pc = out.generated_code_pc.or(f.generated_code_pc);
        out.code_writes += f.code_writes;
        out.blocks_invalidated += f.blocks_invalidated;
        out.full_width_masked_loads += f.full_width_masked_loads;
        out.threads_folded += f.threads_folded;
        out.threads_taken_over += f.threads_taken_over;
        out.children_lost += f.children_lost;
        if out.mismatches == 0 {
            out.mismatch_text = f.mismatch_text.clone();
        }
        out.mismatches += f.mismatches;
        if !f.command.is_empty() {
            out.command = f.command.clone();
        }
        out.end = f.end;
        out.reaped.extend(f.reaped.iter().copied());
    }
    out
}

fn exit_status_of(end: ProcessEnd) -> Option<ExitStatus> {
    match end {
        ProcessEnd::Exited(c) => Some(ExitStatus::Code(c)),
        ProcessEnd::Signal(s) => Some(ExitStatus::Signal(signal_name(s))),
        ProcessEnd::NotSeen | ProcessEnd::SignalUnknown | ProcessEnd::Exec => None,
    }
}

/// The report of a run whose main process counted into `main` (read from
/// `counter_path`); children's files beside it are read and added: the
/// job's totals and regions include every process, `processes` lists the
/// children, one entry per process (pid, command, exit status, counts).
/// `reaped`: how the processes flopscope itself reaped ended (pid, end;
/// `orphans::Orphans::ended`), for those whose engine did not see it.
pub fn report_of_run(
    engine: &str,
    argv: &[String],
    main: &FileCounts,
    counter_path: &Path,
    exit_status: ExitStatus,
    reaped: &[(u64, ProcessEnd)],
) -> Report {
    report_and_counts_of_run(engine, argv, main, counter_path, exit_status, reaped).0
}

/// [`report_of_run`], with the counts of each process it read (the main
/// process first, each process's files combined): what else an engine
/// reports of the whole run, without reading the files again.
pub fn report_and_counts_of_run(
    engine: &str,
    argv: &[String],
    main: &FileCounts,
    counter_path: &Path,
    exit_status: ExitStatus,
    by_flopscope: &[(u64, ProcessEnd)],
) -> (Report, Vec<FileCounts>) {
    let (procs, warnings) = processes_of_run(main, counter_path);
    let combined: Vec<FileCounts> = procs.iter().map(|p| combine(&p.files)).collect();
    // How each child ended as its parent saw it (wait4), per pid in order:
    // names the signal of a child its own engine saw die without its number,
    // and ends the children whose last program was not counted.
    let mut reaped: HashMap<u64, VecDeque<ProcessEnd>> = HashMap::new();
    for c in &combined {
        for (pid, end) in &c.reaped {
            reaped.entry(*pid).or_default().push_back(*end);
        }
    }
    // Orphans flopscope reaped: each ended once, after any of its earlier
    // lives (a pid its parent reaped before) listed above.
    for (pid, end) in by_flopscope {
        reaped.entry(*pid).or_default().push_back(*end);
    }
    let mut children = Vec::new();
    for (p, c) in procs.iter().zip(&combined).skip(1) {
        let by_parent = reaped.get_mut(&p.pid).and_then(|q| q.pop_front());
        let status = exit_status_of(c.end)
            .or_else(|| by_parent.and_then(exit_status_of))
            .unwrap_or(ExitStatus::Unknown);
        let exec_d = p.files.iter().any(|(path, _)| !is_fork_file(path));
        let mut r = report_of(engine, &c.command, c, status);
        r.pid = Some(p.pid);
        if !exec_d {
            r.fork_of = c.parent_pid;
        }
        if c.end == ProcessEnd::Exec {
            r.warnings.push(
                "it then started a program that was not counted (statically linked, not x86-64, or not followed): its work is not in these counts".into(),
            );
        }
        children.push(r);
    }
    let main_all = &combined[0];
    let mut report = report_of(engine, argv, main_all, exit_status);
    report.pid = Some(main.pid).filter(|p| *p != 0);
    if !children.is_empty() {
        // The job's totals and regions include every process.
        let mut job = main_all.total.clone();
        let mut regions = main_all.regions.clone();
        let mut unmarked = main_all.unmarked.clone();
        for c in &combined[1..] {
            job.merge(&c.total);
            add_regions(&mut regions, &c.regions);
            unmarked.merge(&c.unmarked);
        }
        report.summary = Summary::from_counts(&job);
        report.regions = regions.iter().map(region_of).collect();
        report.unmarked = (!regions.is_empty()).then(|| Summary::from_counts(&unmarked));
        report.refresh_derived();
    }
    // Programs exec'd and not counted: the job's counts lack their work.
    let uncounted: Vec<String> = procs
        .iter()
        .zip(&combined)
        .filter(|(_, c)| c.end == ProcessEnd::Exec)
        .map(|(p, _)| p.pid.to_string())
        .collect();
    if !uncounted.is_empty() {
        report.complete = false;
        // The native engine follows static programs and raw execve calls.
        let (why, fix) = if engine == "native" {
            ("not an x86-64 program, or --no-follow", "")
        } else {
            (
                "statically linked, not x86-64, built with a sanitizer, run through a raw execve system call the exec shim does not see, as Go programs make, or --no-follow",
                ", or the job with --engine native",
            )
        };
        report.warnings.push(format!(
            "{} process(es) (pid {}) started a program that was not counted ({why}): its work is not in these counts; count it on its own{fix}",
            uncounted.len(),
            uncounted.join(", ")
        ));
    }
    report.processes = children;
    report.warnings.extend(warnings);
    (report, combined)
}

fn region_of(reg: &RegionCounts) -> Region {
    Region {
        name: reg.name.clone(),
        entries: reg.entries,
        summary: Summary::from_counts(&reg.counts),
        native_time_s: None,
        gflops: None,
        ..Default::default()
    }
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
    r.regions = c.regions.iter().map(region_of).collect();
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
    r.complete = exited && c.overflow == 0 && !c.flush_locked_out;
    if let (Some(at), "emulate") = (c.generated_code_pc, engine) {
        r.complete = false;
        r.warnings.push(format!(
            "the program mapped a file shared and executable (at {at:#x}): code there may be written through another mapping of the same memory (as JIT compilers keeping code never writable and executable do, Erlang's BEAM), which QEMU does not see, so the counts may be those of code since changed; count it with --engine native, which follows such writes"
        ));
    }
    if c.full_width_masked_loads > 0 {
        r.warnings.push(format!(
            "{} AVX masked load(s) (VMASKMOVPS/PD, VPMASKMOVD/Q) ran: QEMU reads the whole operand of each, masked-off elements included, so their bytes are counted at full width and bytes read are high; the native engine counts their active elements",
            c.full_width_masked_loads
        ));
    }
    if c.children_lost > 0 {
        r.complete = false;
        r.warnings.push(format!(
            "{} forked child process(es) ran uncounted: their counter files could not be created (most often the program lowered its limit on open files, RLIMIT_NOFILE, the hard limit too, so that the engine could not raise it for a moment): counts are low",
            c.children_lost
        ));
    }
    if c.threads_taken_over > 0 {
        r.warnings.push(format!(
            "{} thread(s) were created after the native engine's table of {} threads was full: each took over the row of a thread that had exited, so some rows of `threads` hold several threads' counts one after another (the totals are exact)",
            c.threads_taken_over,
            crate::layout::MAX_THREADS
        ));
    }
    if c.threads_folded > 0 {
        r.warnings.push(format!(
            "the counts of {} thread(s) are summed in the `threads` row of tid {}: the counter file holds {} rows of (thread, region) counts (the totals are exact)",
            c.threads_folded,
            crate::layout::FOLDED_THREADS,
            crate::layout::MAX_BANKS
        ));
    }
    if c.flush_locked_out {
        r.warnings.push(
            "the process ended inside the engine (out of memory, or a crash there) before its counts could be written: they are missing from these counts".into(),
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_files_are_told_from_exec_files_by_their_last_part() {
        assert!(is_fork_file(Path::new("/w/counters.fork.12")));
        assert!(!is_fork_file(Path::new("/w/counters.exec.12.99")));
        assert!(is_fork_file(Path::new("/w/counters.exec.12.99.fork.13")));
        assert!(!is_fork_file(Path::new("/w/counters.fork.12.exec.12.99")));
        assert!(!is_fork_file(Path::new("/w/counters")));
    }
}
