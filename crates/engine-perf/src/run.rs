//! Running a program under counters: fork, open the counters on the child before it
//! execs (disabled, `enable_on_exec`, `inherit`), let it exec, wait, read.
//!
//! The child waits on a pipe until the parent has opened every counter, the same
//! handshake `perf stat` uses, so not one instruction of the program is missed
//! and none of flopscope's own is counted.
//!
//! With [`PerfOptions::sampling`], the program's events are opened per CPU and
//! sampled instead ([`crate::sampling`]), and the report gets `functions`.

use crate::attribute;
use crate::error::PerfError;
use crate::eventset::{EventSet, Scope};
use crate::plan::{plan, OpenSpec, Plan};
use crate::probe::{check_pmu, is_permission_errno, perf_event_paranoid};
use crate::profile::Profile;
use crate::sampling::{Sampler, SamplingOptions, SoftwareClock};
use crate::sys;
use crate::values::{CounterValues, Reading};
use flopscope_counter_file::orphans;
use flopscope_model::{ExitStatus, Report, Seconds};
use std::collections::BTreeSet;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How to run.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfOptions {
    /// The sysfs root (`/sys`); tests point it at a fixture tree.
    pub sysfs_root: PathBuf,
    /// Also read the memory controllers for DRAM bytes (system-wide; needs
    /// `perf_event_paranoid <= 0` or CAP_PERFMON, else a warning says why not).
    pub dram: bool,
    /// Sample the FP events to attribute them to functions (`None`: count only).
    pub sampling: Option<SamplingOptions>,
}

impl Default for PerfOptions {
    fn default() -> Self {
        PerfOptions {
            sysfs_root: PathBuf::from("/sys"),
            dram: true,
            sampling: None,
        }
    }
}

/// What one counted run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRun {
    pub command: Vec<String>,
    /// The event set's name.
    pub set: String,
    pub values: CounterValues,
    pub exit_status: ExitStatus,
    /// Wall time from exec to exit: the run is native, so this is valid for FLOP/s.
    pub wall_time: Seconds,
    /// The samples per function, in sampling mode.
    pub profile: Option<Profile>,
    /// The warning about processes the program left running that had to
    /// be stopped (their counts are partial).
    pub stopped: Option<String>,
}

impl PerfRun {
    /// The report of this run: [`crate::report_from_counts`] plus command, exit status and time.
    pub fn report(&self, set: &EventSet) -> Report {
        let mut r = crate::report::report_from_counts(set, &self.values);
        r.command = self.command.clone();
        r.exit_status = self.exit_status.clone();
        if matches!(
            self.exit_status,
            ExitStatus::Signal(_) | ExitStatus::Unknown
        ) {
            r.complete = false;
        }
        r.set_native_time(Some(self.wall_time));
        if let Some(w) = &self.stopped {
            r.complete = false;
            r.warnings.push(w.clone());
        }
        if let Some(p) = &self.profile {
            r.functions = attribute::function_rows(set, &self.values, p, &r.summary);
            r.warnings.extend(attribute::warnings(
                &self.values,
                p,
                "FLOP per function",
                "events",
            ));
        }
        r
    }

    /// The report of a run that sampled `clock` ([`run_sampled_clock`]): no
    /// FLOP; `functions` with each one's share of the counted CPU time.
    pub fn clock_report(&self, clock: SoftwareClock) -> Report {
        let mut r = Report::new("perf", self.command.clone());
        r.exit_status = self.exit_status.clone();
        r.complete = matches!(self.exit_status, ExitStatus::Code(_));
        r.warnings.push(format!(
            "sampled the software clock {} instead of hardware events (a test of the sampling machinery, which needs no PMU): no FLOP were counted; each function's time_s is its share of the counted {} time",
            clock.name(),
            clock.name()
        ));
        if let Some(w) = &self.stopped {
            r.complete = false;
            r.warnings.push(w.clone());
        }
        if let Some(p) = &self.profile {
            r.functions = attribute::clock_rows(&self.values, p, clock.name());
            r.warnings.extend(attribute::warnings(
                &self.values,
                p,
                "CPU times per function",
                "ns of CPU time",
            ));
        }
        r.set_native_time(Some(self.wall_time));
        r
    }
}

/// What to sample in one run.
#[derive(Clone, Copy)]
struct Sampling<'a> {
    /// Events of the plan to sample (the others are counted only).
    events: &'a BTreeSet<String>,
    period: u64,
    sysfs_root: &'a Path,
}

/// The events `set`'s FLOP formulas use: the ones sampling attributes.
fn flop_events(set: &EventSet) -> BTreeSet<String> {
    set.flop
        .iter()
        .flat_map(|f| f.expr.names())
        .filter(|n| set.event(n).is_some_and(|e| e.scope == Scope::Thread))
        .map(String::from)
        .collect()
}

