//! Running a program under `qemu-x86_64` with the plugin, and turning the
//! counter files into a [`Report`].

use super::counters::{CounterFile, Unsupported, UnsupportedKind};
use super::program::{qemu_argv, ProgramError};
use flopscope_counter_file::report::report_of_run;
use flopscope_model::{ExitStatus, Report};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("qemu-x86_64 not found on PATH: install Debian's qemu-user (`apt-get install qemu-user`), or pass --qemu PATH")]
    QemuNotFound,
    #[error("{0} has no plugin support: install Debian 12's qemu-user 7.2 (dynamically linked); static builds such as bookworm-backports' qemu-user 10 cannot load plugins")]
    NoPluginSupport(PathBuf),
    #[error("cannot run {0}: {1}")]
    Spawn(PathBuf, std::io::Error),
    #[error("cannot create the counter file {0}: {1}")]
    CounterFile(PathBuf, std::io::Error),
    #[error("QEMU did not load the flopscope plugin ({0}); its own message is above")]
    PluginNotLoaded(PathBuf),
    #[error(transparent)]
    Program(#[from] ProgramError),
    #[error("reading the counts: {0}")]
    Read(String),
}

/// Where things are and how to run.
#[derive(Debug, Clone)]
pub struct QemuOptions {
    /// `qemu-x86_64`; `None` looks it up on PATH.
    pub qemu: Option<PathBuf>,
    /// The plugin shared object.
    pub plugin: PathBuf,
    /// Directory for the counter files (removed by the caller).
    pub work_dir: PathBuf,
    /// Show instructions counted so far on stderr.
    pub progress: bool,
    /// How long processes the program started may run on after it ended
    /// before they are stopped (`flopscope_counter_file::orphans`).
    pub linger: std::time::Duration,
    /// SDE SSC mark values that begin and end the `ssc:START-STOP` region.
    pub ssc_marks: Option<(u32, u32)>,
    /// Only the first start..stop pair counts (SDE's marks without `:repeat`).
    pub ssc_once: bool,
    /// The exec shim (a preload library): when set, programs the counted
    /// program starts with exec are relaunched under QEMU and counted too.
    pub exec_shim: Option<PathBuf>,
    /// flopscope's LIKWID marker functions (a preload library), for a
    /// program that calls LIKWID's: preloaded in the guest, they take the
    /// calls over and its LIKWID regions become flopscope's.
    pub likwid_markers: Option<PathBuf>,
}

/// The report's warning when [`QemuOptions::likwid_markers`] (or the native
/// engine's) took a program's LIKWID calls over.
pub const LIKWID_TAKEN_OVER: &str = "the program calls LIKWID's marker API (likwid_marker*): flopscope preloaded its own definitions of those functions, so LIKWID's marker calls were taken over by flopscope and its regions are counted as flopscope regions (LIKWID itself measured nothing)";

/// Finds `qemu-x86_64`.
pub fn find_qemu(explicit: Option<&Path>) -> Result<PathBuf, QemuError> {
    match explicit {
        Some(p) if p.is_file() => Ok(p.to_path_buf()),
        Some(p) => Err(QemuError::Spawn(
            p.to_path_buf(),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )),
        None => super::program::resolve("qemu-x86_64").map_err(|_| QemuError::QemuNotFound),
    }
}

/// Whether `qemu` accepts `-plugin` (static builds do not). Asked only when
/// the plugin did not attach, to name the cause.
pub fn has_plugin_support(qemu: &Path) -> Result<bool, QemuError> {
    let out = Command::new(qemu)
        .arg("-h")
        .output()
        .map_err(|e| QemuError::Spawn(qemu.to_path_buf(), e))?;
    let help = String::from_utf8_lossy(&out.stdout);
    Ok(help.lines().any(|l| l.trim_start().starts_with("-plugin")))
}

/// The outcome of one emulated run.
pub struct EmulatedRun {
    pub report: Report,
    /// An instruction QEMU cannot execute that the program reached.
    pub unsupported: Option<Unsupported>,
}

/// The emulate engine behind the common [`flopscope_model::Engine`] contract.
pub struct QemuEngine {
    pub options: QemuOptions,
}

/// The message for a program stopped by an instruction QEMU cannot execute.
pub fn unsupported_message(u: &Unsupported) -> String {
    let (what, fix) = if u.kind == UnsupportedKind::Evex {
        (
            "an AVX-512 (EVEX) instruction",
            "rebuild it without AVX-512 (for example -march=x86-64-v3 or -mno-avx512f)",
        )
    } else {
        (
            "an instruction",
            "rebuild it for an older instruction set (for example -march=x86-64-v3)",
        )
    };
    format!(
        "the program reached `{}` at {:#x}, {what} that QEMU 7.2 cannot execute, and stopped there: \
         {fix} to count it under the emulate engine; counts up to that point are in the report",
        u.text, u.pc
    )
}

impl flopscope_model::Engine for QemuEngine {
    fn name(&self) -> &'static str {
        "emulate"
    }

    fn runs_natively(&self) -> bool {
        false
    }

    fn count(&self, argv: &[String]) -> Result<Report, flopscope_model::EngineError> {
        let out = run(argv, &self.options)?;
        let mut report = out.report;
        if let Some(u) = &out.unsupported {
            report.warnings.insert(0, unsupported_message(u));
        }
        Ok(report)
    }
}

