//! System calls whose kernel side writes into the program's memory (a
//! `read` buffer, a `stat` structure), when that memory may be a page the
//! engine keeps read-only to see code rewritten (written_code.rs).
//!
//! A store of the program's own to such a page faults, and the engine
//! gives the page back; the kernel's store instead fails the call with
//! EFAULT, or cuts a `read` short at the page. JIT compilers that keep
//! code and data on the same pages meet this: Racket's Chez Scheme reads
//! its boot files into pages of its heap that already hold code it ran,
//! and stopped with "error reading from ~a".
//!
//! Until the engine protects a first page, these calls run in the cache
//! as any other. From then on they are sent to the dispatcher
//! (`syscalls::SPECIAL` and each arena's bit map), which gives back the
//! pages of the memory the call will write (invalidating their
//! translations, as a program's write would) and lets the call run in the
//! cache, at its copy in the block (`Exit::Syscall`'s `native`): there it
//! is interrupted by signals and restarted exactly as it is natively. The
//! engine's own system calls that write the program's memory
//! (`rt_sigaction`'s and `rt_sigprocmask`'s old values) are checked the
//! same way before the dispatcher performs them.
//!
//! Between the check and the call, another thread may translate code on
//! such a page and protect it again. Every system call in the cache is
//! followed by a test of its result (`Code::on_efault`): an EFAULT goes
//! back to the dispatcher ([`after_efault`]), which runs the call again
//! when its memory holds a page the engine may protect. For most calls an
//! EFAULT means nothing was done; a few did their work before failing to
//! copy the result out (`accept` took the connection, `wait4` reaped the
//! child), and running them again differs from the one native run. Only
//! that race, which needs code and the call's memory on one page and
//! another thread translating there, reaches it.
//!
//! The memory each call writes is known from its arguments, and where they
//! point to more (`readv`'s vectors, `recvmsg`'s header), from what they
//! point to, read without faulting. Not covered: calls whose written
//! memory is not in their arguments (an `io_uring` completion, an
//! `ioctl` whose size is not in its number, but for the terminal's,
//! `FIONREAD`'s and `TIOCGWINSZ`'s), which still fail as they did.

use crate::asm::Context;
use crate::cache::Arena;
use crate::sys::read_self;
use crate::syscalls::SPECIAL;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// Set once the engine protects a first page (never cleared: pages may be
/// protected again at any time).
static ON: AtomicBool = AtomicBool::new(false);

/// The lowest and highest page the engine ever protected: memory outside
/// them needs no look-up under the translator's lock (a JIT's buffers
/// are often far from its code).
static LOWEST: AtomicU64 = AtomicU64::new(u64::MAX);
static HIGHEST: AtomicU64 = AtomicU64::new(0);

/// At a system call's number: 1 for those sent to the dispatcher only for
/// this check (they then run in the cache).
static ROUTED: [AtomicU8; 512] = [const { AtomicU8::new(0) }; 512];

/// System calls that write memory their arguments name, and are not
/// otherwise the dispatcher's.
const WRITERS: [i64; 64] = [
    libc::SYS_read,
    libc::SYS_pread64,
    libc::SYS_readv,
    libc::SYS_preadv,
    libc::SYS_preadv2,
    libc::SYS_process_vm_readv,
    libc::SYS_recvfrom,
    libc::SYS_recvmsg,
    libc::SYS_recvmmsg,
    libc::SYS_getdents,
    libc::SYS_getdents64,
    libc::SYS_getrandom,
    libc::SYS_stat,
    libc::SYS_fstat,
    libc::SYS_lstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_readlink,
    libc::SYS_readlinkat,
    libc::SYS_getcwd,
    libc::SYS_uname,
    libc::SYS_sysinfo,
    libc::SYS_times,
    libc::SYS_getrusage,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_pipe,
    libc::SYS_pipe2,
    libc::SYS_socketpair,
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_getsockopt,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_rt_sigpending,
    libc::SYS_sigaltstack,
    libc::SYS_sched_getaffinity,
    libc::SYS_prlimit64,
    libc::SYS_getrlimit,
    libc::SYS_getitimer,
    libc::SYS_setitimer,
    libc::SYS_timer_gettime,
    libc::SYS_timer_settime,
    libc::SYS_timerfd_gettime,
    libc::SYS_timerfd_settime,
    libc::SYS_getxattr,
    libc::SYS_fgetxattr,
    libc::SYS_ioctl,
    libc::SYS_fcntl,
];

