//! Statically linked programs under the native engine: loaded by its
//! runtime into the host executable and counted from their entry point,
//! with the same report as a dynamically linked program. Static C with
//! glibc and with musl, a static PIE, static Fortran and static OpenMP
//! (two threads) equal their closed forms and the emulate engine (FLOP
//! whole-program; bytes and access sizes over the `program` region where
//! the kernel can carry it, as in native.rs); their thread state (TLS,
//! errno, the stack protector's canary) stays theirs while the runtime
//! works on their threads, with and without `wrfsbase`; they start as the
//! kernel starts them (argv, environment, stdin, stdout, exit status, the
//! auxiliary vector, the heap); signals, crashes, threads ending the
//! process, fork and exec (static programs exec'd by static or dynamic
//! ones) behave as for dynamic programs; `--engine auto` picks the native
//! engine.

use crate::support::engines::{differences, with_region};
use crate::support::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const STATIC: &[&str] = &["-O2", "-msse2", "-static"];
const STATIC_FMA: &[&str] = &["-O2", "-mavx2", "-mfma", "-static"];
const STATIC_PIE: &[&str] = &["-O2", "-mavx2", "-mfma", "-static-pie"];
/// Set: the runtime switches `fs` with `arch_prctl`, not `wrfsbase`.
const NO_FSGSBASE: (&str, &str) = ("FLOPSCOPE_NATIVE_NO_FSGSBASE", "1");

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `tests/kernels/<source>` built with musl-gcc (`-static`), once per test
/// run; `None`, said on the terminal, where musl-gcc is missing
/// (scripts/setup.sh installs Debian's musl-tools).
fn build_musl(source: &str, flags: &[&str]) -> Option<PathBuf> {
    if Command::new("musl-gcc").arg("--version").output().is_err() {
        let line =
            format!("SKIPPED musl builds of {source}: musl-gcc not found (install musl-tools)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
        return None;
    }
    Some(build_by(
        "musl-gcc",
        source,
        &flags_with(flags, &["-static"]),
    ))
}

/// Counts `exe` under both engines (glibc pinned to the same functions in
/// both, `cpu::SAME_GLIBC_EVERYWHERE`: a static glibc reads GLIBC_TUNABLES
/// too) and lists every difference; returns the native report.
fn both_engines(
    f: &mut Failures,
    what: &str,
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    region_too: bool,
) -> Report {
    let mut env = env.to_vec();
    env.push(cpu::SAME_GLIBC_EVERYWHERE);
    let e = count_ok_with("emulate", exe, args, &env);
    let n = count_ok_with("native", exe, args, &env);
    f.extend(differences(what, &e, &n, region_too));
    n
}

/// [`static_noted`], a failure of `what` when not.
fn expect_static_note(f: &mut Failures, what: &str, r: &Report) {
    if !static_noted(r) {
        f.push(format!("{what}: notes {}", r.0["notes"]));
    }
}

/// The note a static program's report carries, and not the loader's.
fn static_noted(r: &Report) -> bool {
    let notes: Vec<&str> = r.0["notes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    notes
        .iter()
        .any(|n| n.contains("statically linked program"))
        && !notes.iter().any(|n| n.contains("dynamic loader"))
}

/// One multiply and one add per element (one FMA with -mfma).
fn mul_add(e: Expect, fma: bool, elements: u64) -> Expect {
    if fma {
        e.op("fma", 2 * elements)
    } else {
        e.op("add", elements).op("mul", elements)
    }
}

#[test]
fn static_c_with_glibc_and_a_static_pie_equal_closed_forms_and_the_emulate_engine() {
    let (n, reps) = (1000u64, 10u64);
    let args = [n.to_string(), reps.to_string()];
    let args = strs(&args);
    let mut f = Failures::default();
    for flags in [STATIC, STATIC_FMA, STATIC_PIE] {
        let flags = with_region(flags);
        let exe = build("triad.c", &strs(&flags));
        let what = format!("triad.c [{}]", flags.join(" "));
        let r = both_engines(&mut f, &what, &exe, &args, &[], true);
        let e = mul_add(
            Expect::new().flop("fp64", 2 * n * reps),
            flags.iter().any(|f| f == "-mfma"),
            n * reps,
        );
        f.expect(&what, &r, &e);
        expect_static_note(&mut f, &what, &r);
    }
    // Intrinsics: the instruction forms are fixed, rows and widths checked.
    let exe = build("fma.c", STATIC_FMA);
    let r = count_ok_with("native", &exe, &[n.to_string()], &[]);
    f.expect("fma.c static", &r, &Expect::fma_chains(n));
    f.assert_none();
}

#[test]
fn static_c_with_musl_equals_closed_forms_and_the_emulate_engine() {
    let mut f = Failures::default();
    let (n, reps) = (1000u64, 10u64);
    let args = [n.to_string(), reps.to_string()];
    let args = strs(&args);
    for flags in [&["-O2", "-msse2"][..], &["-O2", "-mavx2", "-mfma"]] {
        let Some(exe) = build_musl("triad.c", flags) else {
            return;
        };
        let what = format!("triad.c musl [{}]", flags.join(" "));
        let r = both_engines(&mut f, &what, &exe, &args, &[], false);
        let e = mul_add(
            Expect::new().flop("fp64", 2 * n * reps),
            flags.contains(&"-mfma"),
            n * reps,
        );
        f.expect(&what, &r, &e);
    }
    if let Some(exe) = build_musl("fma.c", &["-O2", "-mavx2", "-mfma"]) {
        let r = count_ok_with("native", &exe, &[n.to_string()], &[]);
        f.expect("fma.c musl", &r, &Expect::fma_chains(n));
        expect_static_note(&mut f, "fma.c musl", &r);
    }
    f.assert_none();
}

#[test]
fn static_fortran_equals_its_closed_form_and_the_emulate_engine() {
    let (n, reps) = (1000u64, 10u64);
    let args = [n.to_string(), reps.to_string()];
    let mut f = Failures::default();
    for flags in [STATIC, STATIC_FMA] {
        let exe = build("daxpy.f90", flags);
        let what = format!("daxpy.f90 [{}]", flags.join(" "));
        let r = both_engines(&mut f, &what, &exe, &strs(&args), &[], false);
        let e = mul_add(
            Expect::new().flop("fp64", 2 * n * reps),
            flags.contains(&"-mfma"),
            n * reps,
        );
        f.expect(&what, &r, &e);
    }
    f.assert_none();
}

#[test]
fn static_openmp_with_two_threads_equals_its_closed_form_every_run() {
    let exe = build("omp_triad.c", &["-O2", "-msse2", "-fopenmp", "-static"]);
    let (n, reps) = (1000u64, 4u64);
    let args = [n.to_string(), reps.to_string()];
    let two = [("OMP_NUM_THREADS", "2")];
    let e = Expect::new()
        .flop("fp64", 2 * n * reps)
        .op("add", n * reps)
        .op("mul", n * reps);
    let mut f = Failures::default();
    both_engines(
        &mut f,
        "omp_triad.c static",
        &exe,
        &strs(&args),
        &two,
        false,
    );
    for run in 0..10 {
        let env: &[(&str, &str)] = if run % 2 == 0 {
            &two
        } else {
            &[("OMP_NUM_THREADS", "2"), NO_FSGSBASE]
        };
        let r = count_ok_with("native", &exe, &args, env);
        let what = format!("omp_triad.c static, 2 threads, run {run}");
        f.expect(&what, &r, &e);
        let rows = r.0["threads"].as_array().expect("threads");
        let sum: u64 = rows
            .iter()
            .map(|t| t["flop"]["total"].as_u64().unwrap())
            .sum();
        if rows.len() != 2 || sum != 2 * n * reps {
            f.push(format!("{what}: {} thread rows, {sum} FLOP", rows.len()));
        }
    }
    f.assert_none();
}

#[test]
fn the_program_s_thread_state_stays_its_own() {
    let (threads, n) = (3u64, 2000u64);
    let args = [threads.to_string(), n.to_string()];
    let flags = ["-O2", "-msse2", "-pthread", "-fstack-protector-all"];
    let mut programs = vec![(
        "glibc",
        build("static/tls_guard.c", &flags_with(&flags, &["-static"])),
    )];
    programs.extend(build_musl("static/tls_guard.c", &flags).map(|p| ("musl", p)));
    let e = Expect::new()
        .flop("fp64", (threads + 1) * n)
        .op("add", (threads + 1) * n);
    let mut f = Failures::default();
    for (libc, exe) in &programs {
        for env in [&[][..], &[NO_FSGSBASE]] {
            let run = count_with("native", exe, &args, env);
            let what = format!("tls_guard ({libc}) {env:?}");
            if run.code != 0 {
                f.push(format!("{what}: exit {}\n{}", run.code, run.stderr));
                continue;
            }
            let r = run.report.expect("a report");
            f.expect(&what, &r, &e);
        }
    }
    f.assert_none();
}

/// Runs `exe args` with `input` on stdin and STARTUP_VALUE set, natively
/// (`flopscope: None`) or under `flopscope count` with these arguments;
/// its exit code and stdout.
fn run_startup(exe: &Path, args: &[&str], flopscope: Option<&[&str]>) -> (i32, String) {
    let mut cmd = match flopscope {
        Some(options) => {
            let mut c = Command::new(FLOPSCOPE);
            c.arg("count").args(options).arg("--").arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(args).env("STARTUP_VALUE", "kept as it is");
    let out = output_with_input(&mut cmd, b"one line of input\n");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("malloc: fine"),
        "{exe:?} {flopscope:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), stdout)
}

#[test]
fn a_static_program_starts_as_the_kernel_starts_it() {
    let mut programs = vec![
        ("glibc", build("static/startup.c", &["-O2", "-static"])),
        (
            "static PIE",
            build("static/startup.c", &["-O2", "-static-pie"]),
        ),
    ];
    programs.extend(build_musl("static/startup.c", &["-O2"]).map(|p| ("musl", p)));
    let args = ["5", "an argument", ""];
    let mut f = Failures::default();
    for (what, exe) in &programs {
        let (code, own) = run_startup(exe, &args, None);
        assert_eq!(code, 5, "{what} natively");
        for line in [
            "AT_PHDR the program's",
            "AT_ENTRY _start",
            "AT_BASE 0",
            "AT_RANDOM 16 bytes",
            "loading variable unseen",
            "brk grows, shrinks, grows zeroed: yes",
        ] {
            assert!(own.contains(line), "{what} natively: {line}\n{own}");
        }
        for engine_args in [
            &["--engine", "native"][..],
            &["--engine", "native", "--no-native"],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("r.json");
            let mut options = engine_args.to_vec();
            options.extend(["-o", json.to_str().unwrap()]);
            let (code, counted) = run_startup(exe, &args, Some(&options));
            if code != 5 || counted != own {
                f.push(format!(
                    "{what} {engine_args:?}: exit {code}, output\n{counted}\nwhere the program itself gives\n{own}"
                ));
            }
            let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let r = Report(r);
            if r.0["exit_status"] != 5 || r.0["complete"] != true || r.flop("total") != 0 {
                f.push(format!(
                    "{what}: exit_status {} complete {} flop {}",
                    r.0["exit_status"], r.0["complete"], r.0["flop"]
                ));
            }
            expect_static_note(&mut f, what, &r);
        }
    }
    f.assert_none();
}

#[test]
fn signals_crashes_and_threads_ending_the_process_as_for_dynamic_programs() {
    let (n, m) = (50u64, 10u64);
    let mut signals = vec![(
        "glibc",
        build("native/signals.c", &["-O2", "-msse2", "-static"]),
    )];
    signals.extend(build_musl("native/signals.c", &["-O2", "-msse2"]).map(|p| ("musl", p)));
    let e = Expect::signal_handlers(n, m);
    let mut f = Failures::default();
    for (libc, exe) in &signals {
        for env in [&[][..], &[NO_FSGSBASE]] {
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("r.json");
            let out = Command::new(FLOPSCOPE)
                .args(["count", "--engine", "native", "-o"])
                .arg(&json)
                .arg("--")
                .arg(exe)
                .args([n.to_string(), m.to_string()])
                .envs(env.iter().copied())
                .output()
                .unwrap();
            let what = format!("signals.c ({libc}) {env:?}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            if out.status.code() != Some(0) || stdout != format!("usr1 {n} usr2 {n}\n") {
                f.push(format!(
                    "{what}: exit {:?}, stdout {stdout:?}\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
            let r = Report(serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap());
            f.expect(&what, &r, &e);
        }
    }
    // A crash: the counts up to it, the signal, flopscope's 128 + 11.
    let n = 1000u64;
    let exe = build("segv.c", STATIC_FMA);
    let run = count_with("native", &exe, &[n.to_string()], &[]);
    let r = run.report.expect("a report for a crashed program");
    if run.code != 128 + 11 || r.0["exit_status"] != "signal:SIGSEGV" || r.0["complete"] != false {
        f.push(format!(
            "segv.c static: exit {}, {} complete {}",
            run.code, r.0["exit_status"], r.0["complete"]
        ));
    }
    f.expect("segv.c static", &r, &Expect::segv(n));
    // The last thread's exit ends the process with its status (the host's
    // own threads do not keep it alive), or a thread's exit(7) does.
    let exe = build(
        "native/thread_exits.c",
        &["-O2", "-msse2", "-pthread", "-static"],
    );
    for (mode, status) in [(1, 0), (2, 7)] {
        let run = count_with("native", &exe, &[mode.to_string(), n.to_string()], &[]);
        let what = format!("thread_exits.c static mode {mode}");
        let Some(r) = run.report else {
            f.push(format!("{what}: no report\n{}", run.stderr));
            continue;
        };
        if run.code != status || r.0["exit_status"] != status || r.0["complete"] != true {
            f.push(format!("{what}: exit {}, {}", run.code, r.0["exit_status"]));
        }
        f.expect(
            &what,
            &r,
            &Expect::new().flop("fp64", 3 * n).op("add", 3 * n),
        );
    }
    f.assert_none();
}

#[test]
fn forked_children_and_exec_d_static_programs_are_counted() {
    let mut f = Failures::default();
    // A static parent that forks: parent 300 multiplies, child 700.
    let forker = build("processes/forker.c", &["-O2", "-static"]);
    let r = count_ok_with("native", &forker, &["300", "700"], &[]);
    if r.flop("total") != 1000 || r.child_flop() != [700] {
        f.push(format!(
            "forker static: {} FLOP, children {:?}",
            r.flop("total"),
            r.child_flop()
        ));
    }
    // Static programs started with exec, by a static program, a dynamic
    // one and a shell script, are loaded and counted as the first one was.
    let scale = build("processes/scale.c", &["-O2", "-static"]);
    let scale_path = scale.to_str().unwrap();
    for spawn in [
        build("static/spawn.c", &["-O2", "-static"]),
        build("static/spawn.c", &["-O2"]),
    ] {
        let r = count_ok_with("native", &spawn, &[scale_path, "1000"], &[]);
        if r.flop("total") != 1000 || r.child_flop() != [1000] {
            f.push(format!(
                "{spawn:?} {scale_path} 1000: {} FLOP, children {:?}",
                r.flop("total"),
                r.child_flop()
            ));
        }
    }
    let script = kernel_dir().join("processes/run_two.sh");
    let r = count_ok_with("native", &script, &[scale_path, "1000", "3000"], &[]);
    if r.flop("total") != 4000 || r.child_flop() != [1000, 3000] {
        f.push(format!(
            "run_two.sh with a static scale: {} FLOP, children {:?}",
            r.flop("total"),
            r.child_flop()
        ));
    }
    f.assert_none();
}

#[test]
fn auto_counts_a_static_program_natively_without_a_warning() {
    let exe = build("triad.c", STATIC);
    // `auto` is the default engine: the same as giving none.
    let r = count_ok_with("auto", &exe, &["1000", "10"], &[]);
    assert_eq!(r.0["engine"], "native");
    assert_eq!(r.0["complete"], true);
    assert_eq!(r.flop("total"), 20_000);
    assert_eq!(r.0["warnings"], serde_json::json!([]), "{}", r.0);
    assert!(static_noted(&r), "{}", r.0["notes"]);
}

/// `--runs` times a static program in uninstrumented runs, which the
/// sampler's preload library cannot enter: the report says its rows have
/// no time, and how to get it (it said nothing, with "every 0.000 ms").
#[test]
fn timed_runs_of_a_static_program_say_they_were_not_sampled() {
    let exe = build("triad.c", STATIC);
    let run = count_as("auto", &["--runs", "1"], &exe, &["1000", "10"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.expect("a report");
    let said = r.warnings().iter().any(|w| {
        w.starts_with("time per function: no process of the timed runs was sampled (a statically linked program does not load the sampler's preload library)")
    });
    assert!(said, "{:?}", r.warnings());
    assert_eq!(r.0["sampling"]["samples"], 0);
}
