//! LIKWID's marker API called as functions (`likwid_markerStartRegion("x")`,
//! linked with `-llikwid`): a program linked against flopscope's own
//! liblikwid (crates/markers/likwid), and the same program linked against
//! LIKWID's library, counted unchanged with its calls taken over by the
//! library flopscope preloads. LIKWID cannot be installed here, so its
//! library is a stand-in built from `stand_in.c`: empty marker functions,
//! as far as the dynamic loader can tell LIKWID's `liblikwid.so.5`.
//! Regions are compared exactly with the programs' closed forms (in their
//! header comments, crates/markers/tests/likwid) under both engines; a
//! program without LIKWID gets no preload.
//!
//! Each test builds what it needs in a directory of its own.

use crate::support::{count_ok_with, FLOPSCOPE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markers() -> PathBuf {
    repo().join("crates/markers")
}

fn programs() -> PathBuf {
    markers().join("tests/likwid")
}

/// The region kernels (tests/kernels/regions: regions.h, regions_kernels.f90).
fn kernels() -> PathBuf {
    repo().join("tests/kernels/regions")
}

/// Runs a build command and fails the test with its output if it fails.
fn run_build(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `DIR/liblikwid.so.5` from `source`, with LIKWID's soname, and the
/// `liblikwid.so` link `-llikwid` finds: as likwid/likwid.c's header
/// comment tells users to build flopscope's (`hidden`: -fvisibility=hidden).
fn liblikwid(dir: &Path, source: &Path, hidden: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    run_build(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2"])
            .args(hidden.then_some("-fvisibility=hidden"))
            .arg("-Wl,-soname,liblikwid.so.5")
            .arg("-o")
            .arg(dir.join("liblikwid.so.5"))
            .arg(source),
    );
    std::os::unix::fs::symlink("liblikwid.so.5", dir.join("liblikwid.so")).unwrap();
    dir.to_path_buf()
}

fn flopscope_liblikwid(dir: &Path) -> PathBuf {
    liblikwid(dir, &markers().join("likwid/likwid.c"), true)
}

fn stand_in_liblikwid(dir: &Path) -> PathBuf {
    liblikwid(dir, &programs().join("stand_in.c"), false)
}

/// likwid_api.c linked with `-llikwid` from `lib` (found there at run time).
fn c_program(dir: &Path, lib: &Path) -> PathBuf {
    let exe = dir.join("likwid_api");
    run_build(
        Command::new("gcc")
            .args(["-O2", "-Wall", "-I"])
            .arg(markers().join("include"))
            .arg("-I")
            .arg(kernels())
            .arg("-o")
            .arg(&exe)
            .arg(programs().join("likwid_api.c"))
            .arg("-L")
            .arg(lib)
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-llikwid"),
    );
    exe
}

/// likwid_api.f90 (after the kernels' module) linked with `-llikwid` from `lib`.
fn fortran_program(dir: &Path, lib: &Path) -> PathBuf {
    let exe = dir.join("likwid_api_f");
    run_build(
        Command::new("gfortran")
            .args(["-O2", "-Wall", "-J"])
            .arg(dir)
            .arg("-o")
            .arg(&exe)
            .arg(kernels().join("regions_kernels.f90"))
            .arg(programs().join("likwid_api.f90"))
            .arg("-L")
            .arg(lib)
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-llikwid"),
    );
    exe
}

/// The exit code of `exe args` run on its own.
fn run_alone(exe: &Path, args: &[u64]) -> i32 {
    Command::new(exe)
        .args(args.iter().map(u64::to_string))
        .status()
        .unwrap_or_else(|e| panic!("running {exe:?}: {e}"))
        .code()
        .unwrap_or(-1)
}

/// The report of `exe args` counted by `engine` (no native timed run),
/// which must be of a complete run that exited 0.
fn counted(engine: &str, exe: &Path, args: &[u64]) -> Value {
    let args: Vec<String> = args.iter().map(u64::to_string).collect();
    count_ok_with(engine, exe, &args, &[]).0
}

/// `flopscope count --runs 1 --show-output --format json -o FILE -- exe
/// args`: the counted run and one timed run; the report (which must be of a
/// complete run, exit 0) and flopscope's standard output (the program's,
/// both runs).
fn count_timed(exe: &Path, args: &[u64], engine: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--engine", engine, "--runs", "1", "--show-output"])
        .args(["--format", "json", "-o"])
        .arg(&json)
        .arg("--")
        .arg(exe)
        .args(args.iter().map(u64::to_string))
        .output()
        .expect("running flopscope");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{exe:?} under {engine}:\n{stderr}"
    );
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no report for {exe:?}: {e}\n{stderr}"));
    let r: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(r["complete"], true, "{exe:?} under {engine}:\n{stderr}");
    (r, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The closed form of one part of a report: fp64 adds and multiplies.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Flop {
    add: u64,
    mul: u64,
}

fn int(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// What `part` (a region, `unmarked`, the whole report) counted.
fn flop_of(part: &Value) -> (u64, u64, Flop) {
    let f = Flop {
        add: int(&part["flop_by_op"]["add"]),
        mul: int(&part["flop_by_op"]["mul"]),
    };
    (int(&part["flop"]["total"]), int(&part["flop"]["fp64"]), f)
}

/// Collects every mismatch of a test, so that one does not hide the others.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: String, expected: T, got: T) {
        if expected != got {
            self.0
                .push(format!("{what}: expected {expected:?}, got {got:?}"));
        }
    }

    /// `part` did exactly `e`: fp64 adds and multiplies only.
    fn part(&mut self, what: &str, part: &Value, e: Flop) {
        let total = e.add + e.mul;
        self.eq(format!("{what}: flop"), (total, total, e), flop_of(part));
    }

    /// Exactly `regions` (name, entries, FLOP), then `unmarked` and the total.
    fn report(&mut self, what: &str, r: &Value, regions: &[(&str, u64, Flop)], unmarked: Flop) {
        let names: Vec<&str> = r["regions"]
            .as_array()
            .expect("regions is an array")
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        self.eq(
            format!("{what}: region names"),
            regions.iter().map(|g| g.0).collect::<Vec<_>>(),
            names,
        );
        let mut total = unmarked;
        for (name, entries, e) in regions {
            let Some(g) = r["regions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["name"] == *name)
            else {
                continue;
            };
            self.eq(
                format!("{what}: {name}: entries"),
                *entries,
                int(&g["entries"]),
            );
            self.part(&format!("{what}: region {name}"), g, *e);
            total.add += e.add;
            total.mul += e.mul;
        }
        self.part(&format!("{what}: unmarked"), &r["unmarked"], unmarked);
        self.part(&format!("{what}: whole program"), r, total);
    }

    /// Whether the report says LIKWID's calls were taken over.
    fn taken_over(&mut self, what: &str, r: &Value, expected: bool) {
        let said = r["warnings"]
            .as_array()
            .expect("warnings is an array")
            .iter()
            .any(|w| w.as_str().unwrap().contains("taken over by flopscope"));
        self.eq(
            format!("{what}: the LIKWID take-over warning"),
            expected,
            said,
        );
    }

    /// Every region of a run with the native timed run has a positive time.
    fn timed(&mut self, what: &str, r: &Value) {
        for g in r["regions"].as_array().unwrap() {
            let t = g["native_time_s"].as_f64();
            if !t.is_some_and(|t| t > 0.0) {
                self.0
                    .push(format!("{what}: region {}: native_time_s {t:?}", g["name"]));
            }
        }
    }

    fn assert_none(self) {
        assert!(
            self.0.is_empty(),
            "{} mismatches:\n  {}",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

// likwid_api.c: usage likwid_api N REPS M K.
const ARGS: [u64; 4] = [1000, 5, 8, 100];

/// likwid_api.c's closed form for `ARGS` (see its header comment).
fn c_regions() -> ([(&'static str, u64, Flop); 2], Flop) {
    let [n, reps, m, k] = ARGS;
    let triad = Flop {
        add: n * reps,
        mul: n * reps,
    };
    let matmul = Flop {
        add: m * m * m,
        mul: m * m * m,
    };
    let unmarked = Flop { add: 0, mul: 3 * k };
    ([("triad", reps, triad), ("matmul", 1, matmul)], unmarked)
}

const ENGINES: [&str; 2] = ["emulate", "native"];

#[test]
fn a_program_linked_against_flopscopes_liblikwid_counts_each_region_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let lib = flopscope_liblikwid(&dir.path().join("lib"));
    let exe = c_program(dir.path(), &lib);
    // Its GetRegion reports no calls: the program exits 0 on its own too.
    assert_eq!(run_alone(&exe, &ARGS), 0, "{exe:?} run on its own");
    let (regions, unmarked) = c_regions();
    let mut c = Checks::default();
    for engine in ENGINES {
        let r = counted(engine, &exe, &ARGS);
        c.report(engine, &r, &regions, unmarked);
        // Its calls are flopscope's markers already: nothing to take over.
        c.taken_over(engine, &r, false);
    }
    let (r, _) = count_timed(&exe, &ARGS, "emulate");
    c.report("with the native timed run", &r, &regions, unmarked);
    c.timed("with the native timed run", &r);
    c.assert_none();
}

#[test]
fn a_program_built_against_likwid_is_counted_unchanged_its_calls_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let lib = stand_in_liblikwid(&dir.path().join("lib"));
    let exe = c_program(dir.path(), &lib);
    // On its own it calls the stand-in, whose GetRegion counts 1 call: exit 3.
    assert_eq!(run_alone(&exe, &ARGS), 3, "{exe:?} run on its own");
    let (regions, unmarked) = c_regions();
    let mut c = Checks::default();
    for engine in ENGINES {
        // Exit 0: flopscope's GetRegion answered, in the counted run.
        let r = counted(engine, &exe, &ARGS);
        c.report(engine, &r, &regions, unmarked);
        c.taken_over(engine, &r, true);
    }
    // The native timed run takes the calls over too (region times; the same
    // exit status as the counted run, so no warning that they differ).
    let (r, _) = count_timed(&exe, &ARGS, "native");
    c.report("with the native timed run", &r, &regions, unmarked);
    c.timed("with the native timed run", &r);
    c.assert_none();
}

#[test]
fn a_fortran_program_built_against_likwid_is_counted_unchanged_its_calls_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let lib = stand_in_liblikwid(&dir.path().join("lib"));
    let exe = fortran_program(dir.path(), &lib);
    let (n, reps) = (1000, 4);
    let daxpy = Flop {
        add: n * reps,
        mul: n * reps,
    };
    let mut c = Checks::default();
    for engine in ENGINES {
        let r = counted(engine, &exe, &[n, reps]);
        let what = format!("Fortran, {engine}");
        c.report(
            &what,
            &r,
            &[("daxpy", reps, daxpy)],
            Flop { add: 0, mul: 0 },
        );
        c.taken_over(&what, &r, true);
    }
    c.assert_none();
}

#[test]
fn a_program_without_likwid_gets_no_preload() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("plain");
    run_build(
        Command::new("gcc")
            .args(["-O2", "-Wall", "-o"])
            .arg(&exe)
            .arg(programs().join("plain.c")),
    );
    let mut c = Checks::default();
    for engine in ENGINES {
        // Both runs print the LD_PRELOAD they were started with.
        let (r, stdout) = count_timed(&exe, &[], engine);
        c.taken_over(engine, &r, false);
        let lines: Vec<&str> = stdout.lines().collect();
        c.eq(format!("{engine}: lines printed"), 2, lines.len());
        for line in lines {
            c.eq(
                format!("{engine}: {line}: flopscope's LIKWID library preloaded"),
                false,
                line.contains("likwid"),
            );
        }
    }
    c.assert_none();
}
