//! `flopscope count`: run the program once under an engine for counts (and,
//! where the engine runs it natively, its time), then, on request only,
//! uninstrumented timed runs; report both, saying which run each figure
//! comes from.

use crate::{launch, plugin, progress, regions, timed};
use anyhow::Result;
use clap::{Args, ValueEnum};
use flopscope_engine_perf as perf;
use flopscope_engine_qemu::host::{program, run as qemu};
use flopscope_model::timing::{TimeSource, Timing};
use flopscope_model::{render, Engine, ExitStatus, Report, Seconds};
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(
    after_help = "The program runs once (its input, output and side effects happen once), unless --runs asks for timed runs after it.\n\nExamples:\n  flopscope count -- ./triad 1000000\n  flopscope count --format json -o triad.json -- ./triad 1000000\n  flopscope count --runs 5 --warmup 1 -- ./triad 1000000   # + 6 uninstrumented runs: time min/median/max\n  echo 100000 | flopscope count -- ./reader                # stdin read by the one run\n  flopscope count --engine emulate --qemu /opt/qemu/bin/qemu-x86_64 -- ./solver\n  flopscope count --top 20 -- ./app   # the 20 functions and loops with the most FLOP\n  FLOPSCOPE_HIDE_CPU_FEATURES=avx512f flopscope count -- ./app   # as on a processor without AVX-512 (both engines; the program's CPUID says so too)\n  flopscope count -- node --perf-basic-prof app.js   # JIT code named from the perf map it writes"
)]
pub struct CountArgs {
    /// Output format (default: from the -o file's extension, else table).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write the report to FILE (atomically) instead of standard output.
    /// `%r`, `%p` and `%h` expand to the MPI rank, the pid and the host.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// How to count: `native` runs the program from a code cache with
    /// counters added (exact, near native speed, AVX-512 masked lanes
    /// counted; dynamically linked programs); `emulate` runs it under QEMU
    /// with flopscope's plugin (exact, any x86-64 program, no AVX-512, far
    /// slower: no time unless --runs); `perf` reads the hardware counters
    /// (native speed, needs a PMU, estimates per the event set); `auto`:
    /// native where it can run the program, else emulate (the report says why).
    #[arg(long, value_enum, default_value = "auto")]
    engine: EngineKind,
    /// perf engine: use this event set instead of the detected CPU's
    /// (`flopscope events --list` names them; `flopscope peak`'s names,
    /// such as "Zen 4", are taken too).
    #[arg(long, visible_alias = "uarch", value_name = "NAME")]
    arch: Option<String>,
    /// perf engine: do not read the memory controllers (no DRAM bytes).
    #[arg(long)]
    no_dram: bool,
    /// perf engine: also sample each FP event every N events, attributing
    /// the FLOP to functions (the VTune method: the counted totals are split
    /// by each function's share of the samples; estimates, see the warnings).
    /// A prime such as 1000003 avoids aliasing with loop trip counts.
    /// Example: `flopscope count --engine perf --sample-period 1000003 -- ./app`
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "no_attribution")]
    sample_period: Option<u64>,
    /// perf engine, testing: sample this software clock every N ns of CPU
    /// time instead of the FP events (no PMU needed; time per function, no FLOP).
    #[arg(
        long,
        value_enum,
        value_name = "CLOCK",
        requires = "sample_period",
        hide = true
    )]
    sample_clock: Option<SampleClock>,
    /// Do not follow programs the counted program starts with exec (by
    /// default they are counted too: relaunched under QEMU by the emulate
    /// engine, taken over again by the native engine).
    #[arg(long)]
    no_follow: bool,
    /// How long processes the program started may run on after it ended
    /// (a server it left behind, a background job): flopscope waits for
    /// them, as their counts are written when they end, then stops them
    /// (SIGTERM, SIGKILL a second later) so that none outlives it; the
    /// report names them and is marked incomplete.
    /// Example: `flopscope count --linger 60 -- ./start-and-detach.sh`
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    linger: std::time::Duration,
    /// The qemu-x86_64 to use (default: the one on PATH); with `--engine
    /// auto`, giving it chooses the emulate engine.
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
    /// The machine profile (`flopscope bench --save machine.json`) whose
    /// measured peaks the percent of peak refers to (default: this machine's
    /// theoretical peak).
    #[arg(long, value_name = "machine.json")]
    machine: Option<PathBuf>,
    /// After the counted run, time the program in N uninstrumented runs
    /// (its output to /dev/null, the same standard input as the counted
    /// run): FLOP/s from their median, the spread (min/median/max) in the
    /// report. Only for programs whose side effects allow running again.
    #[arg(long, value_name = "N", default_value_t = 0)]
    runs: u32,
    /// With --runs: first run the program K more times untimed (warming
    /// caches, page cache and CPU frequency).
    #[arg(long, value_name = "K", default_value_t = 0, requires = "runs")]
    warmup: u32,
    /// With --runs: the timed runs' output goes where the counted run's
    /// does (by default to /dev/null).
    #[arg(long, requires = "runs")]
    show_output: bool,
    /// No time and no FLOP/s, even from the counted run (kept for older
    /// scripts, where it skipped the separate timed run now made only on
    /// request with --runs).
    #[arg(long, hide = true, conflicts_with = "runs")]
    no_native: bool,
    /// Count the code between SDE SSC marks as a region (emulate and native
    /// engines), from this mark value, spelt as for SDE's -start_ssc_mark:
    /// hexadecimal, with or without 0x (`111` is `__SSC_MARK(0x111)`); with
    /// `:repeat` every start..stop pair counts, without it only the first
    /// (as SDE does).
    #[arg(long, value_name = "HEX[:repeat]", value_parser = parse_mark, requires = "stop_mark")]
    start_mark: Option<Mark>,
    /// The SSC mark value that ends the region (with --start-mark).
    #[arg(long, value_name = "HEX[:repeat]", value_parser = parse_mark, requires = "start_mark")]
    stop_mark: Option<Mark>,
    /// Do not attribute the counts to functions, loops and lines (emulate
    /// and native engines): no per-block counters, no symbol lookups.
    #[arg(long)]
    no_attribution: bool,
    /// Attribute each marked region's counts to functions, loops and lines
    /// too (`regions[i].functions` in the JSON).
    #[arg(long, conflicts_with = "no_attribution")]
    per_region: bool,
    /// Rows in the table's "Top functions" and "Top loops" (the JSON
    /// always has them all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// The program and its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM")]
    command: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum EngineKind {
    Auto,
    Emulate,
    Perf,
    Native,
}

