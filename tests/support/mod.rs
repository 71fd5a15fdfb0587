//! Shared helpers of the integration tests: build a kernel from
//! `tests/kernels` with a real compiler, run `flopscope count` on it under the
//! real QEMU, and read the JSON report by its documented keys
//! (shared/reference/report-schema.md).
//!
//! Expected counts are written as an [`Expect`] from the kernel's closed form
//! and compared exactly: no tolerance anywhere.

#![allow(dead_code)] // each test module uses its own subset

pub mod cpu;
pub mod engines;
pub mod sums;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The CLI under test.
pub const FLOPSCOPE: &str = env!("CARGO_BIN_EXE_flopscope");

/// The flag sets the exact kernels are built for.
pub const SSE2: &[&str] = &["-O2", "-msse2"];
pub const AVX: &[&str] = &["-O2", "-mavx"];
pub const AVX2_FMA: &[&str] = &["-O2", "-mavx2", "-mfma"];
pub const FLAG_SETS: [&[&str]; 3] = [SSE2, AVX, AVX2_FMA];

/// `tests/kernels`, where the kernels and their closed forms live.
pub fn kernel_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels")
}

/// Builds `tests/kernels/<source>` with `flags` (gcc for `.c`, gfortran for
/// `.f90`) once per test run, and returns the executable. Builds land in
/// cargo's per-target temporary directory, one file per compiler, source and
/// flag set.
pub fn build(source: &str, flags: &[&str]) -> PathBuf {
    let compiler = match Path::new(source).extension().and_then(|e| e.to_str()) {
        Some("c") => "gcc",
        Some("cpp") => "g++",
        Some("f90") => "gfortran",
        _ => panic!("no compiler known for kernel {source}"),
    };
    build_by(compiler, source, flags)
}

/// [`build`] with the compiler named `compiler` (`musl-gcc`).
pub fn build_by(compiler: &str, source: &str, flags: &[&str]) -> PathBuf {
    let key = format!("{compiler} {source} {}", flags.join(" "));
    built_once(key, || compile(compiler, source, flags))
}

/// What `make` builds, made once per `key` in this test process: tests run
/// on parallel threads, and one rebuilding a program (its files truncated
/// and written anew) while another runs or symbolizes it made the other's
/// library unreadable (its functions named `libwhere.so+0x...`).
pub fn built_once(key: String, make: impl FnOnce() -> PathBuf) -> PathBuf {
    type Cache = Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>;
    static BUILT: OnceLock<Cache> = OnceLock::new();
    let slot = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_default()
        .clone();
    slot.get_or_init(make).clone()
}

/// Builds the Go program in `tests/kernels/go/<name>` (a module of its own)
/// with Debian's Go, statically linked (CGO_ENABLED=0), once per test run;
/// the build cache and Go's scratch files stay in cargo's temporary
/// directory.
pub fn build_go(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap();
    if let Some(exe) = built.get(name) {
        return exe.clone();
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("kernels")
        .join("go");
    let scratch = root.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let exe = root.join(name);
    let tmp = root.join(format!("{name}.{}.tmp", std::process::id()));
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&tmp)
        .arg(".")
        .current_dir(kernel_dir().join("go").join(name))
        .env("CGO_ENABLED", "0")
        .env("GOCACHE", root.join("cache"))
        .env("GOTMPDIR", &scratch)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .unwrap_or_else(|e| panic!("running go (golang-go, scripts/setup.sh): {e}"));
    assert!(
        out.status.success(),
        "go build of {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &exe).unwrap();
    built.insert(name.to_string(), exe.clone());
    exe
}

fn compile(compiler: &str, source: &str, flags: &[&str]) -> PathBuf {
    let src = kernel_dir().join(source);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("kernels")
        .join(compiler);
    std::fs::create_dir_all(&dir).unwrap();
    let stem = src.file_stem().unwrap().to_str().unwrap();
    let tag: String = flags
        .join("_")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let exe = dir.join(format!("{stem}{tag}"));
    // Compile to a private name and rename, so that two test runs sharing the
    // target directory never execute a half-written file.
    let tmp = dir.join(format!("{stem}{tag}.{}.tmp", std::process::id()));
    let out = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(kernel_dir())
        .arg("-o")
        .arg(&tmp)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {} {source} failed:\n{}",
        flags.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &exe).unwrap();
    exe
}

