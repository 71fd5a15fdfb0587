//! The runtime's `fs` on the threads of a statically linked program.
//!
//! The runtime is Rust on the host's glibc, and reaches its thread-local
//! state through `fs`: errno, Rust's thread-locals (`__tls_get_addr`
//! through the thread block's dtv), glibc's cancellation words. A
//! dynamically linked program shares that glibc, so `fs` always points at a
//! thread block the runtime can use. A statically linked program sets `fs`
//! to its own libc's thread block (`arch_prctl(ARCH_SET_FS)` in its start-up,
//! `clone` with CLONE_SETTLS for its threads), laid out by another libc: the
//! runtime's accesses would land in the program's memory (its own errno,
//! its malloc's thread cache).
//!
//! So on a static program's threads the runtime moves `fs` to a thread block
//! of the host's own while it runs, and back when it leaves:
//! - gs:[HOST_FS]: the host thread block of the thread; 0 for a dynamically
//!   linked program (nothing is switched, and the check is one load).
//! - gs:[APP_FS]: the program's `fs` while the thread is in the runtime.
//! - Switched in the dispatcher (`enter`/`leave`, after signals are blocked
//!   so that the program's handlers never see the host's `fs`), in the
//!   runtime's fatal-signal handler (`use_host_fs`; the process dies after
//!   it) and its SIGSEGV entry's write-fault check (`in_host`, which puts
//!   the thread's `fs` back), and back in the asm paths that leave without returning through
//!   the dispatcher (a new thread's start, `rt_sigreturn`, the program's
//!   start), see asm.rs and loader.rs. Other runtime code on the program's
//!   threads (the cache's instrumentation, the lookup routine, the
//!   sampling handler) touches no thread-local state (checked on the built
//!   library: it has no `fs:`-relative instruction of its own; the
//!   sampling handler calls no libc).
//! - The first thread uses the host's main thread block (it is that
//!   thread). Each other thread uses the block of a host thread created for
//!   it with `pthread_create` and parked (all signals blocked, waiting on a
//!   futex forever): a real glibc thread block, which nothing else touches
//!   while its thread sleeps. Blocks of threads that exited are reused.
//! - `wrfsbase`/`rdfsbase` where the kernel allows them (AT_HWCAP2 bit 1,
//!   FSGSBASE): a few cycles per switch. Else `arch_prctl(ARCH_SET_FS)` (a
//!   system call each way), and the program's `fs` is tracked instead of
//!   read: it changes only through `arch_prctl`, which the dispatcher
//!   performs (see `arch_prctl`), or `clone` (asm.rs).

use crate::dispatch::{gs_word, set_gs_word};
use crate::header;
use crate::sys::{self, syscall6};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// 1 when `rdfsbase`/`wrfsbase` may be used (read by asm.rs too).
pub static HAS_FSGSBASE: AtomicU8 = AtomicU8::new(0);
/// The program is statically linked (loaded by loader.rs).
static ON: AtomicBool = AtomicBool::new(false);

const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;
/// AT_HWCAP2's FSGSBASE bit (Linux, arch/x86/include/uapi/asm/hwcap2.h).
const HWCAP2_FSGSBASE: u64 = 1 << 1;

/// Turns the switching on (at take-over of a static program, on the host's
/// main thread, before any other thread exists).
pub fn init() {
    // SAFETY: getauxval has no preconditions.
    let hwcap2 = unsafe { libc::getauxval(libc::AT_HWCAP2) };
    let fast =
        hwcap2 & HWCAP2_FSGSBASE != 0 && std::env::var_os(SLOW_ENV).is_none_or(|v| v.is_empty());
    HAS_FSGSBASE.store(u8::from(fast), Ordering::Relaxed);
    ON.store(true, Ordering::Release);
}

/// Set: `arch_prctl` even where `wrfsbase` is allowed (tests the other
/// path; a program writing its `fs` with `wrfsbase` itself is then not
/// followed, as it cannot be where the kernel does not allow it).
pub const SLOW_ENV: &str = "FLOPSCOPE_NATIVE_NO_FSGSBASE";

