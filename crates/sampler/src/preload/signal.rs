//! The SIGPROF handler: the interrupted program counter, appended to the
//! samples file with an atomic index. No allocation, no lock, no system
//! call on its usual path (a maps refresh, rare, is async-signal-safe).

use super::{maps, state};
use crate::format::{self, word};
use core::sync::atomic::{AtomicBool, Ordering::*};
use libc::{c_int, c_void, siginfo_t};

/// `sigev_value` of the sampler's timers: SIGPROF carrying anything else
/// (`kill -PROF`, a timer of the program's) is not a sample.
pub const COOKIE: usize = 0x666c_6f70_7363_6f70; // "flopscop"

const SI_TIMER: c_int = -2;

/// The kernel's siginfo for a POSIX timer (`_sigfault` and friends share
/// the union at offset 16; `_timer` is `{ int tid; int overrun; sigval }`).
#[repr(C)]
struct TimerInfo {
    signo: c_int,
    errno: c_int,
    code: c_int,
    _pad: c_int,
    timer_id: c_int,
    overrun: c_int,
    value: usize,
}

/// SIGPROF was ignored when the library loaded (a parent ignored it before
/// exec): stray SIGPROFs are then ignored, as they would have been.
static WAS_IGNORED: AtomicBool = AtomicBool::new(false);

/// Installs the handler. False (with a message) when SIGPROF already has a
/// handler: someone else profiles this process.
///
/// # Safety
/// From the constructor.
pub unsafe fn install() -> bool {
    // SAFETY: sigaction with valid pointers; zeroed is a valid sigaction.
    unsafe {
        let mut old: libc::sigaction = core::mem::zeroed();
        if libc::sigaction(libc::SIGPROF, core::ptr::null(), &mut old) != 0 {
            return false;
        }
        match old.sa_sigaction {
            libc::SIG_DFL => {}
            libc::SIG_IGN => WAS_IGNORED.store(true, Relaxed),
            _ => {
                super::sys::warn(&[
                    b"SIGPROF already has a handler (another profiler?): this process is not sampled",
                ]);
                return false;
            }
        }
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = on_sigprof as *const () as usize;
        // SA_RESTART: interrupted slow system calls restart (most do; see
        // signal(7) for those that fail with EINTR regardless). SA_ONSTACK:
        // runtimes that run threads on small stacks (Go) require it.
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGPROF, &sa, core::ptr::null_mut()) == 0
    }
}

/// Whether SIGPROF's handler is still the sampler's.
pub fn still_ours() -> bool {
    // SAFETY: as in `install`.
    unsafe {
        let mut cur: libc::sigaction = core::mem::zeroed();
        libc::sigaction(libc::SIGPROF, core::ptr::null(), &mut cur) == 0
            && cur.sa_sigaction == on_sigprof as *const () as usize
    }
}

unsafe extern "C" fn on_sigprof(sig: c_int, info: *mut siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo (SA_SIGINFO).
    let info = unsafe { &*info.cast::<TimerInfo>() };
    if info.code != SI_TIMER || info.value != COOKIE {
        // SAFETY: in the handler of `sig`.
        unsafe { stray(sig) };
        return;
    }
    let Some(map) = state::map() else {
        return; // between a fork and the child's new file
    };
    // SAFETY: the kernel passes the interrupted context (SA_SIGINFO).
    let pc = unsafe { program_counter(ctx) };
    let weight = 1 + info.overrun.max(0) as u64;
    let taken = record(map, pc, weight);
    maps::on_sample(pc, taken);
}

/// The interrupted instruction (x86-64: RIP).
unsafe fn program_counter(ctx: *mut c_void) -> u64 {
    // SAFETY: the caller passes the handler's ucontext.
    unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] as u64 }
}

/// Appends `pc` with `weight` (timer intervals); returns the records taken
/// so far.
fn record(map: state::Map, pc: u64, mut weight: u64) -> u64 {
    let next = map.word(word::NEXT);
    loop {
        let last = weight <= format::MAX_RECORD_WEIGHT;
        let r = if last {
            format::encode_record(pc, weight)
        } else {
            format::encode_continuation(pc)
        };
        let i = next.fetch_add(1, Relaxed);
        let Some(slot) = map.record(i) else {
            map.word(word::DROPPED).fetch_add(weight, Relaxed);
            return i + 1;
        };
        slot.store(r, Relaxed);
        if last {
            return i + 1;
        }
        weight -= format::MAX_RECORD_WEIGHT;
    }
}

/// A SIGPROF that is not a sample: what would have happened without the
/// library happens. Ignored if SIGPROF was ignored; otherwise its default
/// action, termination: the disposition goes back to SIG_DFL and the
/// signal is raised again, to be delivered when this handler returns (it is
/// blocked until then).
///
/// # Safety
/// In the handler of `sig`.
unsafe fn stray(sig: c_int) {
    if WAS_IGNORED.load(Relaxed) {
        return;
    }
    let _errno = super::sys::SavedErrno::new();
    // SAFETY: sigaction and tgkill are async-signal-safe system calls.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &sa, core::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), super::sys::gettid(), sig);
    }
}
