//! SIGINT, SIGTERM and SIGHUP while flopscope runs a program: flopscope
//! does not die of them (it would lose the counts and leave its counter
//! files and QEMU behind); it passes them on to the program it is waiting
//! for, which ends as it would alone (the engines keep the counts up to
//! there), and the report is written, marked incomplete, with the signal
//! named. This is how a batch system's time limit (SIGTERM, then SIGKILL
//! after a grace period) or Ctrl-C ends a counted run without losing it.

use flopscope_counter_file::orphans::HURRY;
use flopscope_counter_file::progress::WAITED;
use std::sync::atomic::{AtomicI32, Ordering};

/// The last of these signals flopscope received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers (once, at start).
pub fn install() {
    for sig in FORWARDED {
        // SAFETY: the handler only stores to atomics and calls kill(2),
        // both async-signal-safe.
        let r = unsafe {
            signal_hook::low_level::register(sig, move || {
                RECEIVED.store(sig, Ordering::SeqCst);
                // Processes left running after the program: stopped now.
                HURRY.store(true, Ordering::SeqCst);
                let pid = WAITED.load(Ordering::SeqCst);
                if pid > 0 {
                    libc::kill(pid, sig);
                }
            })
        };
        if let Err(e) = r {
            eprintln!("flopscope: warning: cannot handle signal {sig}: {e}");
        }
    }
}

/// SIGPIPE no longer kills flopscope (a write to a closed pipe fails with
/// EPIPE instead). A handler, not SIG_IGN: the programs flopscope starts
/// get the default action back when they exec, as they would alone.
pub fn survive_broken_pipe() {
    // SAFETY: the handler does nothing.
    if let Err(e) = unsafe { signal_hook::low_level::register(libc::SIGPIPE, || {}) } {
        eprintln!("flopscope: warning: cannot handle SIGPIPE: {e}");
    }
}

/// The signal received so far, by name, if any.
pub fn received() -> Option<String> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(flopscope_model::status::signal_name(s)),
    }
}

/// The signal received so far, by number, if any.
pub fn received_number() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