/// Runs gcc with `args`, panicking with its messages if it fails.
pub fn gcc<A: AsRef<OsStr>>(args: &[A]) {
    let out = Command::new("gcc")
        .args(args)
        .output()
        .expect("running gcc");
    assert!(
        out.status.success(),
        "gcc {:?}: {}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` with `input` on its standard input and its output captured.
pub fn output_with_input(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// What one `flopscope count` run gave.
pub struct Run {
    /// flopscope's exit code.
    pub code: i32,
    /// The program's standard output (flopscope writes the report to a file).
    pub stdout: String,
    pub stderr: String,
    /// The report written with `-o`, if any.
    pub report: Option<Report>,
}

/// Runs `flopscope count --no-native -o FILE -- exe args` with extra
/// environment variables for the program.
pub fn count<A: AsRef<OsStr>>(exe: &Path, args: &[A], env: &[(&str, &str)]) -> Run {
    count_with("emulate", exe, args, env)
}

/// [`count`] under the engine named `engine` (`emulate`, `native`).
pub fn count_with<A: AsRef<OsStr>>(
    engine: &str,
    exe: &Path,
    args: &[A],
    env: &[(&str, &str)],
) -> Run {
    count_as(engine, &["--no-native"], exe, args, env)
}

/// [`count_with`] keeping the counted run's time and its samples (time
/// per function, the report's `sampling`).
pub fn count_sampled_with<A: AsRef<OsStr>>(
    engine: &str,
    exe: &Path,
    args: &[A],
    env: &[(&str, &str)],
) -> Run {
    count_as(engine, &[], exe, args, env)
}

/// [`count_with`] with `options` given to `flopscope count` instead of
/// `--no-native`.
pub fn count_as<A: AsRef<OsStr>>(
    engine: &str,
    options: &[&str],
    exe: &Path,
    args: &[A],
    env: &[(&str, &str)],
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--engine", engine])
        .args(options)
        .args(["--format", "json", "-o"])
        .arg(&json)
        .arg("--")
        .arg(exe)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("running flopscope");
    let report = std::fs::read_to_string(&json).ok().map(|text| {
        Report(
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("report of {exe:?} is not JSON: {e}\n{text}")),
        )
    });
    if let Some(r) = &report {
        let m = sums::mismatches(&r.0);
        assert!(
            m.is_empty(),
            "{exe:?} under {engine}: functions or lines do not sum to the totals:\n{}",
            m.join("\n")
        );
    }
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report,
    }
}

/// Runs a program that must succeed and returns its complete report.
pub fn count_ok<A: AsRef<OsStr>>(exe: &Path, args: &[A], env: &[(&str, &str)]) -> Report {
    count_ok_with("emulate", exe, args, env)
}

/// [`count_ok`] under the engine named `engine`.
pub fn count_ok_with<A: AsRef<OsStr>>(
    engine: &str,
    exe: &Path,
    args: &[A],
    env: &[(&str, &str)],
) -> Report {
    ok_report(count_with(engine, exe, args, env), exe, args)
}

/// The report of `run` (of `exe args`), which must have succeeded.
pub fn ok_report<A: AsRef<OsStr>>(run: Run, exe: &Path, args: &[A]) -> Report {
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    assert_eq!(
        run.code, 0,
        "flopscope count {exe:?} {shown:?} exited {}:\n{}",
        run.code, run.stderr
    );
    let report = run
        .report
        .unwrap_or_else(|| panic!("no report for {exe:?}:\n{}", run.stderr));
    assert_eq!(report.0["exit_status"], 0, "exit_status of {exe:?}");
    assert_eq!(report.0["complete"], true, "complete of {exe:?}");
    report
}

/// One `fp_instructions` row's key: precision, width_bits, lanes, op, masked.
pub type RowKey = (String, u64, u64, String, bool);

/// Executions and FLOP of one `fp_instructions` row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: u64,
    pub flop: u64,
}

/// A report, read by the keys of the JSON contract.
pub struct Report(pub Value);

fn u64_at(v: &Value, path: &[&str]) -> u64 {
    let mut at = v;
    for key in path {
        at = &at[*key];
    }
    at.as_u64()
        .unwrap_or_else(|| panic!("report key {} is not an integer: {at}", path.join(".")))
}

fn u64_map(v: &Value, what: &str) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap_or_else(|| panic!("report key {what} is not an object: {v}"))
        .iter()
        .map(|(k, n)| {
            (
                k.clone(),
                n.as_u64()
                    .unwrap_or_else(|| panic!("{what}.{k} is not an integer: {n}")),
            )
        })
        .collect()
}

