// The counted run sampled (NativeOptions::samples_dir): real C programs
// (gcc) counted by the real runtime (built by `runtime_lib`), their samples
// read with flopscope_sampler::read_dir and placed with the program's
// symbols (flopscope_symbols), as the CLI places them.

use flopscope_engine_native::{run, NativeOptions};
use flopscope_model::{ExitStatus, Report};
use flopscope_sampler::ProcessSamples;
use flopscope_symbols::{parse_maps, Symbolizer};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Held by every test here: after its program ends, a run waits for every
/// child this process has and reaps it (`orphans::wait_all`: flopscope
/// counts one program a process and waits for whatever it left running).
/// Tests sharing this process take turns, or one run would reap another
/// test's child (its compiler, its program) from under it.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runtime preload library, built once per test run as the CLI builds
/// it (crates/preload-build: release, `preload` feature, panic=abort, the C
/// compiler's static unwinder linked in when it has one), in a target
/// directory of its own so that it never waits on the outer build's lock.
fn runtime_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        flopscope_preload_build::preload(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../native-runtime"),
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("native-runtime"),
            "libflopscope_native_runtime.so",
            "the native runtime",
        )
    })
}

/// A scratch directory: the program, the counter files, the samples.
struct Scratch {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let tmp = tempfile::tempdir().expect("temporary directory");
        let root = tmp.path().canonicalize().expect("exists");
        Scratch { _tmp: tmp, root }
    }

    fn samples(&self) -> PathBuf {
        self.root.join("samples")
    }

    /// Compiles tests/c/<name>.c (gcc -O1: each loop stays in its function).
    fn compile(&self, name: &str) -> PathBuf {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
        let exe = self.root.join(name);
        let status = Command::new("gcc")
            .args(["-O1", "-g", "-Wall", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lpthread")
            .status()
            .expect("gcc runs (install gcc)");
        assert!(status.success(), "compiling {} failed", src.display());
        exe
    }

    /// Counts `exe args` under the native engine, sampled.
    fn count(&self, exe: &Path, args: &[&str]) -> Report {
        let work = self.root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let opts = NativeOptions {
            runtime: runtime_lib().to_path_buf(),
            work_dir: work,
            follow_exec: true,
            progress: false,
            linger: flopscope_counter_file::orphans::LINGER,
            ssc_marks: None,
            ssc_once: false,
            likwid_markers: None,
            samples_dir: Some(self.samples()),
            static_host: None,
        };
        let argv: Vec<String> = std::iter::once(exe.display().to_string())
            .chain(args.iter().map(|a| a.to_string()))
            .collect();
        run(&argv, &opts).expect("the native engine counts the program")
    }

    fn processes(&self) -> Vec<ProcessSamples> {
        flopscope_sampler::read_dir(&self.samples()).expect("the sample directory reads")
    }
}

/// Samples (intervals) per function, every sample placed in a file-backed
/// mapping of the process's maps: none in the code cache (anonymous) or in
/// the runtime (its time is the engine's, in `engine_intervals`).
fn per_function(p: &ProcessSamples) -> HashMap<String, u64> {
    per_instruction(p)
        .into_iter()
        .fold(HashMap::new(), |mut out, ((name, _), n)| {
            *out.entry(name).or_default() += n;
            out
        })
}

/// [`per_function`] by (function, offset of the sampled address in it).
fn per_instruction(p: &ProcessSamples) -> HashMap<(String, u64), u64> {
    let maps = parse_maps(p.maps_text.as_deref().expect("a maps file"));
    let runtime = runtime_lib().canonicalize().unwrap();
    let mut symbolizer = Symbolizer::new();
    let mut out = HashMap::new();
    for (&addr, &n) in &p.samples {
        let m = maps
            .iter()
            .find(|m| m.contains(addr))
            .unwrap_or_else(|| panic!("sample at {addr:#x} outside the executable mappings"));
        assert!(
            m.path.is_absolute() && m.path.is_file(),
            "sample at {addr:#x} in {} (the code cache?)",
            m.path.display()
        );
        assert_ne!(m.path, runtime, "sample at {addr:#x} in the runtime");
        let symbol = symbolizer.locate(m, addr).symbol;
        *out.entry((symbol.name, addr - symbol.start)).or_default() += n;
    }
    out
}

/// Offsets of `function`'s instructions in `exe` (objdump).
fn instruction_offsets(exe: &Path, function: &str) -> HashSet<u64> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--disassemble={function}"))
        .arg(exe)
        .output()
        .expect("objdump runs (install binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    let addrs: Vec<u64> = text
        .lines()
        .filter_map(|l| {
            let (a, rest) = l.trim_start().split_once(":\t")?;
            (!rest.is_empty()).then(|| u64::from_str_radix(a, 16).ok())?
        })
        .collect();
    let start = *addrs.iter().min().expect("the function disassembles");
    addrs.iter().map(|a| a - start).collect()
}

fn assert_exited_ok(r: &Report) {
    assert!(
        matches!(r.exit_status, ExitStatus::Code(0)),
        "exit status {:?}",
        r.exit_status
    );
}

/// The engine's share of the sampled time is a share.
fn engine_share(p: &ProcessSamples) -> f64 {
    let share = p.engine_intervals as f64 / (p.total + p.engine_intervals) as f64;
    assert!((0.0..1.0).contains(&share), "engine share {share}");
    share
}

/// heavy() does three times light()'s work: 3:1 of the samples, within four
/// binomial standard errors of the signals that fell in them (each signal a
/// Bernoulli draw of heavy-or-light; the kernel's tick sets how many came).
#[test]
fn time_follows_the_work_in_the_counted_run() {
    let _turn = one_at_a_time();
    let s = Scratch::new();
    let exe = s.compile("two");
    let r = s.count(&exe, &["60000000"]);
    assert_exited_ok(&r);
    let procs = s.processes();
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(p.exited && !p.handler_replaced && p.dropped == 0, "{p:#?}");
    assert_eq!((p.threads, p.thread_failures), (1, 0));
    assert_eq!(p.interval_s, 1e-3);
    // Each sample is on one of the function's own instructions (the cache
    // map gives the copied instruction, not only its block's start), and
    // the loops' samples spread over several of them. Where in the loop an
    // interrupt lands is the processor's doing: light's fall on two
    // instructions, one in five on the second (Zen 5), and once, in a run
    // on a loaded machine, all on one; so the spread is asked of the two
    // loops together.
    let by_insn = per_instruction(p);
    let mut spread = Vec::new();
    for name in ["heavy", "light"] {
        let offsets = instruction_offsets(&exe, name);
        let hit: Vec<u64> = by_insn
            .keys()
            .filter(|(f, _)| f == name)
            .map(|(_, o)| *o)
            .collect();
        assert!(
            hit.iter().all(|o| offsets.contains(o)),
            "{name}: sampled offsets {hit:x?}, instructions at {offsets:x?}"
        );
        spread.push((name, hit));
    }
    assert!(
        spread.iter().any(|(_, hit)| hit.len() >= 2),
        "each loop's samples on one instruction only: {spread:x?}"
    );
    let f = per_function(p);
    let (h, l) = (
        f.get("heavy").copied().unwrap_or(0),
        f.get("light").copied().unwrap_or(0),
    );
    assert!(h > 0 && l > 0, "{f:?}");
    assert!(
        (h + l) as f64 >= 0.9 * p.total as f64,
        "heavy {h} + light {l} of {}: {f:?}",
        p.total
    );
    let n = p.effective_signals * (h + l) as f64 / p.total as f64;
    assert!(n >= 40.0, "too few signals to judge: {n:.1} ({p:#?})");
    let share = h as f64 / (h + l) as f64;
    let se = (0.75 * 0.25 / n).sqrt();
    assert!(
        (share - 0.75).abs() <= 4.0 * se,
        "heavy's share {share:.3} ({h} of {}), expected 0.75 +- {:.3} (4 standard errors, {n:.1} signals)",
        h + l,
        4.0 * se
    );
    let engine = engine_share(p);
    // The intervals add up to the CPU time (less the loader's start and the
    // time after the last signal).
    let cpu = p.cpu_time_s.expect("exited: its CPU time is known");
    let sampled = (p.total + p.engine_intervals + p.dropped) as f64 * p.interval_s;
    assert!(
        sampled <= cpu + 0.002 && sampled >= 0.8 * cpu - 0.02,
        "sampled {sampled:.3} s, CPU {cpu:.3} s"
    );
    eprintln!(
        "two: {} signals, {} intervals (heavy {h}, light {l}, share {share:.3} +- {se:.3}), engine share {engine:.4}, CPU {cpu:.3} s",
        p.signals, p.total
    );
}

/// Two threads in two functions: both sampled, each timer armed.
#[test]
fn threads_are_sampled() {
    let _turn = one_at_a_time();
    let s = Scratch::new();
    let exe = s.compile("threads");
    let r = s.count(&exe, &["80000000"]);
    assert_exited_ok(&r);
    let procs = s.processes();
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(p.exited && !p.handler_replaced, "{p:#?}");
    assert_eq!((p.threads, p.thread_failures), (3, 0), "main thread + 2");
    let f = per_function(p);
    let (a, b) = (
        f.get("first_worker").copied().unwrap_or(0),
        f.get("second_worker").copied().unwrap_or(0),
    );
    assert!(a > 0 && b > 0, "{f:?}");
    // The same work each: neither thread is starved of samples.
    let share = a as f64 / (a + b) as f64;
    let n = p.effective_signals * (a + b) as f64 / p.total as f64;
    let se = (0.25 / n).sqrt();
    assert!(
        (share - 0.5).abs() <= 4.0 * se,
        "first_worker's share {share:.3} ({a} of {}), expected 0.5 +- {:.3}",
        a + b,
        4.0 * se
    );
    let engine = engine_share(p);
    eprintln!(
        "threads: {} signals, first {a}, second {b}, engine share {engine:.4}",
        p.signals
    );
}

/// A program installing its own SIGPROF handler (without SA_SIGINFO): it
/// read SIG_DFL before (exit status 3 otherwise), reads its own action back
/// (5 otherwise), its handler gets its profiling timer's signals (4
/// otherwise), and the run is sampled on: `burn_after`, the same work
/// once the handler is installed, has samples too. (The entry sharing
/// SIGPROF first read the siginfo the kernel writes only with SA_SIGINFO:
/// stale samples' siginfo on the stack swallowed the program's signals.)
#[test]
fn the_programs_own_sigprof_handler_gets_its_signals_and_sampling_goes_on() {
    let _turn = one_at_a_time();
    let s = Scratch::new();
    let exe = s.compile("own_sigprof");
    let r = s.count(&exe, &["30000000"]);
    assert_exited_ok(&r);
    let procs = s.processes();
    assert_eq!(procs.len(), 1, "{procs:#?}");
    let p = &procs[0];
    assert!(p.exited && !p.handler_replaced, "{p:#?}");
    let f = per_function(p);
    for name in ["burn", "burn_after"] {
        assert!(f.get(name).copied().unwrap_or(0) > 0, "{name}: {f:?}");
    }
}

/// A forked child samples into a file of its own, with its timer armed
/// again (timers are not inherited); each process's samples are in its own
/// function.
#[test]
fn forked_children_are_sampled_apart() {
    let _turn = one_at_a_time();
    let s = Scratch::new();
    let exe = s.compile("fork");
    let r = s.count(&exe, &["60000000"]);
    assert_exited_ok(&r);
    let procs = s.processes();
    assert_eq!(procs.len(), 2, "{procs:#?}");
    let mut functions = Vec::new();
    for p in &procs {
        assert!(
            p.exited && p.threads == 1 && p.thread_failures == 0,
            "{p:#?}"
        );
        engine_share(p);
        let f = per_function(p);
        let (c, w) = (
            f.get("child_work").copied().unwrap_or(0),
            f.get("parent_work").copied().unwrap_or(0),
        );
        assert!(c == 0 || w == 0, "one process ran both: {f:?}");
        functions.push(if c > 0 {
            "child_work"
        } else if w > 0 {
            "parent_work"
        } else {
            "none"
        });
    }
    functions.sort();
    assert_eq!(functions, ["child_work", "parent_work"]);
}
