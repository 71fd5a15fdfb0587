//! Uninstrumented runs of the program, for time only: `flopscope count
//! --runs N --warmup K` (after the counted run, on request: the program runs
//! once unless the user asks for more) and `flopscope time`.
//!
//! Every run reads the same standard input: when flopscope's own is not a
//! terminal it is read once, kept in the work directory and given to the
//! counted run and to each timed run ([`keep_stdin`]).

use crate::regions;
use anyhow::{Context, Result};
use flopscope_counter_file::orphans;
use flopscope_engine_qemu::host::program;
use flopscope_model::Seconds;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One native run: wall time, exit status, and the region times the
/// program's markers recorded.
pub struct NativeRun {
    pub time: Seconds,
    pub status: std::process::ExitStatus,
    pub regions: regions::RegionTimes,
    /// The warning about processes it left running that had to be stopped.
    pub stopped: Option<String>,
}

/// How the timed runs run.
#[derive(Clone, Copy)]
pub struct RunOptions<'a> {
    /// The sampler preload library and the directory for its files: the
    /// program counter is sampled for the time per function and loop.
    pub sampler: Option<(&'a Path, &'a Path)>,
    /// Standard input from this file (else flopscope's own).
    pub stdin: Option<&'a Path>,
    /// The program's standard output and error go to /dev/null (repeated
    /// runs: the counted run's output is the one the user sees).
    pub quiet: bool,
    /// How long processes the program started may run on after it ended.
    pub linger: Duration,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            sampler: None,
            stdin: None,
            quiet: false,
            linger: orphans::LINGER,
        }
    }
}

/// Runs the program natively once, asking its markers to record region
/// times in `times` (a file).
pub fn native_run(argv: &[String], times: &Path, o: &RunOptions) -> Result<NativeRun> {
    let exe = program::resolve(&argv[0])?;
    let mut cmd = Command::new(&exe);
    flopscope_counter_file::progress::tie_to_flopscope(&mut cmd);
    cmd.args(&argv[1..]).env("FLOPSCOPE_REGION_TIMES", times);
    if let Some((_, dir)) = o.sampler {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the samples directory {}", dir.display()))?;
        cmd.env(flopscope_sampler::DIR_ENV, dir);
    }
    // LIKWID's marker calls are taken over here too, for the region times.
    let likwid = crate::cmd::count::likwid_markers(argv)?;
    let preload = program::preload_list([o.sampler.map(|(so, _)| so), likwid.as_deref()]);
    if let Some(list) = preload {
        cmd.env("LD_PRELOAD", list);
        // As for the counted run: AddressSanitizer would stop the program
        // with a preload library ahead of its own.
        let theirs = std::env::var("ASAN_OPTIONS").unwrap_or_default();
        if let Some(options) = flopscope_engine_native::asan_options(&theirs) {
            cmd.env("ASAN_OPTIONS", options);
        }
    }
    if let Some(path) = o.stdin {
        let f = std::fs::File::open(path)
            .with_context(|| format!("opening the kept standard input {}", path.display()))?;
        cmd.stdin(f);
    }
    if o.quiet {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("running {} natively", exe.display()))?;
    let waited = flopscope_counter_file::progress::wait(&mut child, start, false, o.linger, |_| {
        String::new()
    })
    .with_context(|| format!("running {} natively", exe.display()))?;
    Ok(NativeRun {
        time: Seconds(waited.elapsed.as_secs_f64()),
        status: waited.status,
        regions: regions::read_times(times)?,
        stopped: orphans::warning(&waited.orphans.stopped, o.linger, false),
    })
}

/// What `--runs N --warmup K` measured.
pub struct Runs {
    pub times: Vec<f64>,
    pub statuses: Vec<std::process::ExitStatus>,
    /// Per region, the median over the runs of its time (ns) and its entries.
    pub regions: regions::RegionTimes,
    /// Per region, its shortest and longest time over the runs (ns).
    pub region_spread: std::collections::BTreeMap<String, (u64, u64)>,
    /// A signal ended the runs early (the runs it interrupted are left out).
    pub interrupted: Option<String>,
    /// The first run's warning about processes it left running that had
    /// to be stopped.
    pub stopped: Option<String>,
}