/// Closes the descriptors it holds on drop.
struct Fds(Vec<(i32, OpenSpec)>);

impl Drop for Fds {
    fn drop(&mut self) {
        for (fd, _) in &self.0 {
            // SAFETY: each fd was opened by this process and is closed exactly once, here.
            unsafe { libc::close(*fd) };
        }
    }
}

fn attr_for(spec: &OpenSpec) -> sys::perf_event_attr {
    let mut flags = sys::ATTR_DISABLED;
    if spec.scope == Scope::Thread {
        // User space only: FLOP happen there, and perf_event_paranoid=2 allows it.
        flags |= sys::ATTR_INHERIT
            | sys::ATTR_ENABLE_ON_EXEC
            | sys::ATTR_EXCLUDE_KERNEL
            | sys::ATTR_EXCLUDE_HV;
    }
    sys::perf_event_attr {
        type_: spec.type_,
        size: sys::PERF_ATTR_SIZE_VER7,
        config: spec.raw.config,
        config1: spec.raw.config1,
        config2: spec.raw.config2,
        read_format: sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING,
        flags,
        ..Default::default()
    }
}

/// Finds `program` the way execvp would, before forking (the child must not allocate).
fn resolve_program(program: &str) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a valid NUL-terminated path.
        p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
    };
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_exec(p))
}

fn pipe() -> io::Result<[i32; 2]> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fds)
}

fn close(fd: i32) {
    // SAFETY: closing a descriptor this process owns.
    unsafe { libc::close(fd) };
}

fn wait_child(pid: libc::pid_t) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The conventional name of a signal (`SIGSEGV`).
pub use flopscope_model::status::signal_name;

fn exit_status(status: i32) -> ExitStatus {
    if libc::WIFEXITED(status) {
        ExitStatus::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        ExitStatus::Signal(signal_name(libc::WTERMSIG(status)))
    } else {
        ExitStatus::Unknown
    }
}

/// The SVE vector length in bits of this process (inherited by the child), on aarch64.
fn sve_vector_bits() -> Option<i128> {
    #[cfg(target_arch = "aarch64")]
    {
        // PR_SVE_GET_VL (51) returns the vector length in bytes in bits 0-15.
        // SAFETY: prctl with this option takes no pointer arguments.
        let r = unsafe { libc::prctl(51, 0, 0, 0, 0) };
        if r > 0 {
            return Some(i128::from(r & 0xffff) * 8);
        }
    }
    None
}

/// Opens `plan`'s counters on `pid` (thread scope, unless `sockets_only`) or
/// system-wide (socket scope).
fn open_all(
    plan: &Plan,
    pid: libc::pid_t,
    values: &mut CounterValues,
    sockets_only: bool,
) -> Result<Fds, PerfError> {
    let mut fds = Fds(Vec::new());
    let mut dram_failed = false;
    for spec in &plan.opens {
        if sockets_only && spec.scope == Scope::Thread {
            continue;
        }
        let is_dram = plan.dram_source.is_some() && spec.scope == Scope::Socket;
        if is_dram && dram_failed {
            continue;
        }
        let target = if spec.scope == Scope::Thread { pid } else { -1 };
        match sys::perf_event_open(&attr_for(spec), target, spec.cpu) {
            Ok(fd) => fds.0.push((fd, spec.clone())),
            Err(e) if is_dram => {
                dram_failed = true;
                let fix = if is_permission_errno(&e) {
                    format!(
                        ": system-wide counters need `sudo sysctl kernel.perf_event_paranoid=0` (it is {}) or CAP_PERFMON",
                        perf_event_paranoid().map_or_else(|| "unreadable".into(), |l| l.to_string())
                    )
                } else {
                    String::new()
                };
                values.notes.push(format!(
                    "DRAM bytes unavailable: cannot open {} on {} ({e}){fix}",
                    spec.event, spec.pmu
                ));
            }
            Err(e) if is_permission_errno(&e) => {
                return Err(PerfError::Paranoid {
                    level: perf_event_paranoid(),
                    errno: e,
                })
            }
            Err(e) => {
                return Err(PerfError::Open {
                    event: spec.event.clone(),
                    pmu: spec.pmu.clone(),
                    config: spec.raw.to_string(),
                    errno: e,
                })
            }
        }
    }
    if dram_failed {
        fds.0.retain(|(fd, s)| {
            let keep = s.scope == Scope::Thread;
            if !keep {
                close(*fd);
            }
            keep
        });
        values.dram_source = None;
    }
    Ok(fds)
}

