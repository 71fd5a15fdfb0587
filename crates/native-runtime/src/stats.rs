//! Time the runtime spends translating, for `FLOPSCOPE_NATIVE_DEBUG`.

use std::sync::atomic::{AtomicU64, Ordering};

static BLOCKS: AtomicU64 = AtomicU64::new(0);
static NANOS: AtomicU64 = AtomicU64::new(0);

pub fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes ts.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Bytes of program code translated, and of cache code made from them.
static PROGRAM_BYTES: AtomicU64 = AtomicU64::new(0);
static CACHE_BYTES: AtomicU64 = AtomicU64::new(0);

static FIRST: AtomicU64 = AtomicU64::new(0);
/// Signals deferred while the dispatcher translated (signals.rs, `defer`).
static DEFERRED: AtomicU64 = AtomicU64::new(0);
static ENTRIES: AtomicU64 = AtomicU64::new(0);
static START: AtomicU64 = AtomicU64::new(0);

/// Marks the take-over.
pub fn started() {
    START.store(now(), Ordering::Relaxed);
}

/// The clock at the take-over (names this process image's files).
pub fn started_at() -> u64 {
    START.load(Ordering::Relaxed)
}

/// Nanoseconds since the take-over.
pub fn since_start() -> u64 {
    now().saturating_sub(START.load(Ordering::Relaxed))
}

/// Async-signal-safe.
pub fn add_deferred() {
    DEFERRED.fetch_add(1, Ordering::Relaxed);
}

pub fn add_entry() {
    ENTRIES.fetch_add(1, Ordering::Relaxed);
}

pub fn add_translation(ns: u64) {
    if BLOCKS.fetch_add(1, Ordering::Relaxed) == 0 {
        FIRST.store(ns, Ordering::Relaxed);
    }
    NANOS.fetch_add(ns, Ordering::Relaxed);
}

/// A block of `program` bytes of the program's code was laid out in
/// `cache` bytes of the code cache.
pub fn add_code(program: u64, cache: u64) {
    PROGRAM_BYTES.fetch_add(program, Ordering::Relaxed);
    CACHE_BYTES.fetch_add(cache, Ordering::Relaxed);
}

/// One line: blocks translated and the time it took.
pub fn summary() -> String {
    let b = BLOCKS.load(Ordering::Relaxed);
    let ns = NANOS.load(Ordering::Relaxed);
    let first = FIRST.load(Ordering::Relaxed);
    let since = since_start();
    let (program, cache) = (
        PROGRAM_BYTES.load(Ordering::Relaxed),
        CACHE_BYTES.load(Ordering::Relaxed),
    );
    format!(
        "[fs] {b} blocks translated in {:.3} ms (the first {:.3} ms, the others {:.1} us each; {:.1} KiB of code into {:.1} KiB of cache); {} dispatcher entries; {} signals deferred; {:.3} ms since the take-over\n",
        ns as f64 / 1e6,
        first as f64 / 1e6,
        (ns - first) as f64 / 1e3 / b.saturating_sub(1).max(1) as f64,
        program as f64 / 1024.0,
        cache as f64 / 1024.0,
        ENTRIES.load(Ordering::Relaxed),
        DEFERRED.load(Ordering::Relaxed),
        since as f64 / 1e6
    )
}