/// A statically linked program runs (its threads switch `fs`).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

fn fast() -> bool {
    HAS_FSGSBASE.load(Ordering::Relaxed) != 0
}

/// This thread's `fs` base.
pub fn current() -> u64 {
    if fast() {
        let v: u64;
        // SAFETY: FSGSBASE is enabled (AT_HWCAP2).
        unsafe { std::arch::asm!("rdfsbase {}", out(reg) v, options(nostack)) };
        return v;
    }
    let mut v = 0u64;
    // SAFETY: writes v.
    unsafe {
        syscall6(
            libc::SYS_arch_prctl as u64,
            [ARCH_GET_FS, &mut v as *mut u64 as u64, 0, 0, 0, 0],
        )
    };
    v
}

/// Sets this thread's `fs` base.
pub fn set(v: u64) {
    if fast() {
        // SAFETY: FSGSBASE is enabled; the caller owns what fs means next.
        // Not `nomem`: no thread-local access may move across it.
        unsafe { std::arch::asm!("wrfsbase {}", in(reg) v, options(nostack)) };
        return;
    }
    // SAFETY: as above.
    unsafe { syscall6(libc::SYS_arch_prctl as u64, [ARCH_SET_FS, v, 0, 0, 0, 0]) };
}

/// Dispatcher entry: the host's `fs` from here on (after signals are
/// blocked, if the program has handlers).
#[inline]
pub fn enter() {
    let host = gs_word(header::HOST_FS);
    if host == 0 {
        return;
    }
    if fast() {
        set_gs_word(header::APP_FS, current());
    }
    set(host);
}

/// Dispatcher exit: the program's `fs` again. Nothing after it may touch
/// thread-local state.
#[inline]
pub fn leave() {
    if gs_word(header::HOST_FS) != 0 {
        set(gs_word(header::APP_FS));
    }
}

/// The runtime's fatal-signal handler is about to run Rust code on a
/// program thread (the process ends after it: `fs` stays the host's).
pub fn use_host_fs() {
    // Not a static program: nothing to do, and gs may be unset (a thread
    // some library started before the take-over).
    if !on() {
        return;
    }
    let host = gs_word(header::HOST_FS);
    if host != 0 {
        set(host);
    }
}

/// Runs `f`, a runtime signal handler's work, with the host's `fs`, and
/// gives the thread its `fs` back after (the signal may have landed in the
/// program or in the dispatcher: the current value is read, not tracked).
pub fn in_host<R>(f: impl FnOnce() -> R) -> R {
    if !on() {
        return f();
    }
    let host = gs_word(header::HOST_FS);
    if host == 0 {
        return f();
    }
    let was = current();
    set(host);
    let r = f();
    set(was);
    r
}

/// Runs `f`, runtime work on a program thread (the dispatcher, a write
/// fault's handling), and gives errno back its value from before. A
/// dynamically linked program shares the runtime's C library and so its
/// errno, and the runtime's calls set it when they fail: a futex wait on a
/// contended lock that finds it released already (EAGAIN), for one. A
/// program that reads errno after a failed call of its own, with a block
/// boundary in between, would see the runtime's (Erlang's loader took an
/// open()'s ENOENT for EAGAIN, and stopped). On a statically linked
/// program's threads this is the host block's errno, which the program
/// never reads.
pub fn keep_errno<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: the calling thread's errno, through the C library's own
    // accessor (fs is a thread block of the host's C library here).
    let at = unsafe { libc::__errno_location() };
    // SAFETY: as above.
    let was = unsafe { *at };
    let r = f();
    // SAFETY: as above; the thread is the same, so is its errno.
    unsafe { *at = was };
    r
}

