//! Code written at run time by real JIT compilers from Debian's packages,
//! counted by the native engine as it runs: Numba (LLVM) compiling and
//! recompiling a Python function, LuaJIT compiling a hot loop into a trace,
//! PyPy tracing and compiling a Python loop,
//! OpenJDK's JVM (its interpreter, generated at start-up), Node.js's V8
//! (an interpreter and an optimizing compiler that deoptimizes and
//! compiles again), Erlang's BEAM (which writes its code through a
//! second mapping of its memory) and SBCL (whose code lives in an image
//! mapped from its core file).
//! Each is compared with its closed form where the JIT leaves one (every
//! multiply of the recurrence), and exactly with the emulate engine.
//!
//! Regions are marked through a small C library of marker functions
//! (kernels/jit/marks.c) that Python's ctypes and LuaJIT's ffi call, and
//! through JNI methods (kernels/jit/jni_marks.c) for Java.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const PYTHON: &str = "/usr/bin/python3";
const LUAJIT: &str = "/usr/bin/luajit";
const NODE: &str = "/usr/bin/node";

fn libmarks() -> PathBuf {
    let include = crate::support::engines::markers_include();
    build("jit/marks.c", &["-shared", "-fPIC", "-O2", "-I", &include])
}

fn script(name: &str) -> String {
    kernel_dir().join("jit").join(name).display().to_string()
}

fn region<'a>(r: &'a Report, name: &str) -> &'a Value {
    r.0["regions"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["name"] == name))
        .unwrap_or_else(|| panic!("no region {name} in {}", r.0["regions"]))
}

fn op(region: &Value, op: &str) -> u64 {
    region["flop_by_op"][op].as_u64().unwrap_or(0)
}

/// Region `name` of `r` holds exactly `n` multiplies and `n` adds, and
/// nothing else: `n` steps of the recurrence x = x * a + b.
fn expect_recurrence(r: &Report, name: &str, n: u64) {
    let g = region(r, name);
    assert_eq!(
        (op(g, "mul"), op(g, "add"), g["flop"]["total"].as_u64()),
        (n, n, Some(2 * n)),
        "{} region {name}: {}",
        r.0["engine"],
        g["flop_by_op"]
    );
}

/// Counts `interpreter args` under both engines: complete, no warning,
/// the same FLOP in every region and in all. Returns (emulate, native, the
/// program's output under the native engine).
fn both_engines(interpreter: &str, args: &[String], regions: &[&str]) -> (Report, Report, String) {
    let mut reports = Vec::new();
    let mut stdout = String::new();
    for engine in ["emulate", "native"] {
        let run = count_with(engine, Path::new(interpreter), args, &[]);
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        let r = run.report.expect("a report");
        assert_eq!(r.0["complete"], true, "{engine}: {:?}", r.warnings());
        reports.push(r);
        stdout = run.stdout;
    }
    let (e, n) = (reports.remove(0), reports.remove(0));
    for name in regions {
        let (re, rn) = (region(&e, name), region(&n, name));
        for k in ["flop", "flop_by_op", "flop_by_width", "fp_instructions"] {
            assert_eq!(re[k], rn[k], "region {name}: {k}: emulate vs native");
        }
    }
    (e, n, stdout)
}

#[test]
fn numba_code_is_counted_after_compiling_and_after_recompiling() {
    let n = 100_000u64;
    let args = [
        script("recurrence.py"),
        libmarks().display().to_string(),
        n.to_string(),
    ];
    let (e, native, _) = both_engines(PYTHON, &args, &["compiled", "recompiled"]);
    for r in [&e, &native] {
        for name in ["compiled", "recompiled"] {
            let g = region(r, name);
            assert_eq!(g["entries"], 1);
            expect_recurrence(r, name, n);
        }
    }
}

#[test]
fn luajit_traces_are_counted_as_they_run() {
    let n = 1_000_000u64;
    let args = [
        script("recurrence.lua"),
        libmarks().display().to_string(),
        n.to_string(),
    ];
    let (e, native, _) = both_engines(LUAJIT, &args, &["loop"]);
    assert_eq!(e.0["flop"], native.0["flop"], "whole program");
    let g = region(&native, "loop");
    assert_eq!(op(g, "mul"), n, "{}", g["flop_by_op"]);
    // The interpreted iterations add their loop counter too: a few, before
    // the loop is hot and compiled.
    let add = op(g, "add");
    assert!(
        add > n && add < n + 1000,
        "add FLOP {add} for {n} iterations"
    );
}