impl Report {
    /// The row of function `name` in `functions`, if it has one.
    pub fn function(&self, name: &str) -> Option<&Value> {
        self.0["functions"]
            .as_array()?
            .iter()
            .find(|f| f["name"] == name)
    }

    /// `flop.<key>`: total, fp64, fp32, fp16, bf16 or x87.
    pub fn flop(&self, key: &str) -> u64 {
        u64_at(&self.0, &["flop", key])
    }

    /// Total FLOP of the report's processes that did some, sorted.
    pub fn child_flop(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.0["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["flop"]["total"].as_u64().unwrap())
            .filter(|f| *f > 0)
            .collect();
        v.sort();
        v
    }

    pub fn flop_by_op(&self) -> BTreeMap<String, u64> {
        u64_map(&self.0["flop_by_op"], "flop_by_op")
    }

    pub fn fp_elements(&self) -> BTreeMap<String, u64> {
        u64_map(&self.0["fp_elements"], "fp_elements")
    }

    /// `fp_instructions` by row key (a key appearing twice is added up, and
    /// then shows as a mismatch against any expectation).
    pub fn rows(&self) -> BTreeMap<RowKey, Tally> {
        let mut out = BTreeMap::<RowKey, Tally>::new();
        for r in self.0["fp_instructions"]
            .as_array()
            .expect("fp_instructions is an array")
        {
            let key = (
                r["precision"].as_str().expect("row precision").to_string(),
                u64_at(r, &["width_bits"]),
                u64_at(r, &["lanes"]),
                r["op"].as_str().expect("row op").to_string(),
                r["masked"].as_bool().expect("row masked"),
            );
            let t = out.entry(key).or_default();
            t.count += u64_at(r, &["count"]);
            t.flop += u64_at(r, &["flop"]);
        }
        out
    }

    /// FLOP per (precision, width_bits): the sum of the rows' `flop`.
    pub fn flop_by_width(&self) -> BTreeMap<(String, u64), u64> {
        by_width(&self.rows())
    }

    pub fn bytes_read(&self) -> u64 {
        u64_at(&self.0, &["bytes", "read"])
    }

    pub fn bytes_written(&self) -> u64 {
        u64_at(&self.0, &["bytes", "written"])
    }

    /// `mem_accesses.<read|write>`: access size in bytes -> accesses.
    pub fn mem_accesses(&self, dir: &str) -> BTreeMap<u64, u64> {
        u64_map(&self.0["mem_accesses"][dir], dir)
            .into_iter()
            .map(|(size, n)| {
                (
                    size.parse()
                        .unwrap_or_else(|_| panic!("access size {size:?} is not a number")),
                    n,
                )
            })
            .collect()
    }

    pub fn warnings(&self) -> Vec<String> {
        self.0["warnings"]
            .as_array()
            .expect("warnings is an array")
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    }

    /// What to print when a check fails: the counted part of the report.
    pub fn summary(&self) -> String {
        let v = &self.0;
        format!(
            "flop {}\nflop_by_op {}\nfp_instructions {}\nfp_elements {}",
            v["flop"], v["flop_by_op"], v["fp_instructions"], v["fp_elements"]
        )
    }
}

fn by_width(rows: &BTreeMap<RowKey, Tally>) -> BTreeMap<(String, u64), u64> {
    let mut out = BTreeMap::new();
    for ((precision, width, ..), t) in rows {
        *out.entry((precision.clone(), *width)).or_default() += t.flop;
    }
    out
}

pub const PRECISIONS: [&str; 5] = ["fp64", "fp32", "fp16", "bf16", "x87"];
pub const FLOP_OPS: [&str; 9] = [
    "add", "sub", "mul", "div", "sqrt", "fma", "minmax", "rcp", "other",
];

/// The counts a kernel's closed form gives. Anything not stated is expected
/// to be zero: a FLOP booked under a precision, category or row the closed
/// form does not have is a mismatch.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    flop: BTreeMap<&'static str, u64>,
    by_op: BTreeMap<&'static str, u64>,
    /// Set for kernels whose instruction forms are forced (intrinsics): then
    /// widths, rows and fp_elements are checked too.
    rows: Option<BTreeMap<RowKey, Tally>>,
}

impl Expect {
    pub fn new() -> Expect {
        Expect::default()
    }

    /// `flop` FLOP of `precision`, instruction forms unchecked (plain C loops
    /// the compiler may vectorize at any width).
    pub fn flop(mut self, precision: &'static str, flop: u64) -> Expect {
        assert!(
            PRECISIONS.contains(&precision),
            "unknown precision {precision}"
        );
        *self.flop.entry(precision).or_default() += flop;
        self
    }

