//! Regions: every kind of marker (flopscope.h, the LIKWID header, SDE's SSC
//! marks, the Fortran module, the Rust crate), OpenMP threads, nesting,
//! repeats, mismatched ends and native region times. The programs live in
//! `tests/kernels/regions/`, each with its closed form in its header comment;
//! every region's counts, the unmarked remainder and the total are compared
//! exactly with it.
//!
//! Self-contained: builds and runs its programs with its own helpers below.

use crate::support::engines::REGION_KEYS;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

const FLOPSCOPE: &str = env!("CARGO_BIN_EXE_flopscope");
/// glibc pinned alike under both engines (see the support module).
const SAME_GLIBC: (&str, &str) = crate::support::cpu::SAME_GLIBC_EVERYWHERE;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markers() -> PathBuf {
    repo().join("crates/markers")
}

fn programs() -> PathBuf {
    repo().join("tests/kernels/regions")
}

/// Builds `key` once per test run with `build(exe)`, which must write the
/// executable `exe`; returns it. Each build goes to a private name first and
/// is renamed into place, so concurrent test runs never run a half-written file.
fn built(key: &str, build: impl FnOnce(&Path)) -> PathBuf {
    type Cache = Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>;
    static BUILT: OnceLock<Cache> = OnceLock::new();
    let slot = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key.to_string())
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("regions");
        std::fs::create_dir_all(&dir).unwrap();
        let name: String = key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let exe = dir.join(&name);
        let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
        build(&tmp);
        std::fs::rename(&tmp, &exe).unwrap();
        exe
    })
    .clone()
}