/// The engine is about to protect page `p` (under the translator's
/// lock): from now on, the calls of [`WRITERS`] go to the dispatcher, in
/// the blocks of `arenas` and of arenas made later (a call that passed
/// its block's check a moment before still runs unchecked).
pub fn route(arenas: &[Arena], p: u64) {
    LOWEST.fetch_min(p, Ordering::AcqRel);
    HIGHEST.fetch_max(p, Ordering::AcqRel);
    if ON.swap(true, Ordering::AcqRel) {
        return;
    }
    for nr in WRITERS {
        let n = nr as usize;
        if SPECIAL[n].load(Ordering::Relaxed) == 0 {
            ROUTED[n].store(1, Ordering::Relaxed);
            SPECIAL[n].store(1, Ordering::Release);
        }
    }
    for a in arenas {
        for nr in WRITERS {
            let n = nr as usize;
            if ROUTED[n].load(Ordering::Relaxed) == 0 {
                continue;
            }
            // SAFETY: the arena's bit map (cache.rs, `Routines::specials`),
            // 64 bytes of its writable memory, read by its blocks' `bt`.
            let byte = unsafe { &*((a.routines.specials + n as u64 / 8) as *const AtomicU8) };
            byte.fetch_or(1 << (n % 8), Ordering::Release);
        }
    }
}

/// At a system call's exit to the dispatcher: gives back the protected
/// pages the call will write. Returns where the program goes on when the
/// call was sent here for that only: its copy in the cache, `native`.
pub fn before_syscall(ctx: &Context, native: u64) -> Option<u64> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    give_back(ctx.rax, ctx);
    (routed(ctx.rax) && native != 0).then_some(native)
}

/// A system call run in the cache (its number in `gs:[SYSCALL_NR]`)
/// returned EFAULT. If the memory it was to write holds a page the engine
/// protected after the dispatcher's check (another thread translated code
/// there in between, and maybe a third gave it back since), the page is
/// given back and the call runs again at its copy, `native`: with EFAULT,
/// the kernel wrote nothing; threads that translate code on that page as
/// fast as others write into it may make it take a few tries. Else (or
/// after [`MAX_TRIES`] in a row there) the error is the program's, which
/// goes on at `next`.
pub fn after_efault(ctx: &mut Context, next: u64, native: u64) -> Result<u64, String> {
    use crate::dispatch::{gs_word, set_gs_word};
    use crate::header::{EFAULT_RETRY, EFAULT_TRIES, SYSCALL_NR};
    let nr = gs_word(SYSCALL_NR);
    if ON.load(Ordering::Acquire) && native != 0 {
        let watched = give_back(nr, ctx);
        let tries = if gs_word(EFAULT_RETRY) == native {
            gs_word(EFAULT_TRIES) + 1
        } else {
            1
        };
        if watched && tries <= MAX_TRIES {
            set_gs_word(EFAULT_RETRY, native);
            set_gs_word(EFAULT_TRIES, tries);
            ctx.rax = nr;
            return Ok(native);
        }
    }
    set_gs_word(EFAULT_RETRY, 0);
    crate::translator::lookup_or_translate(next)
}

/// How many times in a row a system call runs again after EFAULT on
/// memory that holds a page the engine may protect.
const MAX_TRIES: u64 = 1000;

/// Gives back the protected pages system call `nr`, its arguments in
/// `ctx`, will write; says whether that memory holds any page the engine
/// may protect.
fn give_back(nr: u64, ctx: &Context) -> bool {
    let a = [ctx.rdi, ctx.rsi, ctx.rdx, ctx.r10, ctx.r8, ctx.r9];
    let mut out = Vec::new();
    written(nr as i64, a, &mut out);
    let (lo, hi) = (
        LOWEST.load(Ordering::Acquire),
        HIGHEST.load(Ordering::Acquire),
    );
    out.retain(|&(at, len)| at <= hi.saturating_add(4095) && at.saturating_add(len) > lo);
    !out.is_empty() && crate::translator::kernel_writes(&out)
}

/// Whether system call `nr` comes to the dispatcher only for this check:
/// the dispatcher then defers the signals that come meanwhile, as while
/// translating, rather than blocking them around it (two system calls
/// more for each).
pub fn routed(nr: u64) -> bool {
    nr < 512 && ROUTED[nr as usize].load(Ordering::Relaxed) != 0
}

fn u32_at(at: u64) -> Option<u64> {
    let mut b = [0u8; 4];
    (at != 0 && read_self(at, &mut b) == 4).then(|| u64::from(u32::from_le_bytes(b)))
}

fn u64_at(at: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    (at != 0 && read_self(at, &mut b) == 8).then(|| u64::from_le_bytes(b))
}

/// `(start, length)` ranges: a null pointer or an empty length writes
/// nothing.
fn push(out: &mut Vec<(u64, u64)>, at: u64, len: u64) {
    if at != 0 && len != 0 {
        out.push((at, len));
    }
}