impl EngineKind {
    fn name(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Emulate => "emulate",
            EngineKind::Perf => "perf",
            EngineKind::Native => "native",
        }
    }
}

/// `--sample-clock`: the perf engine's software clocks.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum SampleClock {
    TaskClock,
    CpuClock,
}

/// An SSC mark value as SDE spells it, and whether every pair counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub value: u32,
    pub repeat: bool,
}

/// Seconds, a decimal number of them (`0.5`, `60`), not negative.
pub(crate) fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<f64>()
        .ok()
        .and_then(|v| std::time::Duration::try_from_secs_f64(v).ok())
        .ok_or_else(|| format!("{s:?} is not a number of seconds (such as 0.5 or 60)"))
}

/// SDE's spelling: hexadecimal digits, `0x` optional, `:repeat` optional.
fn parse_mark(s: &str) -> Result<Mark, String> {
    let (digits, repeat) = match s.rsplit_once(':') {
        Some((d, r)) if r.eq_ignore_ascii_case("repeat") => (d, true),
        Some(_) => {
            return Err(format!(
                "`{s}`: the only suffix a mark takes is `:repeat` (as SDE's -start_ssc_mark 111:repeat)"
            ))
        }
        None => (s, false),
    };
    let hex = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
        .unwrap_or(digits);
    u32::from_str_radix(hex, 16)
        .map(|value| Mark { value, repeat })
        .map_err(|_| {
            format!("`{s}` is not a mark value: give it in hexadecimal as SDE does, such as 111, 0x111 or 111:repeat")
        })
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

impl Format {
    pub fn from_path(p: &std::path::Path) -> Format {
        match p.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("csv") => Format::Csv,
            _ => Format::Table,
        }
    }
}

