//! The native engine, CLI side: runs the program with the runtime
//! (crates/native-runtime, a preload library) that takes it over at its
//! first constructor and runs it from a code cache with counters added, then
//! reads the counter file the runtime wrote into a [`Report`]. A statically
//! linked program has no loader to preload through: its host executable
//! ([`NativeOptions::static_host`]) runs instead, and the runtime loads the
//! program into it and starts it at its entry point.
//!
//! ```no_run
//! use flopscope_engine_native::{NativeEngine, NativeOptions};
//! use flopscope_model::Engine;
//! let engine = NativeEngine {
//!     options: NativeOptions {
//!         runtime: "libflopscope_native_runtime.so".into(),
//!         work_dir: std::env::temp_dir(),
//!         follow_exec: true,
//!         progress: false,
//!         linger: std::time::Duration::from_secs(5),
//!         ssc_marks: None,
//!         ssc_once: false,
//!         likwid_markers: None,
//!         samples_dir: None,
//!         static_host: Some("flopscope-static-host".into()),
//!     },
//! };
//! let report = engine.count(&["./triad".to_string()]).unwrap();
//! println!("{} FLOP", report.summary.flop.total);
//! ```

mod elf;

use flopscope_counter_file::orphans;
use flopscope_counter_file::read::{CounterFile, Unsupported, UnsupportedKind};
use flopscope_counter_file::report::report_and_counts_of_run;
use flopscope_engine_qemu::host::program::{self, ProgramError};
use flopscope_model::vocab::{cpu_feature_key, hidden_cpu_features};
use flopscope_model::{ExitStatus, Report};
use std::path::PathBuf;
use std::process::Command;

/// The variable naming the counter file for the runtime.
pub const OUT_ENV: &str = "FLOPSCOPE_NATIVE_OUT";
/// The directory where the runtime writes `region-times.*` files (its
/// `region_times::ENV`): each marked region's wall time in the counted run.
pub const REGION_TIMES_ENV: &str = "FLOPSCOPE_NATIVE_REGION_TIMES";
/// The SSC mark values, for the runtime (its `regions::SSC_ENV`).
pub const SSC_ENV: &str = "FLOPSCOPE_NATIVE_SSC";
/// The directory the runtime samples the counted run into (its
/// `SAMPLES_ENV`); inherited by forked children and exec'd programs.
pub const SAMPLES_ENV: &str = "FLOPSCOPE_NATIVE_SAMPLES";

#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error(transparent)]
    Program(#[from] ProgramError),
    #[error("{0} is statically linked, and the native engine was given no host executable to load it in (NativeOptions::static_host); count it with --engine emulate")]
    Static(PathBuf),
    #[error("cannot run {0}: {1}")]
    Spawn(PathBuf, std::io::Error),
    #[error("cannot create the counter file {0}: {1}")]
    CounterFile(PathBuf, std::io::Error),
    #[error("cannot create the sample directory {0}: {1}")]
    SampleDir(PathBuf, std::io::Error),
    #[error("the native engine's runtime did not take the program over (it printed why above, if it loaded at all); the program ran uncounted, or not at all. Check that {0} exists and that the program is an x86-64 Linux executable")]
    NotAttached(PathBuf),
    #[error("reading the counts: {0}")]
    Read(String),
}

#[derive(Debug, Clone)]
pub struct NativeOptions {
    /// The runtime preload library.
    pub runtime: PathBuf,
    /// Directory for the counter files (removed by the caller).
    pub work_dir: PathBuf,
    /// Count programs the counted program starts with exec (each in its own
    /// counter file, merged into the job's totals).
    pub follow_exec: bool,
    /// Show the time counted so far on stderr (counts reach the counter
    /// file only when the program ends).
    pub progress: bool,
    /// How long processes the program started may run on after it ended
    /// before they are stopped (`flopscope_counter_file::orphans`).
    pub linger: std::time::Duration,
    /// SDE SSC mark values that begin and end the `ssc:START-STOP` region.
    pub ssc_marks: Option<(u32, u32)>,
    /// Only the first start..stop pair counts (SDE's marks without `:repeat`).
    pub ssc_once: bool,
    /// flopscope's LIKWID marker functions (a preload library), for a
    /// program that calls LIKWID's: preloaded after the runtime, they take
    /// the calls over and its LIKWID regions become flopscope's.
    pub likwid_markers: Option<PathBuf>,
    /// Sample the program counter of the counted run on per-thread CPU-time
    /// timers into this directory (the sampler's file format, read with
    /// `flopscope_sampler::read_dir`): the time per function and loop.
    pub samples_dir: Option<PathBuf>,
    /// The host executable of statically linked programs
    /// (crates/native-runtime/host): run with the runtime preloaded, which
    /// loads the program into it. `None`: static programs are refused.
    pub static_host: Option<PathBuf>,
}

