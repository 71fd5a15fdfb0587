use flopscope_sampler::ProcessSamples;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The preload library, built once per test run the way the CLI builds it
/// (crates/preload-build: release, panic=abort, no debug info, the C
/// compiler's static unwinder linked in when it has one), in a target
/// directory of its own so that it never waits on the outer build's lock.
pub fn preload_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        flopscope_preload_build::preload(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("sampler-preload"),
            "libflopscope_sampler.so",
            "the sampler",
        )
    })
}

fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// Compiles tests/c/<src> into `dir` (gcc -O1: the loops stay in the
/// functions that expand them); returns the canonical path (as in maps).
pub fn compile(dir: &Path, src: &str, out: &str, extra: &[&str]) -> PathBuf {
    let exe = dir.join(out);
    let status = Command::new("gcc")
        .args(["-O1", "-g", "-Wall", "-o"])
        .arg(&exe)
        .arg(source(src))
        .args(extra)
        .status()
        .expect("gcc runs (install gcc)");
    assert!(status.success(), "compiling {src} failed");
    exe.canonicalize().expect("compiled file exists")
}

/// A fresh sample directory and a scratch directory for programs.
pub struct Scratch {
    _tmp: tempfile::TempDir,
    pub bin: PathBuf,
    pub out: PathBuf,
}

pub fn scratch() -> Scratch {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let bin = tmp.path().canonicalize().expect("exists").join("bin");
    let out = tmp.path().canonicalize().expect("exists").join("samples");
    std::fs::create_dir(&bin).expect("mkdir");
    std::fs::create_dir(&out).expect("mkdir");
    Scratch {
        _tmp: tmp,
        bin,
        out,
    }
}

/// `exe args` with the sampler preloaded into `out`, extra environment
/// `env`.
pub fn sampled(exe: &Path, args: &[&str], out: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_PRELOAD", preload_lib())
        .env(flopscope_sampler::DIR_ENV, out)
        .env_remove(flopscope_sampler::HZ_ENV)
        .env_remove(flopscope_sampler::CAPACITY_ENV)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs to completion; a program still running after two minutes (they
/// need about a second of CPU time) is killed and fails the test.
pub fn run(mut cmd: Command) -> Output {
    let child = cmd.spawn().expect("the program starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("waiting for the program"),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("the program did not finish in 2 minutes");
        }
    }
}

/// Starts the program, waits until its samples hold `signals` signals
/// (however long that takes on a loaded machine, up to a minute), then
/// sends it SIGUSR1 (the programs' "enough": tests/c/burn.h) and runs it to
/// completion.
pub fn run_until_signals(mut cmd: Command, out: &Path, signals: u64) -> Output {
    let mut child = cmd.spawn().expect("the program starts");
    let t0 = Instant::now();
    while read(out).iter().map(|p| p.signals).sum::<u64>() < signals {
        if t0.elapsed() > Duration::from_secs(60) || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            panic!(
                "{signals} signals did not arrive in a minute: {:#?}",
                read(out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("waiting for the program"),
        Err(_) => {
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("the program did not finish in 2 minutes after SIGUSR1");
        }
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}: {}{}",
        out.status,
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn read(out: &Path) -> Vec<ProcessSamples> {
    flopscope_sampler::read_dir(out).expect("the sample directory reads")
}

/// Runtime address ranges of functions `names` of the ELF file `file`
/// (nm -S), placed at its load address in `maps` (the start of its mapping
/// at file offset 0: gcc makes PIE files with the first segment at 0).
pub fn functions(file: &Path, maps: &str, names: &[&str]) -> Vec<(u64, u64)> {
    let out = Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(file)
        .output()
        .expect("nm runs (install binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut syms = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [addr, size, kind, name] = f[..] {
            if kind.eq_ignore_ascii_case("t") {
                let hex = |s| u64::from_str_radix(s, 16).expect("nm prints hex");
                syms.insert(name.to_string(), (hex(addr), hex(size)));
            }
        }
    }
    let path = file.to_str().expect("UTF-8 path");
    let base = maps
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 6 && f[5] == path && u64::from_str_radix(f[2], 16) == Ok(0))
                .then(|| u64::from_str_radix(f[0].split('-').next()?, 16).ok())
                .flatten()
        })
        .unwrap_or_else(|| panic!("{path} is not in the maps:\n{maps}"));
    names
        .iter()
        .map(|n| {
            let (addr, size) = syms[*n];
            assert!(size > 0, "{n} has no size");
            (base + addr, base + addr + size)
        })
        .collect()
}

/// Counts (in intervals) of samples in each range.
pub fn counts_in(p: &ProcessSamples, ranges: &[(u64, u64)]) -> Vec<u64> {
    ranges
        .iter()
        .map(|&(lo, hi)| {
            p.samples
                .iter()
                .filter(|(&a, _)| (lo..hi).contains(&a))
                .map(|(_, &c)| c)
                .sum()
        })
        .collect()
}

/// Asserts that `part` of `whole` samples is share `p` within four binomial
/// standard errors, the number of observations being the (effective)
/// signals that fell in `whole` (each signal may stand for several
/// intervals).
pub fn assert_share(what: &str, part: u64, whole: u64, signals: f64, p: f64) {
    let share = part as f64 / whole as f64;
    let se = (p * (1.0 - p) / signals).sqrt();
    assert!(
        (share - p).abs() <= 4.0 * se,
        "{what}: share {share:.3} ({part} of {whole}), expected {p} +- {:.3} (4 standard errors, {signals:.0} signals)",
        4.0 * se
    );
}

/// Polls until `f` holds, for at most a minute.
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The heaviest samples outside `ranges`, as module+offset, for messages.
pub fn elsewhere(p: &ProcessSamples, ranges: &[(u64, u64)]) -> String {
    let maps: Vec<(u64, u64, u64, &str)> = p
        .maps_text
        .as_deref()
        .unwrap_or("")
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (lo, hi) = f.first()?.split_once('-')?;
            let hex = |s| u64::from_str_radix(s, 16).ok();
            Some((
                hex(lo)?,
                hex(hi)?,
                hex(f.get(2)?)?,
                f.get(5).copied().unwrap_or(""),
            ))
        })
        .collect();
    let mut out: Vec<(u64, String)> = p
        .samples
        .iter()
        .filter(|(&a, _)| !ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&a)))
        .map(|(&a, &c)| {
            let at = maps
                .iter()
                .find(|m| (m.0..m.1).contains(&a))
                .map(|m| format!("{}+{:#x}", m.3, a - m.0 + m.2))
                .unwrap_or_else(|| format!("{a:#x}"));
            (c, at)
        })
        .collect();
    out.sort_by(|a, b| b.cmp(a));
    out.truncate(8);
    format!("{out:?}")
}