/// Errno now, for [`set_errno`]: a dispatcher entry that leaves without
/// returning through [`keep_errno`] (`rt_sigreturn`, which may wait for
/// the translator's lock on its way) gives it back itself. (Not kept in a
/// Rust thread-local: touching the runtime's own TLS on every entry made
/// the JVM crash in 6 runs of 8 of its JIT-compiled loop. Likely why: the
/// access goes through `__tls_get_addr`, which, once the program has
/// loaded libraries since the thread started, brings the thread's DTV up
/// to date with the C library's malloc, possibly in the middle of the
/// program's own malloc. glibc's errno is initial-exec TLS: a plain load.)
pub fn errno() -> i32 {
    // SAFETY: as in `keep_errno`.
    unsafe { *libc::__errno_location() }
}

/// Sets errno (see [`errno`]).
pub fn set_errno(v: i32) {
    // SAFETY: as in `keep_errno`.
    unsafe { *libc::__errno_location() = v };
}

/// `written_code::fs_code_write_fault` (called by signals.rs's SIGSEGV
/// entry on the faulting thread) with the host's `fs`: it takes the
/// translator's lock. The program's errno is kept ([`keep_errno`]).
///
/// # Safety
/// As `fs_code_write_fault`.
pub unsafe extern "C" fn code_write_fault(uc: *const libc::ucontext_t) -> u64 {
    // SAFETY: per the contract: the kernel's context of this fault.
    let rip = unsafe { &mut (*uc.cast_mut()).uc_mcontext.gregs[libc::REG_RIP as usize] };
    if let Some(exit) = crate::code::sigset_probe_fault(*rip as u64) {
        *rip = exit as i64;
        return 1;
    }
    // SAFETY: per the contract.
    in_host(|| keep_errno(|| unsafe { crate::written_code::fs_code_write_fault(uc) }))
}

/// Whether the dispatcher must block signals for this system call whatever
/// the program's handlers so far: an `rt_sigaction` installing the
/// program's first handler would otherwise let it run while `fs` is the
/// host's.
pub fn must_block(nr: u64) -> bool {
    on() && nr == libc::SYS_rt_sigaction as u64
}

/// The program's `arch_prctl` on `fs` (the dispatcher performs every
/// `arch_prctl`): `fs` is the host's while the dispatcher runs, so the
/// program's value is kept in gs:[APP_FS] and set when the dispatcher
/// leaves. `None`: not an `fs` request, or not a static program.
pub fn arch_prctl(code: u64, addr: u64) -> Option<i64> {
    if !on() {
        return None;
    }
    match code {
        ARCH_SET_FS => {
            // The kernel's own check (arch/x86/kernel/process_64.c).
            if addr >= 0x7fff_ffff_f000 {
                return Some(-(libc::EPERM as i64));
            }
            set_gs_word(header::APP_FS, addr);
            Some(0)
        }
        ARCH_GET_FS => {
            let v = gs_word(header::APP_FS).to_le_bytes();
            Some(if sys::write_self(addr, &v) == v.len() {
                0
            } else {
                -(libc::EFAULT as i64)
            })
        }
        _ => None,
    }
}

/// A `clone` of a new process (no CLONE_VM) with CLONE_SETTLS: the
/// dispatcher performs it, and its child goes on in the dispatcher, so the
/// flag is taken off the call (restored after it) and the child's `fs` set
/// when it leaves the dispatcher ([`forked_with_tls`]). Returns the
/// program's flags and `tls`.
pub fn fork_tls(ctx: &mut crate::asm::Context) -> Option<(u64, u64)> {
    const CLONE_VM: u64 = 0x100;
    const CLONE_SETTLS: u64 = 0x80000;
    let flags = ctx.rdi;
    if !on()
        || ctx.rax != libc::SYS_clone as u64
        || flags & CLONE_SETTLS == 0
        || (flags & CLONE_VM != 0 && ctx.rsi != 0)
    {
        return None;
    }
    ctx.rdi &= !CLONE_SETTLS;
    Some((flags, ctx.r8))
}