    /// `flop` FLOP booked under `flop_by_op.<op>`.
    pub fn op(mut self, op: &'static str, flop: u64) -> Expect {
        assert!(FLOP_OPS.contains(&op), "unknown flop_by_op key {op}");
        *self.by_op.entry(op).or_default() += flop;
        self
    }

    /// `count` executions of one instruction form doing `flop_each` FLOP;
    /// also adds their FLOP to the precision's total.
    pub fn insn(
        mut self,
        precision: &'static str,
        width_bits: u64,
        lanes: u64,
        op: &'static str,
        count: u64,
        flop_each: u64,
    ) -> Expect {
        let key = (
            precision.to_string(),
            width_bits,
            lanes,
            op.to_string(),
            false,
        );
        let t = self
            .rows
            .get_or_insert_with(BTreeMap::new)
            .entry(key)
            .or_default();
        t.count += count;
        t.flop += count * flop_each;
        self.flop(precision, count * flop_each)
    }

    /// segv.c's closed form up to its fault: n VFMADD*PD ymm, 8 FLOP each.
    pub fn segv(n: u64) -> Expect {
        Expect::new()
            .insn("fp64", 256, 4, "fma", n, 8)
            .op("fma", 8 * n)
    }

    /// native/signals.c's closed form: n handler runs of m ADDSD, n of m
    /// MULSD.
    pub fn signal_handlers(n: u64, m: u64) -> Expect {
        Expect::new()
            .insn("fp64", 64, 1, "add", n * m, 1)
            .insn("fp64", 64, 1, "mul", n * m, 1)
            .op("add", n * m)
            .op("mul", n * m)
    }

    /// fma.c's closed form (see its header comment): chain k runs n + k
    /// FMAs, each of its own form.
    pub fn fma_chains(n: u64) -> Expect {
        let k = |i: u64| n + i;
        let e = Expect::new()
            .insn("fp64", 256, 4, "fma", k(0) + k(1), 8)
            .insn("fp32", 256, 8, "fma", k(2), 16)
            .insn("fp64", 128, 2, "fma", k(3), 4)
            .insn("fp32", 128, 4, "fma", k(4), 8)
            .insn("fp64", 64, 1, "fma", k(5), 2)
            .insn("fp32", 32, 1, "fma", k(6), 2);
        let total = e.total();
        e.op("fma", total)
    }

    pub fn total(&self) -> u64 {
        self.flop.values().sum()
    }

    /// Every way the report differs from the closed form.
    pub fn mismatches(&self, r: &Report) -> Vec<String> {
        let mut bad = Vec::new();
        let mut check = |what: String, expected: u64, got: u64| {
            if expected != got {
                bad.push(format!("{what}: expected {expected}, got {got}"));
            }
        };
        check("flop.total".into(), self.total(), r.flop("total"));
        for p in PRECISIONS {
            check(
                format!("flop.{p}"),
                self.flop.get(p).copied().unwrap_or(0),
                r.flop(p),
            );
        }
        let by_op = r.flop_by_op();
        for op in FLOP_OPS {
            check(
                format!("flop_by_op.{op}"),
                self.by_op.get(op).copied().unwrap_or(0),
                by_op.get(op).copied().unwrap_or(0),
            );
        }
        for extra in by_op.keys().filter(|k| !FLOP_OPS.contains(&k.as_str())) {
            check(
                format!("flop_by_op.{extra} (a key outside the contract)"),
                0,
                by_op[extra].max(1),
            );
        }
        if let Some(rows) = &self.rows {
            let got = r.rows();
            for key in rows.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
                let (e, g) = (
                    rows.get(key).copied().unwrap_or_default(),
                    got.get(key).copied().unwrap_or_default(),
                );
                check(format!("fp_instructions{key:?}.count"), e.count, g.count);
                check(format!("fp_instructions{key:?}.flop"), e.flop, g.flop);
            }
            let (ew, gw) = (by_width(rows), by_width(&got));
            for key in ew.keys().chain(gw.keys()).collect::<BTreeSet<_>>() {
                check(
                    format!("FLOP of width {key:?}"),
                    ew.get(key).copied().unwrap_or(0),
                    gw.get(key).copied().unwrap_or(0),
                );
            }
            let elements = sde_elements(rows);
            let got = r.fp_elements();
            for key in elements.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
                check(
                    format!("fp_elements.{key}"),
                    elements.get(key).copied().unwrap_or(0),
                    got.get(key).copied().unwrap_or(0),
                );
            }
        }
        bad
    }
}