/// Runs `cmd` under the counters of `set` and returns the raw counts, exit status and wall time.
///
/// Fails before running anything when the machine has no PMU ([`PerfError::NoPmu`]),
/// counters are forbidden ([`PerfError::Paranoid`]), or the set does not fit the kernel.
pub fn run_counted(
    cmd: &[String],
    set: &EventSet,
    opts: &PerfOptions,
) -> Result<PerfRun, PerfError> {
    if let Some(why) = &set.no_flop {
        return Err(PerfError::NoFlopEvents {
            set: set.name.clone(),
            title: set.title.clone(),
            why: why.clone(),
        });
    }
    run_counted_env(cmd, set, opts, |_| Vec::new())
}

/// [`run_counted`], with environment variables for the program made from the
/// resolved plan (the region markers need the configs of the opened events).
///
/// With `opts.sampling`, the events of the set's FLOP formulas are sampled
/// too ([`PerfRun::profile`]); with a sampling clock, only the clock is
/// opened (no PMU needed, `set` unused: see [`run_sampled_clock`]).
pub fn run_counted_env(
    cmd: &[String],
    set: &EventSet,
    opts: &PerfOptions,
    env: impl FnOnce(&Plan) -> Vec<(String, String)>,
) -> Result<PerfRun, PerfError> {
    if let Some(SamplingOptions {
        clock: Some(clock),
        period,
    }) = opts.sampling
    {
        let plan = clock.plan();
        let extra = env(&plan);
        return run_clock_env(cmd, clock, period, &extra);
    }
    check_pmu(&opts.sysfs_root)?;
    let plan = plan(set, &opts.sysfs_root, opts.dram)?;
    let extra = env(&plan);
    let sampled = flop_events(set);
    let sampling = opts.sampling.map(|s| Sampling {
        events: &sampled,
        period: s.period,
        sysfs_root: &opts.sysfs_root,
    });
    let mut run = run_inner(cmd, &plan, &extra, sampling)?;
    run.set = set.name.clone();
    if let Some(vl) = sve_vector_bits().filter(|_| set.constants.contains_key("VL")) {
        run.values
            .constants
            .insert("VL".into(), crate::formula::Num::Exact(vl));
    }
    Ok(run)
}

/// Runs `cmd` with the counters of `plan` (any PMU, software ones included): the
/// mechanics of [`run_counted`] without the PMU check. `set` of the result is empty.
pub fn run_plan(cmd: &[String], plan: &Plan) -> Result<PerfRun, PerfError> {
    run_plan_env(cmd, plan, &[])
}

/// [`run_plan`] with `env` added to (or replacing in) the program's environment.
pub fn run_plan_env(
    cmd: &[String],
    plan: &Plan,
    env: &[(String, String)],
) -> Result<PerfRun, PerfError> {
    run_inner(cmd, plan, env, None)
}

/// Runs `cmd` sampling the software clock `clock` every `period_ns`
/// nanoseconds of CPU time instead of hardware events: the sampling
/// machinery without a PMU. [`PerfRun::clock_report`] makes its report.
pub fn run_sampled_clock(
    cmd: &[String],
    clock: SoftwareClock,
    period_ns: u64,
) -> Result<PerfRun, PerfError> {
    run_clock_env(cmd, clock, period_ns, &[])
}

fn run_clock_env(
    cmd: &[String],
    clock: SoftwareClock,
    period_ns: u64,
    env: &[(String, String)],
) -> Result<PerfRun, PerfError> {
    let plan = clock.plan();
    let events = BTreeSet::from([clock.name().to_string()]);
    let sampling = Sampling {
        events: &events,
        period: period_ns,
        sysfs_root: Path::new("/sys"),
    };
    run_inner(cmd, &plan, env, Some(sampling))
}

