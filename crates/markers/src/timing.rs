//! Whether markers are live, and native wall time per region.
//!
//! Markers are live when flopscope counts the run (`FLOPSCOPE_COUNTING`, set
//! for the emulated program) or times it (`FLOPSCOPE_REGION_TIMES` names the
//! file the times go to, in the line format of include/flopscope.h), or
//! when the perf engine asks for region counts (see [`crate::perf`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const UNKNOWN: u8 = 0;
const OFF: u8 = 1;
/// Counted by the emulate engine: markers, no timing.
const COUNTING: u8 = 2;
/// The native timed run: markers and timing.
const TIMING: u8 = 3;
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

#[derive(Default)]
struct Totals {
    entries: u64,
    /// Nanoseconds per thread.
    per_thread: HashMap<std::thread::ThreadId, u64>,
}

static TOTALS: Mutex<Option<HashMap<Vec<u8>, Totals>>> = Mutex::new(None);

thread_local! {
    static OPEN: std::cell::RefCell<Vec<(Vec<u8>, Option<Instant>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn key(name: &[u8]) -> Vec<u8> {
    name.iter().take_while(|b| **b != 0).copied().collect()
}

extern "C" fn dump() {
    let Some(path) = std::env::var_os("FLOPSCOPE_REGION_TIMES") else {
        return;
    };
    let Ok(guard) = TOTALS.lock() else { return };
    let Some(map) = guard.as_ref() else { return };
    let mut text = String::new();
    for (name, t) in map {
        let max = t.per_thread.values().copied().max().unwrap_or(0);
        let sum: u64 = t.per_thread.values().sum();
        text.push_str(&format!(
            "{}\t{}\t{max}\t{sum}\t{}\n",
            std::process::id(),
            t.entries,
            String::from_utf8_lossy(name)
        ));
    }
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

#[cold]
#[inline(never)]
fn init() -> u8 {
    let perf = crate::perf::requested();
    let state = if std::env::var_os("FLOPSCOPE_REGION_TIMES").is_some() || perf {
        TIMING
    } else if std::env::var_os("FLOPSCOPE_COUNTING").is_some() {
        COUNTING
    } else {
        OFF
    };
    match STATE.compare_exchange(UNKNOWN, state, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            if state == TIMING {
                // SAFETY: registering a plain extern "C" function.
                unsafe { libc::atexit(dump) };
            }
            if perf {
                // SAFETY: as above.
                unsafe { libc::atexit(crate::perf::dump) };
            }
            state
        }
        Err(current) => current,
    }
}

fn state() -> u8 {
    match STATE.load(Ordering::Relaxed) {
        UNKNOWN => init(),
        s => s,
    }
}

/// Whether markers do anything in this run (one load and branch when known).
#[inline(always)]
pub fn active() -> bool {
    match STATE.load(Ordering::Relaxed) {
        OFF => false,
        UNKNOWN => init() != OFF,
        _ => true,
    }
}

fn enabled() -> bool {
    state() == TIMING
}

/// A region begun again while open (recursion) is timed once: only its
/// outermost instance adds time.
pub fn on_begin(name: &[u8]) {
    if !enabled() {
        return;
    }
    let k = key(name);
    if let Ok(mut g) = TOTALS.lock() {
        g.get_or_insert_with(HashMap::new)
            .entry(k.clone())
            .or_default()
            .entries += 1;
    }
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let nested = o.iter().any(|(n, _)| *n == k);
        o.push((k.clone(), if nested { None } else { Some(Instant::now()) }));
    });
    if crate::perf::requested() {
        crate::perf::on_begin(&k);
    }
}

pub fn on_end(name: &[u8]) {
    if !enabled() {
        return;
    }
    let k = key(name);
    if crate::perf::requested() {
        crate::perf::on_end(&k);
    }
    let now = Instant::now();
    let start = OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let pos = o.iter().rposition(|(n, _)| *n == k)?;
        let start = o[pos].1;
        o.truncate(pos);
        start
    });
    if let (Some(start), Ok(mut g)) = (start, TOTALS.lock()) {
        let t = g.get_or_insert_with(HashMap::new).entry(k).or_default();
        *t.per_thread.entry(std::thread::current().id()).or_default() +=
            (now - start).as_nanos() as u64;
    }
}