/// SDE's `elements_fp_<double|single>_<lanes>`: instructions per precision
/// and lane count, an FMA counted once; x87 has no such counter.
fn sde_elements(rows: &BTreeMap<RowKey, Tally>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for ((precision, _, lanes, ..), t) in rows {
        let word = match precision.as_str() {
            "fp64" => "double",
            "fp32" => "single",
            "x87" => continue,
            other => panic!("no SDE word for {other}"),
        };
        *out.entry(format!("elements_fp_{word}_{lanes}"))
            .or_default() += t.count;
    }
    out
}

/// Collects the mismatches of many variants, so that one failing variant does
/// not hide the others; panics at the end listing all of them.
#[derive(Default)]
pub struct Failures(Vec<String>);

impl Failures {
    /// Records a failure found otherwise (an exit status, a note).
    pub fn push(&mut self, failure: String) {
        self.0.push(failure);
    }

    /// Compares one run with its closed form.
    pub fn expect(&mut self, what: &str, r: &Report, e: &Expect) {
        let bad = e.mismatches(r);
        if !bad.is_empty() {
            self.0
                .push(format!("{what}:\n  {}\n{}", bad.join("\n  "), r.summary()));
        }
    }

    /// Compares one derived number (a difference may be negative) with its
    /// closed form.
    pub fn equal(&mut self, what: &str, expected: i64, got: i64) {
        if expected != got {
            self.0
                .push(format!("{what}: expected {expected}, got {got}"));
        }
    }

    /// Compares `bytes.read` and `bytes.written` of run `r.1` minus run `r.0`
    /// with their closed forms.
    pub fn bytes_delta(&mut self, what: &str, r: (&Report, &Report), read: i64, written: i64) {
        self.equal(
            &format!("{what}: d bytes.read"),
            read,
            r.1.bytes_read() as i64 - r.0.bytes_read() as i64,
        );
        let got = r.1.bytes_written() as i64 - r.0.bytes_written() as i64;
        self.equal(&format!("{what}: d bytes.written"), written, got);
    }

    /// Compares a derived histogram (access size -> difference) exactly.
    pub fn equal_map<K: std::fmt::Debug + Eq, V: std::fmt::Debug + Eq>(
        &mut self,
        what: &str,
        expected: &BTreeMap<K, V>,
        got: &BTreeMap<K, V>,
    ) {
        if expected != got {
            self.0
                .push(format!("{what}: expected {expected:?}, got {got:?}"));
        }
    }

    /// The loop of `function` in `r` (its first) was entered `entries`
    /// times and ran `iterations` times.
    pub fn loop_of(&mut self, r: &Report, function: &str, entries: u64, iterations: u64) {
        let found = r.0["loops"]
            .as_array()
            .and_then(|l| l.iter().find(|l| l["function"] == function));
        let Some(l) = found else {
            return self.push(format!("no loop in {function}"));
        };
        let got = (l["entries"].as_u64(), l["iterations"].as_u64());
        if got != (Some(entries), Some(iterations)) {
            self.push(format!(
                "{function}'s loop: expected {entries} entries and {iterations} iterations, got {got:?}"
            ));
        }
    }

    pub fn assert_none(self) {
        assert!(
            self.0.is_empty(),
            "{} mismatches:\n\n{}",
            self.0.len(),
            self.0.join("\n\n")
        );
    }
}

impl Extend<String> for Failures {
    fn extend<I: IntoIterator<Item = String>>(&mut self, failures: I) {
        self.0.extend(failures);
    }
}

/// A flag set with extra flags appended: `flags_with(AVX, &["-DSINGLE"])`.
pub fn flags_with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

/// Whether a flag set makes FMA available (GCC then contracts a * b + c).
pub fn has_fma(flags: &[&str]) -> bool {
    flags.contains(&"-mfma")
}

/// `after - before` of two access-size histograms, zero differences left out.
pub fn histogram_delta(
    before: &BTreeMap<u64, u64>,
    after: &BTreeMap<u64, u64>,
) -> BTreeMap<u64, i64> {
    before
        .keys()
        .chain(after.keys())
        .map(|size| {
            let (b, a) = (
                before.get(size).copied().unwrap_or(0),
                after.get(size).copied().unwrap_or(0),
            );
            (*size, a as i64 - b as i64)
        })
        .filter(|(_, d)| *d != 0)
        .collect()
}