/// After the `clone` [`fork_tls`] changed: the program's flags back, and
/// the child's `fs` the one it asked for.
pub fn forked_with_tls(ctx: &mut crate::asm::Context, (flags, tls): (u64, u64)) {
    ctx.rdi = flags;
    if ctx.rax == 0 {
        set_gs_word(header::APP_FS, tls);
    }
}

/// Host thread blocks of threads that exited, with their thread ids
/// (reusable once the id is gone).
static RETIRED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&RETIRED)
}

/// The calling thread is exiting: its host block may serve a later thread.
pub fn retire() {
    let host = gs_word(header::HOST_FS);
    if host != 0 {
        RETIRED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((host, sys::gettid()));
    }
}

/// A host thread block for a new thread of the program: one whose thread
/// has exited, or a new parked host thread's.
pub fn new_block() -> Option<u64> {
    {
        let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = r.iter().position(|(_, tid)| sys::id_gone(*tid)) {
            return Some(r.swap_remove(i).0);
        }
    }
    park_host_thread()
}

/// Bytes of a parked thread's stack (glibc puts the thread block and its
/// static TLS at its top; the thread itself uses a few hundred bytes).
const PARKED_STACK: usize = 256 << 10;

/// What a parked thread publishes: its `fs` base, then `ready` (the
/// futex word its creator waits on).
struct Parked {
    fs: AtomicU64,
    ready: AtomicU32,
}

/// Creates a host thread that publishes its `fs` base and sleeps forever.
fn park_host_thread() -> Option<u64> {
    let p: &'static Parked = Box::leak(Box::new(Parked {
        fs: AtomicU64::new(0),
        ready: AtomicU32::new(0),
    }));
    // Every signal blocked before the thread exists: it inherits the mask
    // (a process-directed signal must never pick it: it has no gs).
    let old = sys::sigmask(libc::SIG_SETMASK, !0);
    // SAFETY: plain pthread calls on our own attribute object.
    let ok = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        let mut t: libc::pthread_t = 0;
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstacksize(&mut attr, PARKED_STACK);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        let r = libc::pthread_create(
            &mut t,
            &attr,
            parked,
            p as *const Parked as *mut libc::c_void,
        );
        libc::pthread_attr_destroy(&mut attr);
        r == 0
    };
    sys::sigmask(libc::SIG_SETMASK, old);
    if !ok {
        return None;
    }
    while p.ready.load(Ordering::Acquire) == 0 {
        futex(&p.ready, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, 0);
    }
    Some(p.fs.load(Ordering::Acquire))
}

fn futex(word: &AtomicU32, op: i32, val: u32) {
    // SAFETY: a futex operation on a word of ours, no timeout.
    unsafe {
        syscall6(
            libc::SYS_futex as u64,
            [
                word as *const AtomicU32 as u64,
                op as u64,
                u64::from(val),
                0,
                0,
                0,
            ],
        )
    };
}

extern "C" fn parked(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: the creator passes a leaked Parked.
    let p = unsafe { &*(arg as *const Parked) };
    sys::sigmask(libc::SIG_SETMASK, !0);
    let mut fs = 0u64;
    // SAFETY: reads this thread's fs base into fs.
    unsafe {
        syscall6(
            libc::SYS_arch_prctl as u64,
            [ARCH_GET_FS, &mut fs as *mut u64 as u64, 0, 0, 0, 0],
        )
    };
    p.fs.store(fs, Ordering::Release);
    p.ready.store(1, Ordering::Release);
    futex(&p.ready, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1);
    static NEVER: AtomicU32 = AtomicU32::new(0);
    loop {
        futex(&NEVER, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_host_thread_lends_a_thread_block_of_its_own() {
        let block = park_host_thread().expect("a parked thread");
        assert_ne!(block, current(), "not this thread's block");
        // glibc's thread block starts with its own address (tcbhead_t.tcb).
        // SAFETY: the parked thread's block, which stays allocated.
        assert_eq!(unsafe { *(block as *const u64) }, block);
    }
}