pub struct NativeEngine {
    pub options: NativeOptions,
}

/// What the report says was not counted (a dynamically linked program).
pub const NOT_COUNTED: &str = "native engine: the dynamic loader's work before the take-over (loading and relocating the libraries) is not counted (it does no floating-point work); counts start at the runtime's constructor, which the loader runs before every other library's constructor";
/// What the report says of a statically linked program: all of it counted.
pub const STATIC_COUNTED: &str = "native engine: a statically linked program, loaded by the runtime and counted from its first instruction (its entry point): nothing of it ran before the counts start";
/// The variable naming the static program for the runtime in the host (its
/// `loader::STATIC_ENV`).
pub const STATIC_ENV: &str = "FLOPSCOPE_NATIVE_STATIC";
/// The variable naming the host for the runtime (its `loader::HOST_ENV`):
/// static programs the counted one starts with exec are loaded in it too.
pub const HOST_ENV: &str = "FLOPSCOPE_NATIVE_HOST";

impl flopscope_model::Engine for NativeEngine {
    fn name(&self) -> &'static str {
        "native"
    }

    fn runs_natively(&self) -> bool {
        false
    }

    fn check(&self, argv: &[String]) -> Result<(), flopscope_model::EngineError> {
        let exe = program::resolve(&argv[0]).map_err(NativeError::from)?;
        if let Some((program, _)) = static_program(&exe, argv)? {
            if self.options.static_host.is_none() {
                return Err(NativeError::Static(program).into());
            }
        }
        Ok(())
    }

    fn count(&self, argv: &[String]) -> Result<Report, flopscope_model::EngineError> {
        Ok(run(argv, &self.options)?)
    }
}