/// A buffer whose length the kernel reads from a `socklen_t` at `len_at`
/// (and writes back).
fn sized(out: &mut Vec<(u64, u64)>, at: u64, len_at: u64) {
    if let Some(n) = u32_at(len_at) {
        push(out, at, n);
        push(out, len_at, 4);
    }
}

/// The buffers of `count` `struct iovec`s at `iov` (read at once; the
/// kernel takes at most 1,024).
fn iovecs(out: &mut Vec<(u64, u64)>, iov: u64, count: u64) {
    if iov == 0 {
        return;
    }
    let mut raw = vec![0u8; 16 * count.min(1024) as usize];
    let n = read_self(iov, &mut raw) / 16;
    for v in raw[..16 * n].chunks_exact(16) {
        let word = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().expect("8 bytes"));
        push(out, word(0), word(8));
    }
}

/// A `struct msghdr` at `m`: itself (lengths and flags written back), its
/// name, its vectors and its control buffer.
fn msghdr(out: &mut Vec<(u64, u64)>, m: u64) {
    push(out, m, 56);
    if let (Some(name), Some(namelen)) = (u64_at(m), u32_at(m + 8)) {
        push(out, name, namelen);
    }
    if let (Some(iov), Some(n)) = (u64_at(m + 16), u64_at(m + 24)) {
        iovecs(out, iov, n);
    }
    if let (Some(control), Some(len)) = (u64_at(m + 32), u64_at(m + 40)) {
        push(out, control, len);
    }
}