/// The measured program's exit status as flopscope's own exit code.
pub fn exit_code_of(status: &ExitStatus) -> i32 {
    status.shell_code().unwrap_or(crate::EXIT_FLOPSCOPE_ERROR)
}

/// Where the counter files go: `TMPDIR` if set, else /dev/shm (memory: the
/// engines' counter files are mapped, and pages of a disk file fault slowly),
/// else the system's temporary directory.
fn work_root() -> PathBuf {
    if std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty()) {
        return std::env::temp_dir();
    }
    let shm = PathBuf::from("/dev/shm");
    // SAFETY: access() only reads the NUL-terminated path.
    let writable = unsafe { libc::access(c"/dev/shm".as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    if shm.is_dir() && writable {
        shm
    } else {
        std::env::temp_dir()
    }
}

/// flopscope's LIKWID marker functions, to preload when the program (the
/// ELF file run: a script's interpreter) or a library it needs calls
/// LIKWID's `likwid_marker*` functions from a library other than
/// flopscope's own; `None` for every other program.
pub fn likwid_markers(argv: &[String]) -> Result<Option<PathBuf>> {
    let exe = program::qemu_argv(argv)?.swap_remove(0);
    match flopscope_markers::likwid::marker_calls(std::path::Path::new(&exe)) {
        flopscope_markers::likwid::MarkerCalls::Likwid => Ok(Some(plugin::likwid_markers()?)),
        _ => Ok(None),
    }
}

/// The engine `--engine auto` stands for: native where it can run the
/// program, else emulate, with the reason. MPI ranks too: the native engine
/// follows the code MPI libraries patch at run time.
fn choose(a: &CountArgs, work: &Path) -> Result<(EngineKind, Option<String>)> {
    if a.engine != EngineKind::Auto {
        return Ok((a.engine, None));
    }
    // Naming a QEMU asks for the engine that uses it.
    if a.qemu.is_some() {
        return Ok((EngineKind::Emulate, None));
    }
    let native = engine(a, EngineKind::Native, work, None)?;
    Ok(match native.check(&a.command) {
        Ok(()) => (EngineKind::Native, None),
        Err(e) => (
            EngineKind::Emulate,
            Some(format!("counted under the emulate engine, as the native engine cannot run this program: {e}")),
        ),
    })
}

fn engine(
    a: &CountArgs,
    kind: EngineKind,
    work: &Path,
    samples_dir: Option<PathBuf>,
) -> Result<Box<dyn Engine>> {
    if a.sample_period.is_some() && kind != EngineKind::Perf {
        anyhow::bail!("--sample-period samples hardware counters: it needs --engine perf (the emulate and native engines attribute exactly without it)");
    }
    Ok(match kind {
        EngineKind::Auto => unreachable!("`auto` is resolved by choose()"),
        EngineKind::Emulate => Box::new(qemu::QemuEngine {
            options: qemu::QemuOptions {
                qemu: a.qemu.clone(),
                plugin: plugin::path()?,
                work_dir: work.to_path_buf(),
                progress: progress::stderr_is_terminal(),
                linger: a.linger,
                ssc_marks: a
                    .start_mark
                    .zip(a.stop_mark)
                    .map(|(s, t)| (s.value, t.value)),
                ssc_once: !a.start_mark.is_some_and(|m| m.repeat)
                    && !a.stop_mark.is_some_and(|m| m.repeat),
                exec_shim: if a.no_follow {
                    None
                } else {
                    Some(plugin::exec_shim()?)
                },
                likwid_markers: likwid_markers(&a.command)?,
            },
        }),
        EngineKind::Native => Box::new(flopscope_engine_native::NativeEngine {
            options: flopscope_engine_native::NativeOptions {
                runtime: plugin::native_runtime()?,
                work_dir: work.to_path_buf(),
                follow_exec: !a.no_follow,
                progress: progress::stderr_is_terminal(),
                linger: a.linger,
                ssc_marks: a
                    .start_mark
                    .zip(a.stop_mark)
                    .map(|(s, t)| (s.value, t.value)),
                ssc_once: !a.start_mark.is_some_and(|m| m.repeat)
                    && !a.stop_mark.is_some_and(|m| m.repeat),
                likwid_markers: likwid_markers(&a.command)?,
                samples_dir,
                static_host: Some(plugin::static_host()?),
            },
        }),
        EngineKind::Perf => {
            let set = match &a.arch {
                Some(name) => perf::event_set_by_name(name)?,
                // A sampled software clock opens none of the set's events.
                None if a.sample_clock.is_some() => {
                    super::events::detected_set().map_or(&perf::event_sets()[0], |(set, _)| set)
                }
                None => {
                    let (set, why) = super::events::detected_set()?;
                    if let Some(why) = why {
                        eprintln!("flopscope: {why}");
                    }
                    set
                }
            };
            let clock = a.sample_clock.map(|c| match c {
                SampleClock::TaskClock => perf::SoftwareClock::Task,
                SampleClock::CpuClock => perf::SoftwareClock::Cpu,
            });
            Box::new(perf::PerfEngine {
                set,
                options: perf::PerfOptions {
                    dram: !a.no_dram,
                    sampling: a
                        .sample_period
                        .map(|period| perf::SamplingOptions { period, clock }),
                    ..Default::default()
                },
            })
        }
    })
}

pub fn run(a: CountArgs) -> Result<i32> {
    // A closed standard output must not kill flopscope with its work
    // directory in /dev/shm: the report's write fails, and it is kept.
    crate::signals::survive_broken_pipe();
    program::qemu_argv(&a.command)?;
    if a.engine == EngineKind::Perf && a.start_mark.is_some() {
        anyhow::bail!("--start-mark/--stop-mark need the emulate or native engine (the perf engine reads whole-program counters)");
    }
    let rank = launch::rank_info();
    if rank.is_some() && a.runs > 0 {
        anyhow::bail!("--runs under an MPI launcher: a rank cannot run its program again (a second MPI_Init fails); time the job with `mpirun ... flopscope time -o T.%r.json -- PROGRAM` and merge the reports with `flopscope report`");
    }
    let format = a.format.unwrap_or_else(|| {
        a.output
            .as_deref()
            .map(Format::from_path)
            .unwrap_or(Format::Table)
    });
    let work = crate::workdir::create(&work_root())?;
    if a.no_attribution {
        // Read by the engines' in-process sides (and inherited by children).
        std::env::set_var(flopscope_attribution::OFF_ENV, "1");
    }
    let (kind, fallback) = choose(&a, work.path())?;
    let attribute = !a.no_attribution && matches!(kind, EngineKind::Emulate | EngineKind::Native);
    // Time per function: sampled in the timed runs when asked for, else in
    // the counted run itself where it runs natively (the native engine).
    let sample_runs = attribute && a.runs > 0;
    let sample_counted = attribute && !sample_runs && kind == EngineKind::Native && !a.no_native;
    let samples = work.path().join("samples");
    let engine = engine(
        &a,
        kind,
        work.path(),
        sample_counted.then(|| samples.clone()),
    )?;
    engine
        .check(&a.command)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Everything the report needs is checked before the program runs: a
    // wrong path must not cost the run.
    let output = a
        .output
        .as_deref()
        .map(|o| launch::output_path(o, rank.as_ref()))
        .transpose()?;
    // The machine, and the peak the figures are compared with (its saved
    // profile, if any): read before the run, a wrong --machine costs nothing.
    let machine = super::peak::machine_record(a.machine.as_deref())?;
    let sampler = if sample_runs {
        Some(plugin::sampler()?)
    } else {
        None
    };
    // Every run reads the same input: kept before the counted run reads it.
    let stdin = if a.runs > 0 {
        timed::keep_stdin(&work.path().join("stdin"))?
    } else {
        None
    };
    // Machine-readable output on stdout: the program's own output goes to
    // stderr (it never shares a stream with the report).
    let report_out = if output.is_none() && format != Format::Table {
        Some(crate::stdout::ReportOut::take()?)
    } else {
        None
    };
    if attribute {
        flopscope_attribution::load_ahead(
            program_file(&a.command).as_deref(),
            rank.is_some(),
            kind == EngineKind::Native,
        );
    }
    let counted = engine.count(&a.command);
    flopscope_attribution::program_ended();
    let mut report = counted.map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(why) = fallback {
        report.warnings.insert(0, why);
    }
    if let Some(sig) = crate::signals::received() {
        report.complete = false;
        report.warnings.insert(
            0,
            format!("flopscope received {sig} and passed it on to the program: the counts are those up to its end"),
        );
    }
    let null = PathBuf::from("/dev/null");
    let runs = if a.runs > 0 && crate::signals::received().is_none() {
        let opts = timed::RunOptions {
            sampler: sampler.as_deref().map(|so| (so, samples.as_path())),
            stdin: Some(stdin.as_deref().unwrap_or(&null)),
            quiet: !a.show_output,
            linger: a.linger,
        };
        Some(timed::repeat(
            &a.command,
            work.path(),
            a.runs,
            a.warmup,
            &opts,
        )?)
    } else {
        None
    };
    match &runs {
        Some(r) => apply_runs(&mut report, r, kind, a.warmup),
        None if !a.no_native => apply_counted_time(&mut report, kind, work.path())?,
        None => {}
    }
    if attribute {
        let counters = work.path().join("counters");
        let sampled = (sample_runs || sample_counted) && samples.is_dir();
        let samples = sampled.then(|| {
            let wall = Seconds(report.native_time_s.unwrap_or(0.0));
            let (s, how, engine_share) =
                read_samples(&samples, sample_runs, wall, &mut report.warnings);
            report.sampling = Some(how);
            if let Some(t) = report.timing.as_mut().filter(|_| sample_counted) {
                t.engine_share = engine_share;
            }
            s
        });
        let warnings = flopscope_attribution::attach(&mut report, &counters, samples.as_ref());
        report.warnings.extend(warnings);
        if a.per_region {
            let warnings = flopscope_attribution::attach_regions(&mut report, &counters);
            report.warnings.extend(warnings);
        }
    }
    report.mpi = rank.clone();
    if let (Some(start), Some(stop)) = (a.start_mark, a.stop_mark) {
        let name = format!("ssc:{:#x}-{:#x}", start.value, stop.value);
        let entered = report
            .regions
            .iter()
            .any(|r| r.name == name && r.entries > 0);
        if !entered {
            report.warnings.push(format!(
                "no SSC mark {:#x} ran (no `__SSC_MARK({:#x})` was executed): region {name} is empty; check the values (hexadecimal, as SDE reads them: --start-mark 111 is 0x111)",
                start.value, start.value
            ));
        }
    }
    report.peak = Some(machine.peak.clone());
    report.machine = Some(machine);
    report.refresh_derived();
    // Warnings go to stderr too unless the table on stdout already shows them.
    if format != Format::Table || a.output.is_some() {
        for w in &report.warnings {
            eprintln!("flopscope: warning: {w}");
        }
    }
    match report_out {
        Some(out) => out.write(&render(&report, format, a.top))?,
        None => emit_or_keep(&report, format, output.as_deref(), a.top)?,
    }
    // Interrupted during the timed runs: the program ended normally in the
    // counted run, but the user asked flopscope to stop.
    let code = match (
        crate::signals::received_number(),
        runs.and_then(|r| r.interrupted),
    ) {
        (Some(n), Some(_)) => 128 + n,
        _ => exit_code_of(&report.exit_status),
    };
    // Written: its memory goes with the process, not freed row by row (a
    // compiler's report, 100,000 rows of maps, took 80 ms to free).
    std::mem::forget(report);
    Ok(code)
}

/// The ELF file `command` runs: its first word found as a shell finds it,
/// or the interpreter a `#!` script names (`#!/usr/bin/env python3`:
/// python3). `None` where that cannot be told.
fn program_file(command: &[String]) -> Option<PathBuf> {
    use flopscope_engine_qemu::host::program;
    let mut file = program::resolve(command.first()?).ok()?;
    for _ in 0..4 {
        let head = program::read_head(&file).ok()?;
        if head.starts_with(b"\x7fELF") {
            return std::fs::canonicalize(file).ok();
        }
        let (mut interpreter, arg) = program::shebang(&head)?;
        if interpreter.ends_with("/env") {
            let arg = arg.unwrap_or_default();
            interpreter = arg
                .split_whitespace()
                .find(|w| !w.starts_with('-'))?
                .to_string();
        }
        file = program::resolve(&interpreter).ok()?;
    }
    None
}

/// The time of the counted run, where the engine ran the program natively
/// (native: the wall time, overhead included; region times from the
/// runtime; perf: the engine set it).
fn apply_counted_time(report: &mut Report, kind: EngineKind, work: &Path) -> Result<()> {
    match kind {
        EngineKind::Native => {
            let Some(t) = report.engine_time_s else {
                return Ok(());
            };
            regions::apply_times(report, &regions::read_times_in(work)?);
            report.set_native_time(Some(Seconds(t)));
        }
        EngineKind::Perf if report.native_time_s.is_some() => {}
        _ => return Ok(()),
    }
    let t = report.native_time_s.unwrap_or(0.0);
    report.timing = Some(Timing::of_runs(
        TimeSource::CountedRun,
        kind.name(),
        vec![t],
        0,
    ));
    Ok(())
}

/// The time of the uninstrumented runs: the median, with its spread.
fn apply_runs(report: &mut Report, runs: &timed::Runs, kind: EngineKind, warmup: u32) {
    if let Some(w) = &runs.stopped {
        report.warnings.push(format!("in the timed runs: {w}"));
    }
    if let Some(sig) = &runs.interrupted {
        report.warnings.push(format!(
            "flopscope received {sig} during the timed runs (passed on to the program): {} of them finished; the counts are complete",
            runs.times.len()
        ));
    }
    if runs.times.is_empty() {
        return;
    }
    regions::apply_times(report, &runs.regions);
    let mut timing = Timing::of_runs(
        TimeSource::NativeRuns,
        kind.name(),
        runs.times.clone(),
        warmup,
    );
    if runs.times.len() > 1 {
        timing.regions_min_max_s = runs
            .region_spread
            .iter()
            .map(|(name, (lo, hi))| (name.clone(), [*lo as f64 / 1e9, *hi as f64 / 1e9]))
            .collect();
    }
    report.set_native_time(Some(Seconds(timing.median_s)));
    report.timing = Some(timing);
    let counted = exit_code_of(&report.exit_status);
    for (i, s) in runs.statuses.iter().enumerate() {
        if s.code() != Some(counted) {
            report.warnings.push(format!(
                "timed run {} exited with {s} but the counted run with {:?}: the runs may not have done the same work",
                i + 1,
                report.exit_status
            ));
            break;
        }
    }
}

/// Writes the report in `format` to `output` (atomically) or standard output.
pub fn emit(report: &Report, format: Format, output: Option<&std::path::Path>) -> Result<()> {
    emit_top(report, format, output, 10)
}

/// The report as text in `format`.
fn render(report: &Report, format: Format, top: usize) -> String {
    match format {
        Format::Table => render::table_top(report, top),
        Format::Json => report.to_json(),
        Format::Csv => render::csv(report),
    }
}

/// [`emit_top`]; when `output` cannot be written after all (it was checked
/// before the run), the report goes to a file named after the process in
/// the current directory, and the error says where: counts are never lost.
fn emit_or_keep(
    report: &Report,
    format: Format,
    output: Option<&std::path::Path>,
    top: usize,
) -> Result<()> {
    let Err(e) = emit_top(report, format, output, top) else {
        return Ok(());
    };
    let ext = match format {
        Format::Json => "json",
        Format::Csv => "csv",
        Format::Table => "txt",
    };
    let keep = std::path::PathBuf::from(format!("flopscope-report-{}.{ext}", std::process::id()));
    match crate::output::write_text(&render(report, format, top), Some(&keep)) {
        Ok(()) => Err(e.context(format!("the report was kept in {} instead", keep.display()))),
        Err(_) => Err(e),
    }
}

/// [`emit`] with `top` rows in the table's top functions and loops.
pub fn emit_top(
    report: &Report,
    format: Format,
    output: Option<&std::path::Path>,
    top: usize,
) -> Result<()> {
    match (format, output) {
        (Format::Json, Some(path)) => {
            crate::output::write_file_with(path, |w| report.write_json(w))
        }
        _ => crate::output::write_text(&render(report, format, top), output),
    }
}

/// The samples of the timed runs (`timed_runs`) or of the counted run,
/// placed for attribution, and the share of the sampled time the engine
/// itself took; a problem reading them is a warning (the counts do not
/// depend on them).
fn read_samples(
    dir: &std::path::Path,
    timed_runs: bool,
    wall: Seconds,
    warnings: &mut Vec<String>,
) -> (
    flopscope_attribution::Samples,
    flopscope_model::Sampling,
    Option<f64>,
) {
    let run = if timed_runs {
        "the timed runs"
    } else {
        "the counted run"
    };
    let processes = match flopscope_sampler::read_dir(dir) {
        Ok(p) if p.is_empty() => {
            warnings.push(if timed_runs {
                "time per function: no process of the timed runs was sampled (a statically linked program does not load the sampler's preload library): the rows have no time; without --runs, the native engine samples the counted run itself".into()
            } else {
                format!("time per function: no process of {run} was sampled: the rows have no time")
            });
            p
        }
        Ok(p) => p,
        Err(e) => {
            warnings.push(format!(
                "time per function: the samples could not be read: {e}"
            ));
            Vec::new()
        }
    };
    let (mut dropped, mut signals, mut replaced) = (0, 0.0, false);
    let (mut engine, mut program) = (0u64, 0u64);
    let placed: Vec<flopscope_attribution::ProcessSamples> = processes
        .into_iter()
        .map(|p| {
            dropped += p.dropped;
            engine += p.engine_intervals;
            program += p.total;
            signals += p.effective_signals;
            replaced |= p.handler_replaced;
            flopscope_attribution::ProcessSamples {
                interval_s: p.interval_s,
                samples: p.samples,
                maps_text: p.maps_text,
            }
        })
        .collect();
    if dropped > 0 {
        warnings.push(format!(
            "time per function: {dropped} samples were dropped (the sampler's buffer was full): time shares are of the samples kept"
        ));
    }
    if replaced {
        warnings.push(
            "time per function: the program installed its own SIGPROF handler, which ended sampling there: times are of the samples taken before".into(),
        );
    }
    let samples = flopscope_attribution::Samples::place(&placed, Some(wall.0), !timed_runs);
    let how = flopscope_model::Sampling {
        source: format!(
            "{run}, sampled on per-thread CPU-time timers (SIGPROF) every {:.3} ms; a row's time is the run's wall time x its share of the samples",
            samples.interval_s * 1e3
        ),
        interval_s: samples.interval_s,
        samples: samples.total,
        signals,
        unplaced: samples.total - samples.at.values().sum::<u64>(),
    };
    let share = (engine + program > 0).then(|| engine as f64 / (engine + program) as f64);
    (samples, how, share)
}

#[cfg(test)]
mod tests {
    use super::program_file;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_program_file_is_the_elf_file_a_command_runs() {
        let canonical = |p: &str| std::fs::canonicalize(p).ok();
        let which = |c: &str| program_file(&[c.to_string()]);
        assert_eq!(which("true"), canonical("/usr/bin/true"));
        assert_eq!(which("/bin/sh"), canonical("/bin/sh"));
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, line: &str| -> String {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("{line}\necho\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p.display().to_string()
        };
        assert_eq!(which(&script("a", "#!/bin/sh -e")), canonical("/bin/sh"));
        assert_eq!(
            which(&script("b", "#!/usr/bin/env -S sh -e")),
            canonical("/bin/sh")
        );
        assert_eq!(which(&script("c", "no interpreter line")), None);
        assert_eq!(which("no-such-program-anywhere"), None);
    }
}