/// Runs a build command and fails the test with its output if it fails.
fn run_build(mut cmd: Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gcc -O2 -I crates/markers/include FLAGS tests/kernels/regions/SOURCE`.
fn gcc(source: &str, flags: &[&str]) -> PathBuf {
    built(&format!("{source} {}", flags.join(" ")), |exe| {
        let mut cmd = Command::new("gcc");
        cmd.args(["-O2", "-Wall", "-I"])
            .arg(markers().join("include"))
            .args(flags);
        cmd.arg("-o").arg(exe).arg(programs().join(source));
        run_build(cmd);
    })
}

/// regions.c with one kind of marker.
fn regions_c(flags: &[&str]) -> PathBuf {
    gcc("regions.c", flags)
}

/// The Fortran program with the flopscope module, in a private directory for
/// gfortran's .mod files.
fn fortran() -> PathBuf {
    built("regions.f90", |exe| {
        let mods = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("gfortran");
        cmd.args(["-O2", "-Wall", "-J"])
            .arg(mods.path())
            .arg("-I")
            .arg(markers().join("include"));
        cmd.arg("-o").arg(exe);
        // Modules before the files that use them.
        cmd.arg(markers().join("fortran/flopscope.f90"))
            .arg(markers().join("fortran/flopscope_fortran.c"));
        cmd.arg(programs().join("regions_kernels.f90"))
            .arg(programs().join("regions.f90"));
        run_build(cmd);
    })
}

/// The `regions` example of the flopscope-markers crate, built in release
/// mode in its own target directory (so that it never waits for the build
/// lock of the tests' own target directory).
fn rust_example() -> PathBuf {
    built("rust example regions", |exe| {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("regions-rust");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from(env!("CARGO")));
        let mut cmd = Command::new(cargo);
        cmd.current_dir(repo()).args([
            "build",
            "--release",
            "-p",
            "flopscope-markers",
            "--example",
            "regions",
        ]);
        cmd.arg("--target-dir").arg(&target);
        run_build(cmd);
        std::fs::copy(target.join("release/examples/regions"), exe).unwrap();
    })
}

/// What one `flopscope count` run gave.
struct Run {
    code: i32,
    stderr: String,
    report: Value,
}

/// `flopscope count --format json -o FILE OPTIONS -- exe ARGS`.
fn count(exe: &Path, args: &[u64], options: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--format", "json", "-o"])
        .arg(&json)
        .args(options)
        .arg("--")
        .arg(exe)
        .args(args.iter().map(u64::to_string))
        .output()
        .expect("running flopscope");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no report for {exe:?} {args:?}: {e}\n{stderr}"));
    let report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("report of {exe:?} is not JSON: {e}\n{text}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stderr,
        report,
    }
}

/// A run that must succeed: exit code 0, `exit_status` 0, `complete`.
fn count_ok(exe: &Path, args: &[u64], options: &[&str]) -> Value {
    let run = count(exe, args, options);
    assert_eq!(
        run.code, 0,
        "flopscope count {options:?} -- {exe:?} {args:?} exited {}:\n{}",
        run.code, run.stderr
    );
    assert_eq!(
        run.report["exit_status"], 0,
        "exit_status of {exe:?} {args:?}:\n{}",
        run.stderr
    );
    assert_eq!(
        run.report["complete"], true,
        "complete of {exe:?} {args:?}:\n{}",
        run.stderr
    );
    run.report
}

/// Without the timed native run: counts only.
const COUNT_ONLY: &[&str] = &["--no-native"];

fn region_names(r: &Value) -> Vec<String> {
    r["regions"]
        .as_array()
        .expect("regions is an array")
        .iter()
        .map(|g| g["name"].as_str().unwrap().to_string())
        .collect()
}

fn region<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["regions"]
        .as_array()
        .expect("regions is an array")
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no region {name:?}; the report has {:?}", region_names(r)))
}

fn int(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not an integer: {v}"))
}

const PRECISIONS: [&str; 4] = ["fp32", "fp16", "bf16", "x87"];
const OPS: [&str; 9] = [
    "add", "sub", "mul", "div", "sqrt", "fma", "minmax", "rcp", "other",
];

/// The closed form of one part of a report (a region, `unmarked`, the
/// whole): fp64 multiplies and adds only, as in every program here.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Flop {
    add: u64,
    mul: u64,
}

impl Flop {
    fn total(self) -> u64 {
        self.add + self.mul
    }
}

impl std::ops::Add for Flop {
    type Output = Flop;
    fn add(self, o: Flop) -> Flop {
        Flop {
            add: self.add + o.add,
            mul: self.mul + o.mul,
        }
    }
}

fn mul(n: u64) -> Flop {
    Flop { add: 0, mul: n }
}

/// n multiplies and n adds.
fn mul_add(n: u64) -> Flop {
    Flop { add: n, mul: n }
}

/// Collects every mismatch of a test, so that one does not hide the others.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn eq<T: PartialEq + std::fmt::Debug>(
        &mut self,
        what: impl std::fmt::Display,
        expected: T,
        got: T,
    ) {
        if expected != got {
            self.0
                .push(format!("{what}: expected {expected:?}, got {got:?}"));
        }
    }

    fn that(&mut self, what: impl std::fmt::Display, ok: bool) {
        if !ok {
            self.0.push(format!("{what}: not so"));
        }
    }

    /// `flop` and `flop_by_op` of `part` are exactly `e`: fp64 only, add
    /// and mul only.
    fn flop(&mut self, what: &str, part: &Value, e: Flop) {
        self.eq(
            format!("{what}: flop.total"),
            e.total(),
            int(&part["flop"]["total"], "flop.total"),
        );
        self.eq(
            format!("{what}: flop.fp64"),
            e.total(),
            int(&part["flop"]["fp64"], "flop.fp64"),
        );
        for p in PRECISIONS {
            self.eq(format!("{what}: flop.{p}"), 0, int(&part["flop"][p], p));
        }
        for op in OPS {
            let expected = match op {
                "add" => e.add,
                "mul" => e.mul,
                _ => 0,
            };
            self.eq(
                format!("{what}: flop_by_op.{op}"),
                expected,
                int(&part["flop_by_op"][op], op),
            );
        }
    }

    /// Region `name` was entered `entries` times and did exactly `e`.
    fn region(&mut self, r: &Value, name: &str, entries: u64, e: Flop) {
        let g = region(r, name);
        self.eq(
            format!("region {name}: entries"),
            entries,
            int(&g["entries"], "entries"),
        );
        self.flop(&format!("region {name}"), g, e);
    }

    /// The report has exactly these regions, these unmarked counts, and
    /// `total` FLOP in all.
    fn whole(&mut self, r: &Value, names: &[&str], unmarked: Flop, total: Flop) {
        self.eq(
            "region names",
            names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            region_names(r),
        );
        self.flop("unmarked", &r["unmarked"], unmarked);
        self.flop("whole program", r, total);
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

/// Region `name`, or `unmarked`.
fn part<'a>(r: &'a Value, name: &str) -> &'a Value {
    if name == "unmarked" {
        &r["unmarked"]
    } else {
        region(r, name)
    }
}

/// `bytes.<dir>` of `part`.
fn bytes(part: &Value, dir: &str) -> i64 {
    int(&part["bytes"][dir], "bytes") as i64
}

// regions.c: usage regions N REPS M K.
const N: u64 = 1000;
const REPS: u64 = 5;
const M: u64 = 8;
const K: u64 = 100;

/// regions.c's closed form: triad REPS entries of 2 N; matmul 2 M^3; 3 K unmarked.
fn triad(n: u64, reps: u64) -> Flop {
    mul_add(n * reps)
}

fn matmul(m: u64) -> Flop {
    mul_add(m * m * m)
}

fn noise(k: u64) -> Flop {
    mul(3 * k)
}

const NAMED: &[&str] = &["-DMARK_NAMED"];
const LIKWID: &[&str] = &["-DMARK_LIKWID", "-DLIKWID_PERFMON"];
const LIKWID_OFF: &[&str] = &["-DMARK_LIKWID"];
const SSC: &[&str] = &["-DMARK_SSC"];
const SSC_MARKS: &[&str] = &[
    "--no-native",
    "--start-mark",
    "0x111:repeat",
    "--stop-mark",
    "0x222:repeat",
];

/// Both regions of regions.c, the unmarked noise and the total, exactly.
fn check_named_regions(c: &mut Checks, r: &Value, n: u64, reps: u64, m: u64, k: u64) {
    c.region(r, "triad", reps, triad(n, reps));
    c.region(r, "matmul", 1, matmul(m));
    c.whole(
        r,
        &["triad", "matmul"],
        noise(k),
        triad(n, reps) + matmul(m) + noise(k),
    );
}

#[test]
fn c_header_regions_and_unmarked_work_are_exact() {
    let exe = regions_c(NAMED);
    let mut c = Checks::default();
    let (n1, n2) = (N, 2 * N); // same number of digits: argv parsing does the same work
    let r1 = count_ok(&exe, &[n1, REPS, M, K], COUNT_ONLY);
    let r2 = count_ok(&exe, &[n2, REPS, M, K], COUNT_ONLY);
    check_named_regions(&mut c, &r1, n1, REPS, M, K);
    check_named_regions(&mut c, &r2, n2, REPS, M, K);
    // Triad bytes: per element b[i] and c[i] read, a[i] written; nothing else
    // anywhere depends on N.
    let dn = (n2 - n1) as i64;
    let reps = REPS as i64;
    for (name, read, written) in [
        ("triad", 16 * dn * reps, 8 * dn * reps),
        ("matmul", 0, 0),
        ("unmarked", 0, 0),
    ] {
        let (p1, p2) = (part(&r1, name), part(&r2, name));
        c.eq(
            format!("{name}: d bytes.read (N {n1} -> {n2})"),
            read,
            bytes(p2, "read") - bytes(p1, "read"),
        );
        c.eq(
            format!("{name}: d bytes.written (N {n1} -> {n2})"),
            written,
            bytes(p2, "written") - bytes(p1, "written"),
        );
    }
    c.eq(
        "whole program: d bytes.read",
        16 * dn * reps,
        bytes(&r2, "read") - bytes(&r1, "read"),
    );
    c.eq(
        "whole program: d bytes.written",
        8 * dn * reps,
        bytes(&r2, "written") - bytes(&r1, "written"),
    );
    c.assert_none();
}

/// SDE's spelling and meaning: hex digits without 0x, and without
/// `:repeat` only the first start..stop pair counts (one of REPS), under
/// both engines; a mark value that never runs gets a warning.
#[test]
fn ssc_marks_as_sde_spells_them() {
    let exe = regions_c(SSC);
    let mut c = Checks::default();
    for engine in ["emulate", "native"] {
        let once = [
            "--no-native",
            "--engine",
            engine,
            "--start-mark",
            "111",
            "--stop-mark",
            "222",
        ];
        let r = count_ok(&exe, &[N, REPS, M, K], &once);
        c.region(&r, "ssc:0x111-0x222", 1, triad(N, 1));
        let never = [
            "--no-native",
            "--engine",
            engine,
            "--start-mark",
            "273",
            "--stop-mark",
            "546:repeat",
        ];
        let r = count_ok(&exe, &[N, REPS, M, K], &never);
        let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
            w.as_str()
                .is_some_and(|w| w.contains("no SSC mark 0x273 ran"))
        });
        c.that(
            format!("{engine}: a mark that never ran is warned about"),
            warned,
        );
    }
    c.assert_none();
}

#[test]
fn ssc_marks_make_one_region() {
    let exe = regions_c(SSC);
    let mut c = Checks::default();
    // Only the pair asked for makes a region: matmul's 0x333/0x444 marks are
    // plain instructions, its work unmarked.
    let r = count_ok(&exe, &[N, REPS, M, K], SSC_MARKS);
    c.region(&r, "ssc:0x111-0x222", REPS, triad(N, REPS));
    c.whole(
        &r,
        &["ssc:0x111-0x222"],
        matmul(M) + noise(K),
        triad(N, REPS) + matmul(M) + noise(K),
    );
    // The native engine reads the same marks.
    let native: Vec<&str> = SSC_MARKS
        .iter()
        .copied()
        .chain(["--engine", "native"])
        .collect();
    let r = count_ok(&exe, &[N, REPS, M, K], &native);
    c.region(&r, "ssc:0x111-0x222", REPS, triad(N, REPS));
    // Without --start-mark/--stop-mark, SSC marks make no region.
    let r = count_ok(&exe, &[N, REPS, M, K], COUNT_ONLY);
    c.eq(
        "no marks asked for: regions",
        Vec::<String>::new(),
        region_names(&r),
    );
    c.that(
        "no marks asked for: no unmarked key",
        r.get("unmarked").is_none(),
    );
    c.flop(
        "no marks asked for: whole program",
        &r,
        triad(N, REPS) + matmul(M) + noise(K),
    );
    c.assert_none();
}

#[test]
fn likwid_header_regions_are_exact_and_absent_without_likwid_perfmon() {
    let mut c = Checks::default();
    let r = count_ok(&regions_c(LIKWID), &[N, REPS, M, K], COUNT_ONLY);
    check_named_regions(&mut c, &r, N, REPS, M, K);
    // Without -DLIKWID_PERFMON the LIKWID macros are empty, as LIKWID's own.
    let r = count_ok(&regions_c(LIKWID_OFF), &[N, REPS, M, K], COUNT_ONLY);
    c.eq(
        "without LIKWID_PERFMON: regions",
        Vec::<String>::new(),
        region_names(&r),
    );
    c.that(
        "without LIKWID_PERFMON: no unmarked key",
        r.get("unmarked").is_none(),
    );
    c.flop(
        "without LIKWID_PERFMON: whole program",
        &r,
        triad(N, REPS) + matmul(M) + noise(K),
    );
    c.assert_none();
}

#[test]
fn fortran_module_region_is_exact() {
    // regions.f90: usage N REPS K A; daxpy region REPS x 2 N, 2 K unmarked.
    let (n, reps, k) = (1000, 5, 100);
    let r = count_ok(&fortran(), &[n, reps, k, 3], COUNT_ONLY);
    let mut c = Checks::default();
    c.region(&r, "daxpy", reps, mul_add(n * reps));
    c.whole(&r, &["daxpy"], mul(2 * k), mul_add(n * reps) + mul(2 * k));
    c.assert_none();
}

#[test]
fn rust_crate_regions_are_exact() {
    // crates/markers/examples/regions.rs: usage N REPS K; triad (closure API)
    // REPS x 2 N, scale (guard) K, 2 K unmarked.
    let (n, reps, k) = (1000, 5, 100);
    let r = count_ok(&rust_example(), &[n, reps, k], COUNT_ONLY);
    let mut c = Checks::default();
    c.region(&r, "triad", reps, mul_add(n * reps));
    c.region(&r, "scale", 1, mul(k));
    c.whole(
        &r,
        &["triad", "scale"],
        mul(2 * k),
        mul_add(n * reps) + mul(3 * k),
    );
    c.assert_none();
}

#[test]
fn openmp_region_entered_by_4_threads() {
    // omp.c: usage N K; region "work" entered by 4 threads, 2 N each; K unmarked.
    let (n, k) = (500, 100);
    let exe = gcc("omp.c", &["-fopenmp"]);
    let mut c = Checks::default();
    for attempt in 1..=5 {
        let r = count_ok(&exe, &[n, k], COUNT_ONLY);
        c.region(&r, "work", 4, mul_add(4 * n));
        c.whole(&r, &["work"], mul(k), mul_add(4 * n) + mul(k));
        let threads = r["threads"].as_array().expect("threads is an array");
        c.that(
            format!(
                "run {attempt}: more than one threads[] row (got {})",
                threads.len()
            ),
            threads.len() > 1,
        );
        let sum: u64 = threads
            .iter()
            .map(|t| int(&t["flop"]["total"], "threads[].flop.total"))
            .sum();
        c.eq(
            format!("run {attempt}: sum of threads[].flop.total"),
            8 * n + k,
            sum,
        );
    }
    c.assert_none();
}

#[test]
fn nested_regions_count_inclusively() {
    // nested.c: usage N K REPS.
    let (n, k, reps) = (500, 100, 3);
    let r = count_ok(&gcc("nested.c", &[]), &[n, k, reps], COUNT_ONLY);
    let inner = mul_add(2 * n * reps); // 2 entries per rep, a triad each
    let outer_own = mul(2 * k * reps); // a scale before and after the inner ones
    let mut c = Checks::default();
    c.region(&r, "inner", 2 * reps, inner);
    c.region(&r, "outer", reps, outer_own + inner);
    c.whole(&r, &["outer", "inner"], mul(k), mul(k) + outer_own + inner);
    c.assert_none();
}

#[test]
fn region_entered_1000_times() {
    let (n, reps, m, k) = (8, 1000, 2, 10);
    let mut c = Checks::default();
    let r = count_ok(&regions_c(NAMED), &[n, reps, m, k], COUNT_ONLY);
    check_named_regions(&mut c, &r, n, reps, m, k);
    let r = count_ok(&regions_c(SSC), &[n, reps, m, k], SSC_MARKS);
    c.region(&r, "ssc:0x111-0x222", reps, triad(n, reps));
    c.whole(
        &r,
        &["ssc:0x111-0x222"],
        matmul(m) + noise(k),
        triad(n, reps) + matmul(m) + noise(k),
    );
    c.assert_none();
}

/// A mismatch.c run: exits 0, complete, one warning naming `names`.
fn mismatch_run(mode: u64, n: u64, names: &[&str], c: &mut Checks) -> Value {
    let run = count(&gcc("mismatch.c", &[]), &[mode, n], COUNT_ONLY);
    let r = run.report;
    c.eq(format!("mode {mode}: flopscope exit code"), 0, run.code);
    c.eq(
        format!("mode {mode}: exit_status"),
        &Value::from(0),
        &r["exit_status"],
    );
    c.eq(
        format!("mode {mode}: complete"),
        &Value::from(true),
        &r["complete"],
    );
    let warnings: Vec<String> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    c.eq(
        format!("mode {mode}: number of warnings ({warnings:?})"),
        1,
        warnings.len(),
    );
    for name in names {
        c.that(
            format!("mode {mode}: a warning names region {name:?} ({warnings:?})"),
            warnings.iter().any(|w| w.contains(name)),
        );
    }
    r
}

#[test]
fn end_of_a_region_never_begun_is_ignored_with_a_warning() {
    let n = 100;
    let mut c = Checks::default();
    let r = mismatch_run(1, n, &["ghost"], &mut c);
    c.region(&r, "a", 1, mul(n));
    c.whole(&r, &["a"], mul(3 * n), mul(4 * n));
    c.assert_none();
}

#[test]
fn ending_the_outer_region_while_the_inner_is_open_closes_both() {
    let n = 100;
    let mut c = Checks::default();
    let r = mismatch_run(2, n, &["outer", "inner"], &mut c);
    c.region(&r, "outer", 1, mul(2 * n));
    c.region(&r, "inner", 1, mul(n));
    c.whole(&r, &["outer", "inner"], mul(3 * n), mul(5 * n));
    c.assert_none();
}

/// Every region of a report run with the native run on has a positive time
/// and GFLOP/s = flop / time / 1e9; the regions named in `disjoint` (none
/// inside another, one thread) took no longer in all than the whole run.
fn check_native_times(what: &str, r: &Value, disjoint: &[&str], c: &mut Checks) {
    let whole = r["native_time_s"].as_f64();
    c.that(
        format!("{what}: native_time_s is positive ({whole:?})"),
        whole.is_some_and(|t| t > 0.0),
    );
    let mut sum = 0.0;
    for g in r["regions"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let Some(t) = g["native_time_s"].as_f64().filter(|t| *t > 0.0) else {
            c.that(
                format!(
                    "{what}: region {name}: native_time_s is positive ({})",
                    g["native_time_s"]
                ),
                false,
            );
            continue;
        };
        let flop = int(&g["flop"]["total"], "flop.total");
        let gflops = g["gflops"].as_f64();
        c.that(
            format!(
                "{what}: region {name}: gflops {gflops:?} = flop {flop} / native_time_s {t} / 1e9"
            ),
            gflops == Some(flop as f64 / t / 1e9),
        );
        if disjoint.contains(&name) {
            sum += t;
        }
    }
    if let Some(whole) = whole {
        c.that(
            format!("{what}: regions {disjoint:?} took {sum} s of the run's {whole} s"),
            sum <= whole,
        );
    }
}

#[test]
fn native_run_times_each_region() {
    let mut c = Checks::default();
    let r = count_ok(&regions_c(NAMED), &[N, REPS, M, K], &[]);
    check_named_regions(&mut c, &r, N, REPS, M, K);
    check_native_times("flopscope.h", &r, &["triad", "matmul"], &mut c);
    let r = count_ok(&rust_example(), &[N, REPS, K], &[]);
    c.flop("Rust: region triad", region(&r, "triad"), mul_add(N * REPS));
    check_native_times("Rust", &r, &["triad", "scale"], &mut c);
    let r = count_ok(&fortran(), &[N, REPS, K, 3], &[]);
    c.flop(
        "Fortran: region daxpy",
        region(&r, "daxpy"),
        mul_add(N * REPS),
    );
    check_native_times("Fortran", &r, &["daxpy"], &mut c);
    let r = count_ok(&gcc("nested.c", &[]), &[N, K, REPS], &[]);
    check_native_times("nested", &r, &["outer"], &mut c);
    c.assert_none();
}

#[test]
fn a_region_begun_again_while_open_counts_its_work_once() {
    // reenter.c: usage N REPS.
    let (n, reps) = (100, 3);
    let r = count_ok(&gcc("reenter.c", &[]), &[n, reps], COUNT_ONLY);
    let mut c = Checks::default();
    c.region(&r, "all", 1, mul((1 + reps) * n));
    c.region(&r, "a", 2, mul((1 + reps) * n));
    c.region(&r, "open", 1, mul(n));
    c.whole(
        &r,
        &["all", "a", "open"],
        Flop::default(),
        mul((2 + reps) * n),
    );
    c.assert_none();
}

#[test]
fn a_region_begun_again_while_open_is_timed_once() {
    // reenter.c: "a" lies inside "all", so its time cannot be longer; its
    // inner interval, REPS scales, is nearly all of it.
    let (n, reps) = (4096, 200);
    let r = count_ok(&gcc("reenter.c", &[]), &[n, reps], &[]);
    let time = |name| {
        region(&r, name)["native_time_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("no native time for {name}"))
    };
    let (a, all) = (time("a"), time("all"));
    assert!(a <= all, "region a (inside all) timed {a} s, all {all} s");
}

/// Every kind of marker (SDE's SSC marks included) gives the same regions
/// under the native engine as under the emulate engine: FLOP, bytes by
/// access size and entries of each region, and the unmarked work's FLOP (instructions aside: QEMU counts a
/// REP string per iteration). Symbols are bound at start in both runs, so
/// that no lazy binding falls inside a region.
#[test]
fn every_kind_of_marker_counts_the_same_under_the_native_engine() {
    // (what, program, arguments, options of `flopscope count`)
    let cases: Vec<(&str, PathBuf, Vec<u64>, &[&str])> = vec![
        (
            "C header",
            regions_c(NAMED),
            vec![N, REPS, M, K],
            COUNT_ONLY,
        ),
        (
            "LIKWID header",
            regions_c(LIKWID),
            vec![N, REPS, M, K],
            COUNT_ONLY,
        ),
        ("SSC marks", regions_c(SSC), vec![N, REPS, M, K], SSC_MARKS),
        (
            "Fortran module",
            fortran(),
            vec![1000, 5, 100, 3],
            COUNT_ONLY,
        ),
        ("Rust crate", rust_example(), vec![1000, 5, 100], COUNT_ONLY),
        (
            "nested",
            gcc("nested.c", &[]),
            vec![500, 100, 3],
            COUNT_ONLY,
        ),
        (
            "OpenMP, 1 thread",
            gcc("omp.c", &["-fopenmp"]),
            vec![500, 100],
            COUNT_ONLY,
        ),
    ];
    let keys: Vec<&str> = std::iter::once("name").chain(REGION_KEYS).collect();
    let mut diffs = Vec::new();
    for (what, exe, args, options) in &cases {
        let run = |engine: &str| {
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("r.json");
            let out = Command::new(FLOPSCOPE)
                .args(["count", "--engine", engine, "--format", "json"])
                .args(options.iter())
                .arg("-o")
                .arg(&json)
                .arg("--")
                .arg(exe)
                .args(args.iter().map(u64::to_string))
                .env("LD_BIND_NOW", "1")
                .env(SAME_GLIBC.0, SAME_GLIBC.1)
                .env("OMP_NUM_THREADS", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{what} under {engine}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_str::<Value>(&std::fs::read_to_string(&json).unwrap()).unwrap()
        };
        let (e, n) = (run("emulate"), run("native"));
        let (re, rn) = (
            e["regions"].as_array().unwrap(),
            n["regions"].as_array().unwrap(),
        );
        if re.is_empty() || re.len() != rn.len() {
            diffs.push(format!(
                "{what}: {} regions under emulate, {} under native",
                re.len(),
                rn.len()
            ));
            continue;
        }
        for (a, b) in re.iter().zip(rn) {
            for &k in &keys {
                if a[k] != b[k] {
                    diffs.push(format!(
                        "{what}: region {} {k}: emulate {} native {}",
                        a["name"], a[k], b[k]
                    ));
                }
            }
        }
        if e["unmarked"]["flop"] != n["unmarked"]["flop"] {
            diffs.push(format!(
                "{what}: unmarked FLOP: emulate {} native {}",
                e["unmarked"]["flop"], n["unmarked"]["flop"]
            ));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