/// `warmup` runs, then `runs` timed ones; a signal flopscope receives (and
/// passes on) stops them, keeping the runs that finished.
pub fn repeat(
    argv: &[String],
    work: &Path,
    runs: u32,
    warmup: u32,
    o: &RunOptions,
) -> Result<Runs> {
    let mut out = Runs {
        times: Vec::new(),
        statuses: Vec::new(),
        regions: Default::default(),
        region_spread: Default::default(),
        interrupted: None,
        stopped: None,
    };
    let mut per_run = Vec::new();
    for i in 0..warmup + runs {
        let timed = i >= warmup;
        let times = work.join(format!("region-times-run{i}"));
        let opts = RunOptions {
            sampler: if timed { o.sampler } else { None },
            ..*o
        };
        let r = native_run(argv, &times, &opts)?;
        if out.stopped.is_none() {
            out.stopped = r.stopped;
        }
        if let Some(sig) = crate::signals::received() {
            out.interrupted = Some(sig);
            break;
        }
        if timed {
            out.times.push(r.time.0);
            out.statuses.push(r.status);
            per_run.push(r.regions);
        }
    }
    out.regions = median_regions(&per_run);
    for run in &per_run {
        for (name, (_, ns)) in run {
            let s = out.region_spread.entry(name.clone()).or_insert((*ns, *ns));
            *s = (s.0.min(*ns), s.1.max(*ns));
        }
    }
    Ok(out)
}

/// Per region name: the median time over the runs that entered it.
fn median_regions(runs: &[regions::RegionTimes]) -> regions::RegionTimes {
    let mut by_name: std::collections::BTreeMap<&str, Vec<(u64, u64)>> = Default::default();
    for run in runs {
        for (name, v) in run {
            by_name.entry(name).or_default().push(*v);
        }
    }
    by_name
        .into_iter()
        .map(|(name, mut v)| {
            v.sort_by_key(|(_, ns)| *ns);
            (name.to_string(), v[v.len() / 2])
        })
        .collect()
}

/// When flopscope's standard input is not a terminal, reads it whole into
/// `path` and makes that file flopscope's standard input, so that the
/// counted run (which inherits it) and every timed run read the same bytes.
/// `None`: standard input is a terminal, left as it is (timed runs then
/// read /dev/null, as an interactive program cannot be timed repeatedly).
pub fn keep_stdin(path: &Path) -> Result<Option<PathBuf>> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let mut file = std::fs::File::create(path)
        .with_context(|| format!("keeping standard input in {}", path.display()))?;
    std::io::copy(&mut std::io::stdin().lock(), &mut file)
        .context("reading standard input (to give it to every run)")?;
    let reopened = std::fs::File::open(path)
        .with_context(|| format!("reopening the kept standard input {}", path.display()))?;
    use std::os::fd::AsRawFd;
    // SAFETY: replaces descriptor 0 with a duplicate of an open file.
    if unsafe { libc::dup2(reopened.as_raw_fd(), 0) } < 0 {
        return Err(std::io::Error::last_os_error())
            .context("giving the kept standard input to the counted run");
    }
    Ok(Some(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_medians_are_per_region_over_the_runs_that_entered_it() {
        let run = |v: &[(&str, u64, u64)]| -> regions::RegionTimes {
            v.iter()
                .map(|(n, e, t)| (n.to_string(), (*e, *t)))
                .collect()
        };
        let m = median_regions(&[
            run(&[("a", 1, 30), ("b", 2, 5)]),
            run(&[("a", 1, 10)]),
            run(&[("a", 1, 20), ("b", 2, 7)]),
        ]);
        assert_eq!(m["a"], (1, 20));
        // Two runs entered b: the upper middle one.
        assert_eq!(m["b"], (2, 7));
    }
}