/// The memory system call `nr` with arguments `a` may write.
pub fn written(nr: i64, a: [u64; 6], out: &mut Vec<(u64, u64)>) {
    const STAT: u64 = std::mem::size_of::<libc::stat>() as u64;
    const TIMESPEC: u64 = 16;
    const ITIMERSPEC: u64 = 32;
    const RUSAGE: u64 = std::mem::size_of::<libc::rusage>() as u64;
    const SIGINFO: u64 = 128;
    match nr {
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_getdents
        | libc::SYS_getdents64
        | libc::SYS_readlink => push(out, a[1], a[2]),
        libc::SYS_readlinkat => push(out, a[2], a[3]),
        libc::SYS_readv | libc::SYS_preadv | libc::SYS_preadv2 | libc::SYS_process_vm_readv => {
            iovecs(out, a[1], a[2])
        }
        libc::SYS_recvfrom => {
            push(out, a[1], a[2]);
            sized(out, a[4], a[5]);
        }
        libc::SYS_recvmsg => msghdr(out, a[1]),
        libc::SYS_recvmmsg => {
            for i in 0..a[2].min(1024) {
                let m = a[1] + 64 * i;
                msghdr(out, m);
                push(out, m + 56, 4);
            }
        }
        libc::SYS_getrandom | libc::SYS_getcwd => push(out, a[0], a[1]),
        libc::SYS_stat | libc::SYS_fstat | libc::SYS_lstat => push(out, a[1], STAT),
        libc::SYS_newfstatat => push(out, a[2], STAT),
        libc::SYS_statx => push(out, a[4], 256),
        libc::SYS_statfs | libc::SYS_fstatfs => {
            push(out, a[1], std::mem::size_of::<libc::statfs>() as u64)
        }
        libc::SYS_uname => push(out, a[0], std::mem::size_of::<libc::utsname>() as u64),
        libc::SYS_sysinfo => push(out, a[0], std::mem::size_of::<libc::sysinfo>() as u64),
        libc::SYS_times => push(out, a[0], 32),
        libc::SYS_getrusage => push(out, a[1], RUSAGE),
        libc::SYS_wait4 => {
            push(out, a[1], 4);
            push(out, a[3], RUSAGE);
        }
        libc::SYS_waitid => {
            push(out, a[2], SIGINFO);
            push(out, a[4], RUSAGE);
        }
        libc::SYS_pipe | libc::SYS_pipe2 => push(out, a[0], 8),
        libc::SYS_socketpair => push(out, a[3], 8),
        libc::SYS_accept | libc::SYS_accept4 | libc::SYS_getsockname | libc::SYS_getpeername => {
            sized(out, a[1], a[2])
        }
        libc::SYS_getsockopt => sized(out, a[3], a[4]),
        libc::SYS_epoll_wait | libc::SYS_epoll_pwait => push(out, a[1], a[2].min(1 << 24) * 12),
        libc::SYS_poll | libc::SYS_ppoll => push(out, a[0], a[1].min(1 << 24) * 8),
        libc::SYS_select | libc::SYS_pselect6 => {
            let set = a[0].min(1 << 20).div_ceil(64) * 8;
            for s in [a[1], a[2], a[3]] {
                push(out, s, set);
            }
            push(out, a[4], TIMESPEC);
        }
        libc::SYS_clock_gettime | libc::SYS_clock_getres => push(out, a[1], TIMESPEC),
        libc::SYS_gettimeofday => {
            push(out, a[0], 16);
            push(out, a[1], 8);
        }
        libc::SYS_time => push(out, a[0], 8),
        libc::SYS_nanosleep => push(out, a[1], TIMESPEC),
        libc::SYS_clock_nanosleep => push(out, a[3], TIMESPEC),
        libc::SYS_rt_sigtimedwait => push(out, a[1], SIGINFO),
        libc::SYS_rt_sigpending => push(out, a[0], a[1].min(128)),
        libc::SYS_sigaltstack => push(out, a[1], 24),
        libc::SYS_sched_getaffinity => push(out, a[2], a[1]),
        libc::SYS_prlimit64 => push(out, a[3], 16),
        libc::SYS_getrlimit => push(out, a[1], 16),
        libc::SYS_getitimer => push(out, a[1], 32),
        libc::SYS_setitimer => push(out, a[2], 32),
        libc::SYS_timer_gettime | libc::SYS_timerfd_gettime => push(out, a[1], ITIMERSPEC),
        libc::SYS_timer_settime | libc::SYS_timerfd_settime => push(out, a[3], ITIMERSPEC),
        libc::SYS_getxattr | libc::SYS_fgetxattr => push(out, a[2], a[3]),
        libc::SYS_ioctl => {
            // _IOR and _IOWR requests carry their size (asm-generic/ioctl.h);
            // the terminal's older ones do not.
            let (dir, size) = ((a[1] >> 30) & 3, (a[1] >> 16) & 0x3fff);
            let size = match a[1] as u32 as u64 {
                _ if dir & 2 != 0 => size,
                0x5401 => std::mem::size_of::<libc::termios>() as u64, // TCGETS
                0x5413 => 8,                                           // TIOCGWINSZ
                0x541b => 4,                                           // FIONREAD
                _ => 0,
            };
            push(out, a[2], size);
        }
        libc::SYS_fcntl if matches!(a[1] as i32, libc::F_GETLK | libc::F_OFD_GETLK) => {
            push(out, a[2], std::mem::size_of::<libc::flock>() as u64)
        }
        // The engine's own writes (signals.rs) of the old values.
        libc::SYS_rt_sigprocmask => push(out, a[2], 8),
        libc::SYS_rt_sigaction => push(out, a[2], 32),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_writer_names_what_it_writes_and_is_not_already_the_dispatchers() {
        let mut seen = std::collections::HashSet::new();
        for nr in WRITERS {
            assert!(seen.insert(nr), "{nr} listed twice");
            assert!((0..512).contains(&nr));
            // Calls the dispatcher performs are checked before it does,
            // not routed (see `route`).
            assert_eq!(SPECIAL[nr as usize].load(Ordering::Relaxed), 0, "{nr}");
        }
        let mut out = Vec::new();
        let buf = [0u8; 64];
        let p = buf.as_ptr() as u64;
        written(libc::SYS_read, [3, p, 64, 0, 0, 0], &mut out);
        assert_eq!(out, [(p, 64)]);
        out.clear();
        // readv: two vectors read back from the program's memory.
        let iov: [u64; 4] = [p, 10, p + 32, 20];
        written(
            libc::SYS_readv,
            [3, iov.as_ptr() as u64, 2, 0, 0, 0],
            &mut out,
        );
        assert_eq!(out, [(p, 10), (p + 32, 20)]);
        out.clear();
        // A vector array that cannot be read names nothing (the kernel
        // answers EFAULT itself).
        written(libc::SYS_readv, [3, 8, 2, 0, 0, 0], &mut out);
        assert!(out.is_empty());
        // accept: the address's length read from the socklen_t.
        let len: u32 = 16;
        let len_at = &len as *const u32 as u64;
        written(libc::SYS_accept, [3, p, len_at, 0, 0, 0], &mut out);
        assert_eq!(out, [(p, 16), (len_at, 4)]);
        out.clear();
        // ioctl: an _IOR request's size from its number; TCGETS by name; a
        // request without a size names nothing.
        written(libc::SYS_ioctl, [0, 0x8008_5401, p, 0, 0, 0], &mut out);
        written(libc::SYS_ioctl, [0, 0x5401, p, 0, 0, 0], &mut out);
        written(libc::SYS_ioctl, [0, 0x5402, p, 0, 0, 0], &mut out);
        let termios = std::mem::size_of::<libc::termios>() as u64;
        assert_eq!(out, [(p, 8), (p, termios)]);
        // A write-only call names nothing.
        out.clear();
        written(libc::SYS_write, [1, p, 64, 0, 0, 0], &mut out);
        assert!(out.is_empty());
    }
}