/// PyPy's tracing JIT (guards, bridges, code patched as traces are
/// attached) on a float loop in region "loop": the region equal under both
/// engines (FLOP, by op, by width, instructions by kind), and from N to 2N
/// exactly N more multiplies under the native engine: the interpreted
/// iterations and the tracing cost the same whatever N.
#[test]
fn pypy_traces_are_counted_as_they_run() {
    const PYPY: &str = "/usr/bin/pypy3";
    let args = |n: u64| {
        [
            script("trace.py"),
            libmarks().display().to_string(),
            n.to_string(),
        ]
    };
    let n = 200_000u64;
    let (_, native, stdout) = both_engines(PYPY, &args(n), &["loop"]);
    assert_eq!(stdout, "2.0\n");
    let twice = count_ok_with("native", Path::new(PYPY), &args(2 * n), &[]);
    let more = op(region(&twice, "loop"), "mul") - op(region(&native, "loop"), "mul");
    assert_eq!(more, n, "multiplies from {n} to {} steps", 2 * n);
}

/// OpenJDK 17 (`-Xint`: its template interpreter, which the JVM generates
/// at start-up) running a float recurrence marked through JNI: the JVM's
/// start-up probes the processor with RFLAGS.AC set and checks the
/// program counter of a fault it provokes, and must run under the native
/// engine as it does natively; the region counts exactly its closed form
/// under both engines.
#[test]
fn a_java_recurrence_is_counted_exactly() {
    let n = 200_000u64;
    let javac =
        std::fs::canonicalize("/usr/bin/javac").expect("javac (scripts/setup.sh installs it)");
    let home = javac
        .parent()
        .and_then(Path::parent)
        .expect("the JDK's home");
    let include = crate::support::engines::markers_include();
    let jni =
        [home.join("include"), home.join("include/linux")].map(|p| format!("-I{}", p.display()));
    let lib = build(
        "jit/jni_marks.c",
        &["-shared", "-fPIC", "-O2", "-I", &include, &jni[0], &jni[1]],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&lib, dir.path().join("libjnimarks.so")).unwrap();
    let out = std::process::Command::new(&javac)
        .arg("-J-XX:-UsePerfData")
        .arg("-d")
        .arg(dir.path())
        .arg(kernel_dir().join("jit/Recurrence.java"))
        .output()
        .expect("running javac");
    assert!(
        out.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = dir.path().display().to_string();
    // -XX:-UsePerfData: no /tmp/hsperfdata_USER left behind by the JVM.
    let args = [
        "-Xint".to_string(),
        "-XX:-UsePerfData".to_string(),
        format!("-Djava.library.path={d}"),
        "-cp".to_string(),
        d.clone(),
        "Recurrence".to_string(),
        n.to_string(),
    ];
    let (e, native, interpreted) = both_engines("/usr/bin/java", &args, &["loop"]);
    for r in [&e, &native] {
        expect_recurrence(r, "loop", n);
    }
    // With its JIT compilers (C1, then C2, with on-stack replacement): the
    // JVM rewrites and patches the code it runs. The result is bit-for-bit
    // the interpreter's (Java's floating point is strict), and the region
    // holds at least the loop's FLOP: the JVM's compilation policy adds
    // some of its own on the thread, as many as its timing makes it run.
    let java = |extra: &[&str]| {
        let all: Vec<&str> = extra
            .iter()
            .copied()
            .chain(args[1..].iter().map(String::as_str))
            .collect();
        let run = count_with("native", Path::new("/usr/bin/java"), &all, &[]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        (run.stdout, run.report.expect("a report"))
    };
    for round in 0..3 {
        let (compiled, r) = java(&[]);
        assert_eq!(compiled, interpreted, "round {round}: the program's output");
        assert_eq!(r.0["complete"], true, "round {round}: {:?}", r.warnings());
        let g = region(&r, "loop");
        assert!(
            op(g, "mul") >= n && op(g, "add") >= n,
            "round {round}: {}",
            g["flop_by_op"]
        );
    }
}

/// Node.js 18 (V8: its Ignition interpreter's handlers and the TurboFan
/// code it compiles are written at run time, and a deoptimized function's
/// code is thrown away and compiled again) running a float recurrence
/// (kernels/jit/recurrence.js) with `--predictable`, which makes V8 do the
/// same work in every run: the native engine's counts equal the emulate
/// engine's exactly, whole program, and the output is V8's alone. The
/// recurrence's 2 N multiplies and 2 N adds are all there; V8's own
/// arithmetic (its start-up, heap statistics) adds under 1%.
#[test]
fn node_v8_code_is_counted_exactly() {
    let n = 300_000u64;
    let args = [
        "--predictable".to_string(),
        "--single-threaded".to_string(),
        script("recurrence.js"),
        n.to_string(),
    ];
    let alone = std::process::Command::new(NODE)
        .args(&args)
        .output()
        .expect("node (nodejs, scripts/setup.sh)");
    assert!(alone.status.success(), "node alone: {alone:?}");
    let (e, native, stdout) = both_engines(NODE, &args, &[]);
    assert_eq!(
        stdout,
        String::from_utf8_lossy(&alone.stdout),
        "the program's output"
    );
    for k in ["flop", "flop_by_op", "flop_by_width", "fp_instructions"] {
        assert_eq!(e.0[k], native.0[k], "whole program: {k}: emulate vs native");
    }
    let ops = native.flop_by_op();
    for o in ["mul", "add"] {
        let extra = ops[o].checked_sub(2 * n);
        assert!(
            extra.is_some_and(|x| x < n / 100),
            "{o}: {} for 2 x {n} steps",
            ops[o]
        );
    }
}

/// Node.js running kernels/jit/recurrence.js for `n` steps, V8 writing a
/// perf map (`--perf-basic-prof`) and its log of code events into `logs`
/// (else into the working directory), deterministically.
fn node_with_perf_map(logs: &Path, n: u64) -> [String; 7] {
    [
        "--perf-basic-prof".to_string(),
        "--no-logfile-per-isolate".to_string(),
        format!("--logfile={}", logs.join("v8.log").display()),
        "--predictable".to_string(),
        "--single-threaded".to_string(),
        script("recurrence.js"),
        n.to_string(),
    ]
}

/// Removes the perf map the process counted in `r` wrote.
fn remove_perf_map(r: &Report) {
    let pid = r.0["pid"].as_u64().expect("the counted process's pid");
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
}

/// The loops of function `name` in `r`.
fn loops_of<'a>(r: &'a Report, name: &str) -> Vec<&'a Value> {
    r.0["loops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["function"] == name)
        .collect()
}

/// V8's name for the TurboFan code of recurrence.js's `run` (V8 names the
/// script by its path resolved).
fn turbofan_run() -> String {
    let path = std::fs::canonicalize(script("recurrence.js")).unwrap();
    format!("JS:*run {}:27:13", path.display())
}

/// V8 names its generated code in a perf map (`--perf-basic-prof`:
/// `/tmp/perf-<pid>.map`), and the rows of generated code take those
/// names under both engines (`JS:*run .../recurrence.js:27:13`, the
/// TurboFan code of `run`), with its loops, instead of one row a page
/// (`[anonymous]+0x7f...`). Every named row's FLOP are equal under both
/// engines, and the code no entry names does no floating-point work. The
/// maps and the log V8 wrote are removed after.
#[test]
fn node_s_generated_code_is_named_from_its_perf_map() {
    let n = 300_000u64;
    let logs = tempfile::tempdir().unwrap();
    let args = node_with_perf_map(logs.path(), n);
    let (e, native, _) = both_engines(NODE, &args, &[]);
    remove_perf_map(&e);
    remove_perf_map(&native);
    let jit_rows = |r: &Report| -> std::collections::BTreeMap<String, u64> {
        r.0["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["module"] == "[anonymous]")
            .map(|f| {
                let flop = f["flop"]["total"].as_u64().unwrap();
                (f["name"].as_str().unwrap().to_string(), flop)
            })
            .collect()
    };
    let run = turbofan_run();
    let named = |rows: &std::collections::BTreeMap<String, u64>| {
        rows.iter()
            .filter(|(name, _)| name.starts_with("JS:"))
            .map(|(k, v)| (k.clone(), *v))
            .collect::<std::collections::BTreeMap<String, u64>>()
    };
    let (re, rn) = (jit_rows(&e), jit_rows(&native));
    assert_eq!(
        named(&re),
        named(&rn),
        "named generated code: emulate vs native"
    );
    for (r, rows) in [(&e, &re), (&native, &rn)] {
        let engine = &r.0["engine"];
        assert!(
            rows.get(&run).is_some_and(|flop| *flop > n),
            "{engine}: no row {run:?} with the recurrence's FLOP: {rows:?}"
        );
        let unnamed: u64 = rows
            .iter()
            .filter(|(name, _)| name.starts_with("[anonymous]+"))
            .map(|(_, flop)| flop)
            .sum();
        assert_eq!(
            unnamed, 0,
            "{engine}: FLOP in unnamed generated code: {rows:?}"
        );
        assert!(!loops_of(r, &run).is_empty(), "{engine}: no loop of {run}");
    }
}

/// The counted run's own samples fall in V8's generated code too, and are
/// placed there by address (its code lies outside every file): the
/// TurboFan code of `run`, which does most of the work, gets time and
/// samples, and so do its loops; they were all dropped as unplaced.
#[test]
fn node_s_generated_code_gets_time_from_the_counted_run_s_samples() {
    let logs = tempfile::tempdir().unwrap();
    let args = node_with_perf_map(logs.path(), 3_000_000);
    let run = count_sampled_with("native", Path::new(NODE), &args, &[]);
    let r = ok_report(run, Path::new(NODE), &args);
    remove_perf_map(&r);
    let name = turbofan_run();
    let run_row = r.function(&name).unwrap_or_else(|| panic!("no row {name}"));
    let samples = run_row["samples"].as_u64().unwrap_or(0);
    assert!(
        samples > 0 && run_row["time_s"].as_f64().is_some_and(|t| t > 0.0),
        "{name}: {samples} samples, sampling {}",
        r.0["sampling"]
    );
    let loop_samples: u64 = loops_of(&r, &name)
        .iter()
        .map(|l| l["samples"].as_u64().unwrap_or(0))
        .sum();
    assert!(loop_samples > 0, "no samples in the loops of {name}");
}

/// Erlang/OTP 25's BEAM compiles every module it loads to machine code
/// and writes it through a writable view of a memory file whose other view
/// is executable. Before the engine followed writes through such a view,
/// its stale translations crashed BEAM (SIGSEGV at start-up); the emulate
/// engine (QEMU) still cannot run it (README, limits). A fold summing the
/// square roots of 0..n-1: each one through `math:sqrt`, so n square
/// roots in all, whatever else the runtime computes.
#[test]
fn erlang_beam_code_written_through_its_second_view_is_counted() {
    let n = 1_000_000u64;
    let expr = format!(
        "S = lists:foldl(fun(I, A) -> A + math:sqrt(I) end, 0.0, lists:seq(0, {})), io:format(\"~p~n\", [S]), halt().",
        n - 1
    );
    let args = ["-noshell".to_string(), "-eval".to_string(), expr];
    let alone = std::process::Command::new("/usr/bin/erl")
        .args(&args)
        .output()
        .expect("erl (erlang-base, scripts/setup.sh)");
    assert!(alone.status.success(), "erl alone: {alone:?}");
    // With attribution: its rows sum to the totals (`count_as` checks),
    // which they did not while `erl_child_setup`, ending a moment after
    // BEAM, could be read by the attribution and not by the totals
    // (tests/processes.rs, orphans). Its `open()` errors stay its own
    // (errno: native::errno_set_by_a_failed_call_...).
    let run = count_as(
        "native",
        &["--no-native"],
        Path::new("/usr/bin/erl"),
        &args,
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        String::from_utf8_lossy(&alone.stdout),
        "the program's output"
    );
    let r = run.report.expect("a report");
    assert_eq!(r.0["complete"], true, "{:?}", r.warnings());
    assert_eq!(
        r.flop_by_op().get("sqrt").copied().unwrap_or(0),
        n,
        "{}",
        r.0["flop_by_op"]
    );
    // Its writes through the second view were caught (the note counts
    // every process of the run: BEAM is started by the `erl` script).
    let notes = r.0["notes"].to_string();
    let caught = notes
        .split("followed: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok());
    assert!(caught.is_some_and(|n| n > 0), "no writes caught: {notes}");
}

/// SBCL compiles a script's functions to machine code as it loads it and
/// runs them from its dynamic space, which, like all its compiled code,
/// is mapped from its core file, not an ELF file: the recurrence's region
/// counts its closed form exactly under both engines (the same FLOP in
/// all), and the core's code is named a page at a time
/// (`sbcl.core+0x25c6000`), not an instruction at a time, which made a
/// 224 MB report of 179,000 one-instruction functions for this script.
#[test]
fn sbcl_code_compiled_into_its_core_is_counted_and_named_by_page() {
    let n = 1_000_000u64;
    let args = [
        "--script".to_string(),
        script("recurrence.lisp"),
        libmarks().display().to_string(),
        n.to_string(),
    ];
    let (e, native, stdout) = both_engines("/usr/bin/sbcl", &args, &["loop"]);
    assert_eq!(stdout, "2.0d0\n");
    assert_eq!(e.0["flop"], native.0["flop"], "whole program");
    for r in [&e, &native] {
        expect_recurrence(r, "loop", n);
        let core: Vec<&Value> = r.0["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["module"] == "/usr/lib/sbcl/sbcl.core")
            .collect();
        let by_page = |f: &&Value| {
            let name = f["name"].as_str().unwrap();
            let offset = name.strip_prefix("sbcl.core+0x").unwrap_or("1");
            u64::from_str_radix(offset, 16).is_ok_and(|o| o % 4096 == 0)
        };
        assert!(!core.is_empty() && core.iter().all(by_page), "{core:?}");
        // The recurrence's page holds its FLOP, all of them.
        assert!(
            core.iter().any(|f| f["flop"]["total"] == 2 * n),
            "{}",
            r.0["engine"]
        );
    }
}

/// Racket (Chez Scheme underneath) runs machine code it compiled into
/// pages of its heap that also take its boot files' bytes, read with
/// `read` into them: under the native engine, which keeps pages of code
/// that ran read-only to see them rewritten, those reads failed with
/// EFAULT and Racket stopped at start-up ("error reading from ~a",
/// SIGABRT). It now runs, and its region counts the closed form under
/// both engines. (The whole program's counts differ by a few FLOP from
/// run to run of Racket itself, so only the region is compared.)
#[test]
fn racket_reads_its_boot_files_into_pages_of_code_and_is_counted() {
    let n = 100_000u64;
    let args = [
        script("recurrence.rkt"),
        libmarks().display().to_string(),
        n.to_string(),
    ];
    let (e, native, stdout) = both_engines("/usr/bin/racket", &args, &["loop"]);
    assert_eq!(stdout, "2.0\n");
    for r in [&e, &native] {
        expect_recurrence(r, "loop", n);
        assert!(r.warnings().is_empty(), "{:?}", r.warnings());
    }
}

/// QEMU's user mode, a JIT itself (it translates its guest's code into a
/// buffer of its own and rewrites the jumps between translations; it
/// write-protects the guest's pages of code and, from its SIGSEGV handler,
/// invalidates what a write there changed), run under the native engine
/// with guests that rewrite their own code, use threads and signal
/// handlers, or end with a status. It died of SIGSEGV at its first write
/// into its code buffer from that handler (SIGSEGV blocked there: the
/// engine's write-protection fault killed it); its guests loaded the
/// runtime through the `LD_PRELOAD` they were given, and counted
/// themselves into the same file (QEMU running a triad counted the
/// guest's 2,000,000 FLOP besides its own few hundred). Each guest now
/// runs as under QEMU alone, with the same output and exit status, and
/// the report is complete.
#[test]
fn qemu_user_mode_runs_under_the_native_engine() {
    let qemu = Path::new("/usr/bin/qemu-x86_64");
    let guests = [
        (
            build(
                "native/code_written_with_segv_blocked.c",
                &["-O2", "-pthread"],
            ),
            vec!["1000"],
        ),
        (
            build("native/smc_loop.c", &["-O2"]),
            vec!["1001", "branchy"],
        ),
        (build("exit3.c", &["-O2"]), vec![]),
        // The environment the guest gets: as under QEMU alone.
        (build("native/print_ld_preload.c", &["-O2"]), vec![]),
    ];
    for (guest, args) in &guests {
        let alone = std::process::Command::new(qemu)
            .arg(guest)
            .args(args)
            .output()
            .expect("running qemu-x86_64");
        let mut all = vec![guest.display().to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        let what = format!("qemu-x86_64 {}", all.join(" "));
        let run = count_with("native", qemu, &all, &[]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (
                alone.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&alone.stdout).as_ref()
            ),
            "{what} under the native engine, against QEMU alone:\n{}",
            run.stderr
        );
        let r = run.report.expect("a report");
        assert_eq!(r.0["complete"], true, "{what}: {:?}", r.warnings());
    }
}