fn run_inner(
    cmd: &[String],
    plan: &Plan,
    env: &[(String, String)],
    sampling: Option<Sampling<'_>>,
) -> Result<PerfRun, PerfError> {
    let program = cmd.first().ok_or_else(|| PerfError::Spawn {
        program: String::new(),
        source: io::Error::new(io::ErrorKind::InvalidInput, "no command given"),
    })?;
    let path = resolve_program(program).ok_or_else(|| PerfError::Spawn {
        program: program.clone(),
        source: io::Error::new(io::ErrorKind::NotFound, "not found in PATH"),
    })?;
    let spawn_err = |source: io::Error| PerfError::Spawn {
        program: program.clone(),
        source,
    };
    let c_path =
        CString::new(path.as_os_str().as_bytes()).map_err(|e| spawn_err(io::Error::other(e)))?;
    let c_args: Vec<CString> = cmd
        .iter()
        .map(|a| CString::new(OsStr::new(a).as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|e| spawn_err(io::Error::other(e)))?;
    let mut argv: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // The environment is built before the fork too (execve, not execv).
    let mut c_env: Vec<CString> = std::env::vars_os()
        .filter(|(k, _)| !env.iter().any(|(n, _)| OsStr::new(n) == k))
        .filter_map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).ok()
        })
        .collect();
    for (k, v) in env {
        c_env.push(CString::new(format!("{k}={v}")).map_err(|e| spawn_err(io::Error::other(e)))?);
    }
    let mut envp: Vec<*const libc::c_char> = c_env.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());

    let io_err = |what: &str| {
        let what = what.to_string();
        move |source| PerfError::Io { what, source }
    };
    let go = pipe().map_err(io_err("pipe"))?;
    let exec_err = pipe().map_err(io_err("pipe"))?;

    // Counters are inherited by the program's children: those it leaves
    // running are waited for before the counters are read.
    orphans::adopt();
    // SAFETY: the child only calls async-signal-safe functions (prctl, close, read,
    // execve, write, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io_err("fork")(io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above; every pointer was built before fork and stays valid.
        unsafe {
            // Dies with flopscope, even one killed with SIGKILL (if that
            // came first, the read below finds the pipe closed).
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::close(go[1]);
            libc::close(exec_err[0]);
            let mut byte = 0u8;
            if libc::read(go[0], (&mut byte as *mut u8).cast(), 1) != 1 {
                libc::_exit(127);
            }
            libc::execve(c_path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            let errno = *libc::__errno_location();
            libc::write(
                exec_err[1],
                (&errno as *const i32).cast(),
                std::mem::size_of::<i32>(),
            );
            libc::_exit(127);
        }
    }
    close(go[0]);
    close(exec_err[1]);

    let mut values = CounterValues {
        notes: plan.notes.clone(),
        dram_source: plan.dram_source.clone(),
        ..Default::default()
    };
    let abort = |pid| {
        close(go[1]);
        close(exec_err[0]);
        let _ = wait_child(pid);
    };
    let fds = match open_all(plan, pid, &mut values, sampling.is_some()) {
        Ok(f) => f,
        Err(e) => {
            abort(pid);
            return Err(e);
        }
    };
    let mut sampler = match sampling
        .map(|s| Sampler::open(plan, pid, s.events, s.period, s.sysfs_root))
        .transpose()
    {
        Ok(s) => s,
        Err(e) => {
            abort(pid);
            return Err(e);
        }
    };
    for (fd, spec) in &fds.0 {
        if spec.scope == Scope::Socket {
            if let Err(e) = sys::ioctl(*fd, sys::PERF_EVENT_IOC_ENABLE) {
                abort(pid);
                return Err(io_err("enabling a memory-controller counter")(e));
            }
        }
    }

    let start = Instant::now();
    // SAFETY: writing one byte from a valid buffer to our end of the pipe.
    let wrote = unsafe { libc::write(go[1], [1u8].as_ptr().cast(), 1) };
    close(go[1]);
    if wrote != 1 {
        let e = io::Error::last_os_error();
        close(exec_err[0]);
        let _ = wait_child(pid);
        return Err(io_err("starting the program")(e));
    }
    let mut errno = 0i32;
    // SAFETY: reading at most 4 bytes into `errno`; EOF (0) means exec succeeded.
    let n = unsafe {
        libc::read(
            exec_err[0],
            (&mut errno as *mut i32).cast(),
            std::mem::size_of::<i32>(),
        )
    };
    close(exec_err[0]);
    let status = match &mut sampler {
        Some(s) => s.wait(pid),
        None => wait_child(pid),
    }
    .map_err(io_err("waiting for the program"))?;
    let wall = start.elapsed().as_secs_f64();
    let stopped = orphans::warning(
        &orphans::wait_all(orphans::LINGER).stopped,
        orphans::LINGER,
        true,
    );
    if n == std::mem::size_of::<i32>() as isize {
        return Err(spawn_err(io::Error::from_raw_os_error(errno)));
    }

    for (fd, spec) in &fds.0 {
        if spec.scope == Scope::Socket {
            let _ = sys::ioctl(*fd, sys::PERF_EVENT_IOC_DISABLE);
        }
    }
    for (fd, spec) in &fds.0 {
        let [value, enabled, running] =
            sys::read_counter(*fd).map_err(io_err("reading a counter"))?;
        let reading = Reading {
            value,
            time_enabled: enabled,
            time_running: running,
            zero_when_not_run: spec.zero_when_not_run,
        };
        values.add(&spec.event, reading);
        if let Some(s) = spec.scale {
            values.scales.insert(spec.event.clone(), s);
        }
    }
    if let Some(s) = &sampler {
        s.read_counts(&mut values)
            .map_err(io_err("reading a counter"))?;
    }
    for name in &plan.absent {
        values.add(
            name,
            Reading {
                value: 0,
                time_enabled: 0,
                time_running: 0,
                zero_when_not_run: true,
            },
        );
    }
    Ok(PerfRun {
        command: cmd.to_vec(),
        set: String::new(),
        values,
        exit_status: exit_status(status),
        wall_time: Seconds(wall),
        profile: sampler.map(Sampler::finish),
        stopped,
    })
}