/// Runs `argv` under QEMU with the plugin and reads the counts back.
pub fn run(argv: &[String], opts: &QemuOptions) -> Result<EmulatedRun, QemuError> {
    let qemu = find_qemu(opts.qemu.as_deref())?;
    let qargv = qemu_argv(argv)?;
    let exe = Path::new(&qargv[0]);
    if let Some(what) = super::program::sanitizer(exe) {
        return Err(ProgramError::Sanitized(exe.to_path_buf(), what).into());
    }
    let counter_path = opts.work_dir.join("counters");
    let counters = CounterFile::create(&counter_path)
        .map_err(|e| QemuError::CounterFile(counter_path.clone(), e))?;
    let mut plugin_arg = format!(
        "{},out={},cmd={}",
        opts.plugin.display(),
        counter_path.display(),
        command_hex(argv)
    );
    if let Some((start, stop)) = opts.ssc_marks {
        plugin_arg.push_str(&format!(",ssc_start={start:#x},ssc_stop={stop:#x}"));
        if opts.ssc_once {
            plugin_arg.push_str(",ssc_once=1");
        }
    }
    let mut cmd = Command::new(&qemu);
    flopscope_counter_file::progress::tie_to_flopscope(&mut cmd);
    let cpu = super::cpu::model();
    cmd.arg("-cpu").arg(&cpu).arg("-plugin").arg(plugin_arg);
    // Tells the Rust markers (flopscope-markers) that this run is counted.
    cmd.env("FLOPSCOPE_COUNTING", "1");
    if stack_unlimited() && std::env::var_os("QEMU_STACK_SIZE").is_none() {
        // Under an unlimited stack limit QEMU gives the guest an 8 MiB stack,
        // where the program itself may grow its stack far deeper (it crashed
        // in a deep recursion): 1 GiB, for it and the programs it execs
        // (QEMU reads the variable; the guest sees it in its environment).
        cmd.env("QEMU_STACK_SIZE", UNLIMITED_STACK);
    }
    let ours = [&opts.exec_shim, &opts.likwid_markers].map(|p| p.as_deref());
    if let Some(preload) = super::program::preload_list(ours) {
        // The guest alone preloads the shim and the LIKWID markers (-E),
        // before the program's own preloads; QEMU itself must not.
        cmd.arg("-E").arg(format!("LD_PRELOAD={preload}"));
        cmd.env_remove("LD_PRELOAD");
    }
    if let Some(shim) = &opts.exec_shim {
        cmd.env("FLOPSCOPE_QEMU", &qemu)
            .env("FLOPSCOPE_PLUGIN", &opts.plugin)
            .env("FLOPSCOPE_OUT", &counter_path)
            .env("FLOPSCOPE_SHIM", shim)
            .env(super::cpu::CPU_ENV, &cpu);
    }
    let started = std::time::Instant::now();
    let mut child = cmd
        .args(&qargv)
        .spawn()
        .map_err(|e| QemuError::Spawn(qemu.clone(), e))?;
    let waited = flopscope_counter_file::progress::wait(
        &mut child,
        started,
        opts.progress,
        opts.linger,
        |t| {
            format!(
                "flopscope: {} instructions counted ({t:.1} s)",
                human(counters.instructions_so_far())
            )
        },
    )
    .map_err(|e| QemuError::Spawn(qemu.clone(), e))?;
    if !counters.attached() {
        if !has_plugin_support(&qemu)? {
            return Err(QemuError::NoPluginSupport(qemu));
        }
        return Err(QemuError::PluginNotLoaded(opts.plugin.clone()));
    }
    let main = counters.read().map_err(QemuError::Read)?;
    let mut report = report_of_run(
        "emulate",
        argv,
        &main,
        &counter_path,
        ExitStatus::from_std(waited.status),
        &waited.orphans.ended,
    );
    report.engine_time_s = Some(waited.elapsed.as_secs_f64());
    if let Some(w) =
        flopscope_counter_file::orphans::warning(&waited.orphans.stopped, opts.linger, true)
    {
        report.complete = false;
        report.warnings.push(w);
    }
    if opts.likwid_markers.is_some() {
        report.warnings.push(LIKWID_TAKEN_OVER.into());
    }
    Ok(EmulatedRun {
        report,
        unsupported: main.unsupported,
    })
}

/// `argv` as the plugin's `cmd=` argument: each argument ended by a NUL,
/// cut to the counter file's room, in hexadecimal (QEMU splits plugin
/// arguments at commas).
pub fn command_hex(argv: &[String]) -> String {
    let mut raw = Vec::new();
    for a in argv {
        raw.extend_from_slice(a.as_bytes());
        raw.push(0);
    }
    raw.truncate(flopscope_counter_file::layout::COMMAND_BYTES);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

fn human(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.2} G", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} M", n as f64 / 1e6),
        n => n.to_string(),
    }
}

/// The guest stack QEMU is given when the stack limit is unlimited.
const UNLIMITED_STACK: &str = "1024M";

/// Whether the soft limit on the stack is unlimited (`ulimit -s unlimited`).
fn stack_unlimited() -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit to fill.
    (unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut lim) } == 0)
        && lim.rlim_cur == libc::RLIM_INFINITY
}
