//! The preload library (feature `preload`, x86-64 Linux): loaded with
//! `LD_PRELOAD` and `FLOPSCOPE_SAMPLE_DIR` set, its constructor starts
//! sampling every thread of the process on CPU time.
//!
//! - [`state`]: configuration, the samples file and its mapping;
//! - [`threads`]: a CPU-time timer per thread (why: see there), the
//!   `pthread_create` interposer, the fork handler;
//! - [`signal`]: the SIGPROF handler;
//! - [`maps`]: the maps file, kept current;
//! - [`sys`]: async-signal-safe helpers.
//!
//! Entry points: the constructor and destructor below (`.init_array`,
//! `.fini_array`), the SIGPROF handler, the fork handler, `pthread_create`
//! and the trampoline new threads start on. None allocates or locks except
//! `pthread_create` (one malloc per thread). They are written not to panic
//! (no unwrap, indexing within checked bounds); a panic would abort the
//! process (the library is built with panic=abort, and a panic cannot leave
//! an `extern "C"` function anyway), never unwind into the program.

mod maps;
mod signal;
mod state;
mod sys;
mod threads;

use crate::format::{flag, word};
use core::sync::atomic::{AtomicBool, Ordering::*};

/// Set once the process samples: its file is mapped, the handler installed.
/// Cleared in a forked child whose file could not be created.
static ACTIVE: AtomicBool = AtomicBool::new(false);

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

#[used]
#[link_section = ".fini_array"]
static FINI: extern "C" fn() = fini;

extern "C" fn init() {
    // SAFETY: the constructor runs once, before the program's main.
    unsafe { start() };
}

/// Reads the configuration; without `FLOPSCOPE_SAMPLE_DIR` does nothing.
unsafe fn start() {
    let Some(dir) = env(crate::DIR_ENV).filter(|d| !d.is_empty()) else {
        return;
    };
    let Some(hz) = setting(
        crate::HZ_ENV,
        crate::DEFAULT_HZ,
        1_000_000,
        b"samples per second",
    ) else {
        return;
    };
    let Some(capacity) = setting(
        crate::CAPACITY_ENV,
        crate::DEFAULT_CAPACITY,
        1 << 32,
        b"samples",
    ) else {
        return;
    };
    {
        // SAFETY: nothing reads the configuration before sampling starts.
        let cfg = unsafe { &mut *state::CONFIG.get() };
        let dir = dir
            .strip_suffix(b"/")
            .filter(|d| !d.is_empty())
            .unwrap_or(dir);
        // A relative directory would be resolved again by each exec'd
        // program, from wherever it starts.
        if dir.first() != Some(&b'/') {
            sys::warn(&[
                b"FLOPSCOPE_SAMPLE_DIR=",
                dir,
                b" is not an absolute path: this process is not sampled",
            ]);
            return;
        }
        if !cfg.dir.push(dir) {
            sys::warn(&[b"FLOPSCOPE_SAMPLE_DIR is too long: this process is not sampled"]);
            return;
        }
        cfg.interval_ns = (1_000_000_000 / hz).max(1);
        cfg.capacity = capacity;
    }
    // SAFETY: from the constructor, in the order each requires: the handler
    // before any timer can fire, the file before any timer is armed.
    unsafe {
        if !signal::install() {
            return;
        }
        threads::init();
        if !state::create_file() {
            return;
        }
        ACTIVE.store(true, Release);
        threads::arm_all();
    }
}

/// The value of environment variable `name` (one of the crate's `*_ENV`).
fn env(name: &str) -> Option<&'static [u8]> {
    let mut cname = crate::text::FixedBuf::<64>::new();
    cname.push(name.as_bytes());
    // SAFETY: FixedBuf keeps a NUL after its bytes.
    sys::getenv(unsafe { core::ffi::CStr::from_ptr(cname.as_ptr()) })
}

/// A whole number from the environment variable `name` (`default` when
/// unset), in 1..=max; None, with a message, when it is not.
fn setting(name: &str, default: u64, max: u64, unit: &[u8]) -> Option<u64> {
    let Some(v) = env(name) else {
        return Some(default);
    };
    let n = crate::text::parse_dec(v).filter(|n| (1..=max).contains(n));
    if n.is_none() {
        let mut digits = [0u8; 20];
        sys::warn(&[
            name.as_bytes(),
            b"=",
            v,
            b" is not a whole number of ",
            unit,
            b" between 1 and ",
            crate::text::format_dec(max, &mut digits),
            b": this process is not sampled",
        ]);
    }
    n
}

/// At exit (this process's, not a child's that forked without the fork
/// handler and shares the file): the final map, the CPU time, the flags.
/// Timers keep running: other libraries' destructors, which run after this
/// one, are sampled too.
extern "C" fn fini() {
    if !ACTIVE.load(Acquire) {
        return;
    }
    let Some(map) = state::map() else {
        return;
    };
    // SAFETY: getpid and clock_gettime have no preconditions.
    let (pid, cpu_ns) = unsafe {
        let mut ts: libc::timespec = core::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
        (
            libc::getpid() as u64,
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        )
    };
    if map.word(word::PID).load(Relaxed) != pid {
        return;
    }
    // SAFETY: the maps paths were set when the file was created.
    unsafe { maps::write_waiting() };
    let mut flags = flag::EXITED;
    if !signal::still_ours() {
        flags |= flag::HANDLER_REPLACED;
    }
    map.word(word::CPU_NS_AT_EXIT).store(cpu_ns.max(1), Relaxed);
    map.word(word::FLAGS).fetch_or(flags, Release);
}