/// Runs `argv` with the runtime preloaded and reads the counts back.
pub fn run(argv: &[String], opts: &NativeOptions) -> Result<Report, NativeError> {
    let exe = program::resolve(&argv[0])?;
    // A static program runs in the host, which the runtime loads it into
    // (crates/native-runtime/src/loader.rs); the host gets its argv.
    let loaded = match static_program(&exe, argv)? {
        Some((program, args)) => match &opts.static_host {
            Some(host) => Some((host.clone(), program, args)),
            None => return Err(NativeError::Static(program)),
        },
        None => None,
    };
    let (file, run_argv) = match &loaded {
        Some((host, _, args)) => (host, args.as_slice()),
        None => (&exe, argv),
    };
    let counter_path = opts.work_dir.join("counters");
    let counters = CounterFile::create(&counter_path)
        .map_err(|e| NativeError::CounterFile(counter_path.clone(), e))?;
    // Absolute: an exec'd program may start elsewhere.
    let samples_dir = match &opts.samples_dir {
        Some(d) => Some(
            std::fs::create_dir_all(d)
                .and_then(|()| d.canonicalize())
                .map_err(|e| NativeError::SampleDir(d.clone(), e))?,
        ),
        None => None,
    };
    // The runtime first, then the LIKWID markers, then the program's own.
    let preload =
        program::preload_list([Some(opts.runtime.as_path()), opts.likwid_markers.as_deref()])
            .unwrap_or_default();
    let started = std::time::Instant::now();
    let mut cmd = Command::new(file);
    flopscope_counter_file::progress::tie_to_flopscope(&mut cmd);
    let mut child = cmd
        .arg0(&run_argv[0])
        .args(&run_argv[1..])
        .env("LD_PRELOAD", preload)
        .envs(
            asan_options(&std::env::var("ASAN_OPTIONS").unwrap_or_default())
                .map(|v| ("ASAN_OPTIONS", v)),
        )
        .envs(
            glibc_tunables(
                &std::env::var(HIDE_ENV).unwrap_or_default(),
                std::env::var("GLIBC_TUNABLES").ok().as_deref(),
            )
            .map(|v| ("GLIBC_TUNABLES", v)),
        )
        .env(OUT_ENV, &counter_path)
        .envs(loaded.as_ref().map(|(_, program, _)| (STATIC_ENV, program)))
        // Static programs the counted one execs start in the host too.
        .envs(opts.static_host.as_ref().map(|h| (HOST_ENV, h)))
        // Tells the Rust markers (flopscope-markers) that this run is counted.
        .env("FLOPSCOPE_COUNTING", "1")
        // Region wall times, taken by the runtime at the markers.
        .env(REGION_TIMES_ENV, &opts.work_dir)
        .envs((!opts.follow_exec).then_some(("FLOPSCOPE_NATIVE_NO_FOLLOW", "1")))
        .envs(samples_dir.as_ref().map(|d| (SAMPLES_ENV, d)))
        .envs(opts.ssc_marks.map(|(start, stop)| {
            let once = if opts.ssc_once { ",once" } else { "" };
            (SSC_ENV, format!("{start:#x},{stop:#x}{once}"))
        }))
        // Symbols bound at start, by the loader before the take-over: lazy
        // binding would run the loader's symbol lookup (and its XSAVE) from
        // the cache at every first call. A value the user set is kept
        // (LD_BIND_NOW= , empty, keeps lazy binding).
        .envs(
            std::env::var_os("LD_BIND_NOW")
                .is_none()
                .then_some(("LD_BIND_NOW", "1")),
        )
        .spawn()
        .map_err(|e| NativeError::Spawn(exe.clone(), e))?;
    let waited = flopscope_counter_file::progress::wait(
        &mut child,
        started,
        opts.progress,
        opts.linger,
        |t| format!("flopscope: counting under the native engine ({t:.1} s)"),
    )
    .map_err(|e| NativeError::Spawn(exe.clone(), e))?;
    let engine_time = waited.elapsed.as_secs_f64();
    if !counters.attached() {
        return Err(NativeError::NotAttached(opts.runtime.clone()));
    }
    let main = counters.read().map_err(NativeError::Read)?;
    let (mut report, processes) = report_and_counts_of_run(
        "native",
        argv,
        &main,
        &counter_path,
        ExitStatus::from_std(waited.status),
        &waited.orphans.ended,
    );
    report.engine_time_s = Some(engine_time);
    if let Some(w) = orphans::warning(&waited.orphans.stopped, opts.linger, true) {
        report.complete = false;
        report.warnings.push(w);
    }
    if let Some(u) = &main.unsupported {
        let died_of_sigill = matches!(&report.exit_status, ExitStatus::Signal(s) if s == "SIGILL");
        let message = match &u.kind {
            UnsupportedKind::MissingFeature(feature) => {
                report.complete &= !died_of_sigill;
                missing_feature_message(u, feature, died_of_sigill)
            }
            _ => {
                report.complete = false;
                format!("the native engine stopped the program: {}", u.text)
            }
        };
        report.warnings.insert(0, message);
    }
    if let Some(pc) = main.generated_code_pc {
        report.complete = false;
        report.warnings.insert(
            0,
            format!(
                "the program runs code from a writable page that the native engine could not write-protect (from {pc:#x}: a stack, where the engine leaves pages writable, or a full code cache): a change to that code after its first run would go unseen, so the counts may be wrong; count it with --engine emulate"
            ),
        );
    }
    if let Some(pc) = main.uncounted_state {
        report.warnings.push(format!(
            "XSAVE-family instructions, or AMX tile loads and stores, ran (the first in the block at {pc:#x}): the bytes they move depend on the processor's state (the components saved, the tile configuration) and are not counted by the native engine (the emulate engine counts XSAVE's; QEMU cannot run AMX). The program's own runtime may save the processor's state so (SBCL's does), or the dynamic loader's lazy binding: the native engine sets LD_BIND_NOW to avoid it, unless LD_BIND_NOW is set already"
        ));
    }
    if opts.likwid_markers.is_some() {
        report
            .warnings
            .push(flopscope_engine_qemu::host::run::LIKWID_TAKEN_OVER.into());
    }
    report.notes.push(
        if loaded.is_some() {
            STATIC_COUNTED
        } else {
            NOT_COUNTED
        }
        .into(),
    );
    // Over every process of the run: a JIT often runs in a program started
    // by a script (Erlang's `erl`), or in a child.
    let (writes, invalidated) = (
        processes.iter().map(|p| p.code_writes).sum::<u64>(),
        processes.iter().map(|p| p.blocks_invalidated).sum::<u64>(),
    );
    if writes + invalidated > 0 {
        report.notes.push(format!(
            "native engine: code written or changed at run time was followed: {writes} writes to pages of translated code caught, {invalidated} translated blocks invalidated and translated anew"
        ));
    }
    Ok(report)
}

