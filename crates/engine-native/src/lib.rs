//! The native engine, CLI side: runs the program with the runtime
//! (crates/native-runtime, a preload library) that takes it over at its
//! first constructor and runs it from a code cache with counters added, then
//! reads the counter file the runtime wrote into a [`Report`].
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
//!         ssc_marks: None,
//!         ssc_once: false,
//!         likwid_markers: None,
//!         samples_dir: None,
//!     },
//! };
//! let report = engine.count(&["./triad".to_string()]).unwrap();
//! println!("{} FLOP", report.summary.flop.total);
//! ```

mod elf;

use flopscope_counter_file::read::{CounterFile, Unsupported, UnsupportedKind};
use flopscope_counter_file::report::report_of_run;
use flopscope_engine_qemu::host::program::{self, ProgramError};
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
    #[error("{0} is statically linked: the native engine takes programs over through the dynamic loader (LD_PRELOAD); link it dynamically, or count it with --engine emulate")]
    Static(PathBuf),
    #[error("cannot run {0}: {1}")]
    Spawn(PathBuf, std::io::Error),
    #[error("cannot create the counter file {0}: {1}")]
    CounterFile(PathBuf, std::io::Error),
    #[error("cannot create the sample directory {0}: {1}")]
    SampleDir(PathBuf, std::io::Error),
    #[error("the native engine's runtime did not take the program over (it printed why above, if it loaded at all); the program ran uncounted. Check that {0} exists and that the program is a dynamically linked x86-64 executable")]
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
}

pub struct NativeEngine {
    pub options: NativeOptions,
}

/// What the report says was not counted.
pub const NOT_COUNTED: &str = "native engine: the dynamic loader and the shared libraries' constructors that ran before the take-over are not counted (they do no floating-point work in ordinary programs); counts start in the loader, just after the runtime's constructor";

impl flopscope_model::Engine for NativeEngine {
    fn name(&self) -> &'static str {
        "native"
    }

    fn runs_natively(&self) -> bool {
        false
    }

    fn check(&self, argv: &[String]) -> Result<(), flopscope_model::EngineError> {
        let exe = program::resolve(&argv[0]).map_err(NativeError::from)?;
        if elf::kind(&exe).map_err(NativeError::from)? == elf::Kind::Static {
            return Err(NativeError::Static(exe).into());
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
    if elf::kind(&exe)? == elf::Kind::Static {
        return Err(NativeError::Static(exe));
    }
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
    let mut child = Command::new(&exe)
        .arg0(&argv[0])
        .args(&argv[1..])
        .env("LD_PRELOAD", preload)
        .env(OUT_ENV, &counter_path)
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
    let status = flopscope_counter_file::progress::wait(&mut child, started, opts.progress, |t| {
        format!("flopscope: counting under the native engine ({t:.1} s)")
    })
    .map_err(|e| NativeError::Spawn(exe.clone(), e))?;
    let engine_time = started.elapsed().as_secs_f64();
    if !counters.attached() {
        return Err(NativeError::NotAttached(opts.runtime.clone()));
    }
    let main = counters.read().map_err(NativeError::Read)?;
    let mut report = report_of_run(
        "native",
        argv,
        &main,
        &counter_path,
        ExitStatus::from_std(status),
    );
    report.engine_time_s = Some(engine_time);
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
    if main.uncounted_state {
        report.warnings.push(
            "XSAVE-family instructions ran (the dynamic loader's lazy binding uses them): their bytes are not counted by the native engine; leave LD_BIND_NOW unset (the native engine then sets it) to avoid them".into(),
        );
    }
    if opts.likwid_markers.is_some() {
        report
            .warnings
            .push(flopscope_engine_qemu::host::run::LIKWID_TAKEN_OVER.into());
    }
    report.notes.push(NOT_COUNTED.into());
    if main.code_writes + main.blocks_invalidated > 0 {
        report.notes.push(format!(
            "native engine: code written or changed at run time was followed: {} writes to pages of translated code caught, {} translated blocks invalidated and translated anew",
            main.code_writes, main.blocks_invalidated
        ));
    }
    Ok(report)
}

use std::os::unix::process::CommandExt;

/// The warning for an instruction of an extension this processor lacks.
fn missing_feature_message(u: &Unsupported, feature: &str, died: bool) -> String {
    let hidden = std::env::var("FLOPSCOPE_HIDE_CPU_FEATURES").is_ok_and(|v| {
        v.split(',').any(|h| {
            h.trim().eq_ignore_ascii_case(feature)
                || h.trim()
                    .replace(['_', '.'], "")
                    .eq_ignore_ascii_case(&feature.replace('_', ""))
        })
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