use std::os::unix::process::CommandExt;

/// The statically linked program `argv` runs, with the argv the kernel
/// gives it, or `None` for a dynamically linked one: `exe` itself, or the
/// interpreter of a `#!` script (argv: interpreter, its argument, the
/// script, the script's arguments, as the kernel passes them).
fn static_program(
    exe: &std::path::Path,
    argv: &[String],
) -> Result<Option<(PathBuf, Vec<String>)>, NativeError> {
    Ok(match elf::kind(exe)? {
        elf::Kind::Static => Some((exe.to_path_buf(), argv.to_vec())),
        elf::Kind::Dynamic => None,
        elf::Kind::Script => {
            let full = program::qemu_argv(argv)?;
            let interp = program::resolve(&full[0])?;
            (elf::kind(&interp)? == elf::Kind::Static).then_some((interp, full))
        }
    })
}

/// AddressSanitizer's run-time library stops a program where it is not the
/// first library loaded ("ASan runtime does not come first in initial
/// library list"), and the engine's runtime is, as the first entry of
/// `LD_PRELOAD`. Its check is turned off (`verify_asan_link_order=0`,
/// added to the user's options unless they set it themselves). The order
/// matters to ASan for its interceptors to come first, and the runtime
/// defines no symbol that could shadow them (its dynamic symbol table
/// exports nothing). Programs without ASan ignore the variable; it is
/// inherited, so that programs the counted one starts are covered too (a
/// test driver running sanitized tests).
pub fn asan_options(theirs: &str) -> Option<String> {
    const OFF: &str = "verify_asan_link_order=0";
    if theirs.contains("verify_asan_link_order") {
        return None;
    }
    Some(if theirs.is_empty() {
        OFF.to_string()
    } else {
        format!("{theirs}:{OFF}")
    })
}

/// The variable naming the CPU features the engine treats as absent
/// (crates/native-runtime's cpu.rs reads it too).
pub use flopscope_model::vocab::HIDE_CPU_FEATURES_ENV as HIDE_ENV;

/// `GLIBC_TUNABLES` for a run whose `hidden` features (the
/// [`HIDE_ENV`] list) the engine treats as absent: glibc told to leave
/// them alone too (`glibc.cpu.hwcaps=-AVX2,...`), as it would on a
/// processor without them. Else glibc picks its string functions by the
/// real processor, and the first `strrchr` of the C library's start-up,
/// counted from the cache, ran an AVX-512 instruction the engine then
/// stopped with SIGILL, long before the program's own. `theirs`: the
/// user's value, kept; one that sets `glibc.cpu.hwcaps` itself is left
/// as it is. `None`: nothing to set.
pub fn glibc_tunables(hidden: &str, theirs: Option<&str>) -> Option<String> {
    // glibc's names of the features it selects functions by; a feature
    // hides those that need it (`hidden_cpu_features`).
    let glibc_name = |key: &str| -> Option<&'static str> {
        Some(match key {
            "ssse3" => "SSSE3",
            "sse41" => "SSE4_1",
            "sse42" => "SSE4_2",
            "avx" => "AVX",
            "avx2" => "AVX2",
            "fma" => "FMA",
            "f16c" => "F16C",
            "bmi1" => "BMI1",
            "bmi2" => "BMI2",
            "avx512f" => "AVX512F",
            "avx512vl" => "AVX512VL",
            "avx512bw" => "AVX512BW",
            "avx512dq" => "AVX512DQ",
            "avx512cd" => "AVX512CD",
            _ => return None,
        })
    };
    let off: Vec<&str> = hidden_cpu_features(hidden)
        .iter()
        .filter_map(|k| glibc_name(k))
        .collect();
    if off.is_empty() || theirs.is_some_and(|t| t.contains("glibc.cpu.hwcaps=")) {
        return None;
    }
    let hwcaps = format!(
        "glibc.cpu.hwcaps={}",
        off.iter()
            .map(|n| format!("-{n}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    Some(match theirs.filter(|t| !t.is_empty()) {
        Some(t) => format!("{t}:{hwcaps}"),
        None => hwcaps,
    })
}

/// The warning for an instruction of an extension this processor lacks.
fn missing_feature_message(u: &Unsupported, feature: &str, died: bool) -> String {
    let hidden = std::env::var(HIDE_ENV).is_ok_and(|v| {
        hidden_cpu_features(&v)
            .iter()
            .any(|h| *h == cpu_feature_key(feature))
    });
    let lacks = if hidden {
        "which FLOPSCOPE_HIDE_CPU_FEATURES hides from the native engine"
    } else {
        "which this processor lacks"
    };
    let rebuild = if feature.starts_with("AVX512") {
        "rebuild it without AVX-512 (for example -march=x86-64-v3 or -mno-avx512f)"
    } else {
        "rebuild it for an older instruction set (for example -march=x86-64-v2)"
    };
    let what = if died {
        "and the processor stopped it there with SIGILL, as it does without flopscope"
    } else {
        "and the processor raised SIGILL there, which the program handled"
    };
    format!(
        "the program reached `{}` at {:#x}, an instruction of {feature}, {lacks}, {what}: run it on a processor with {feature} or {rebuild}; counts up to that point are in the report",
        u.text, u.pc
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_features_are_hidden_from_glibc_too() {
        assert_eq!(glibc_tunables("", None), None);
        assert_eq!(glibc_tunables("sha,gfni", None), None);
        assert_eq!(
            glibc_tunables("avx512f", None).as_deref(),
            Some("glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD")
        );
        assert_eq!(
            glibc_tunables("AVX2, sse4.1,avx2", Some("glibc.malloc.arena_max=2")).as_deref(),
            Some(
                "glibc.malloc.arena_max=2:glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-SSE4_1"
            )
        );
        assert_eq!(
            glibc_tunables("avx2", Some("glibc.cpu.hwcaps=-AVX512F")),
            None,
            "the user's own hwcaps are left as they are"
        );
    }

    #[test]
    fn asan_options_gain_the_link_order_check_off_after_the_users_own() {
        let off = "verify_asan_link_order=0";
        assert_eq!(asan_options("").as_deref(), Some(off));
        assert_eq!(
            asan_options("exitcode=7").as_deref(),
            Some("exitcode=7:verify_asan_link_order=0")
        );
        assert_eq!(asan_options("verify_asan_link_order=1"), None);
    }

    #[test]
    fn static_programs_and_scripts_they_interpret_go_to_the_host() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let src = dir.join("p.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
        let exe = dir.join("p");
        let built = Command::new("gcc")
            .args(["-O2", "-static", "-o"])
            .arg(&exe)
            .arg(&src)
            .status()
            .expect("gcc runs (install gcc)");
        assert!(built.success());
        let script = dir.join("s");
        std::fs::write(&script, format!("#!{} -x\n", exe.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = |p: &std::path::Path| p.display().to_string();
        let got = static_program(&exe, &[s(&exe), "1".into()]).unwrap();
        assert_eq!(got, Some((exe.clone(), vec![s(&exe), "1".into()])));
        // The kernel's argv for a script: interpreter, its argument, script.
        let got = static_program(&script, &[s(&script), "1".into()]).unwrap();
        let argv = vec![s(&exe), "-x".into(), s(&script), "1".into()];
        assert_eq!(got, Some((exe.clone(), argv)));
        let sh = std::path::Path::new("/bin/sh");
        assert_eq!(static_program(sh, &["/bin/sh".into()]).unwrap(), None);
    }
}
