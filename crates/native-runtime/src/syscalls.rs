//! System calls made by the program, performed by the dispatcher on its
//! behalf. Most pass straight through; these need the engine:
//! - `clone` of a thread (CLONE_VM): the child gets its own counters and
//!   starts in the cache; `clone3` answers ENOSYS (libc then uses `clone`).
//! - `fork`, `vfork` (run as fork), `clone` without CLONE_VM: the child
//!   counts from zero into a counter file of its own.
//! - `exit_group`, and `exit` of the last thread: counts written first,
//!   with the exit code.
//! - `execve`/`execveat`: counts written first (the exec'd program, if it
//!   is dynamically linked, is taken over again and counted in its own file).
//! - `rt_sigaction`, `rt_sigreturn`: handlers run in the cache (signals.rs).
//! - `rt_sigprocmask` with a new mask that would block SIGSEGV (the others
//!   run in the cache: code.rs, `syscall_check`): SIGSEGV is never blocked
//!   (signals.rs).
//! - `arch_prctl` on gs: the engine's own register; refused clearly.
//! - `mprotect`, `pkey_mprotect`, `munmap`, `mremap` and `mmap` with
//!   MAP_FIXED: the engine's protection of the range is gone, and the
//!   blocks of a range made writable, unmapped or mapped anew are
//!   invalidated (written_code.rs).

use crate::asm::{fs_clone, fs_sigreturn, Context};
use crate::dispatch::{fatal, gs_word};
use crate::header;
use crate::sys::syscall6;
use crate::{out, sampling, signals, thread, translator};
use flopscope_counter_file::layout::ProcessEnd;
use std::sync::atomic::{AtomicU8, Ordering};

const CLONE_VM: u64 = 0x100;
const CLONE_VFORK: u64 = 0x4000;

/// System calls the cache sends to the dispatcher (the others run in the
/// cache): 1 at a system call's number (`brk` too, for a static program:
/// loader.rs).
pub static SPECIAL: [AtomicU8; 512] = {
    let mut t = [const { AtomicU8::new(0) }; 512];
    let nrs = [
        libc::SYS_clone,
        libc::SYS_clone3,
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_rt_sigaction,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigreturn,
        libc::SYS_arch_prctl,
        libc::SYS_munmap,
        libc::SYS_mprotect,
        libc::SYS_pkey_mprotect,
        libc::SYS_mmap,
        libc::SYS_mremap,
        libc::SYS_prctl,
        libc::SYS_seccomp,
    ];
    let mut i = 0;
    while i < nrs.len() {
        t[nrs[i] as usize] = AtomicU8::new(1);
        i += 1;
    }
    t
};

/// `masked`: the program's signal mask while the dispatcher blocks signals.
/// `rt_sigprocmask` changes it.
pub fn handle(ctx: &mut Context, next: u64, masked: &mut Option<u64>) -> Result<u64, String> {
    let nr = ctx.rax as i64;
    let a = [ctx.rdi, ctx.rsi, ctx.rdx, ctx.r10, ctx.r8, ctx.r9];
    let raw = |nr: i64, a: [u64; 6]| {
        // SAFETY: the program's own system call, as it asked for it.
        unsafe { syscall6(nr as u64, a) }
    };
    let ret = match nr {
        libc::SYS_clone3 => -(libc::ENOSYS as i64),
        libc::SYS_clone if a[0] & CLONE_VM != 0 && a[1] != 0 => new_thread(ctx, next, a, *masked)?,
        libc::SYS_clone | libc::SYS_fork | libc::SYS_vfork => {
            let r = crate::fork::holding_locks(|| {
                if nr == libc::SYS_clone {
                    raw(nr, [a[0] & !(CLONE_VM | CLONE_VFORK), 0, a[2], a[3], a[4], 0])
                } else {
                    raw(libc::SYS_fork, [0; 6])
                }
            });
            if r == 0 {
                out::after_fork();
                sampling::after_fork();
            }
            r
        }
        libc::SYS_exit_group => {
            out::note_end(ProcessEnd::Exited((a[0] & 0xff) as i32));
            out::flush(true);
            sampling::finish(true);
            raw(nr, a)
        }
        libc::SYS_exit => {
            let last = thread::LIVE.fetch_sub(1, Ordering::AcqRel) == 1;
            if last {
                out::note_end(ProcessEnd::Exited((a[0] & 0xff) as i32));
                out::flush(true);
                sampling::finish(true);
            } else {
                sampling::thread_exit();
                // Its state may serve a later thread once it is gone.
                thread::current().exited.store(true, Ordering::Release);
            }
            // A static program's last thread ends the process: the host
            // threads parked for the others (hostfs.rs) would outlive it.
            let group = last && crate::hostfs::on();
            raw(if group { libc::SYS_exit_group } else { nr }, a)
        }
        libc::SYS_execve | libc::SYS_execveat => {
            out::note_end(ProcessEnd::Exec);
            out::flush(true);
            sampling::before_exec();
            signals::unblock(*masked);
            let r = raw(nr, a);
            sampling::exec_failed();
            signals::block_again(*masked);
            // The exec failed: the program goes on.
            out::note_end(ProcessEnd::NotSeen);
            out::flush(false);
            r
        }
        libc::SYS_rt_sigaction => signals::sigaction(a),
        libc::SYS_rt_sigprocmask => signals::sigprocmask(a, masked),
        libc::SYS_rt_sigreturn => {
            let errno = crate::hostfs::errno();
            let frame = gs_word(header::APP_RSP);
            // The handler returned (rsp past its return address: the
            // frame's ucontext).
            signals::keep_segv_unblocked_after(frame);
            if let Err(e) = signals::back_to_cache(frame) {
                fatal(next, &e);
            }
            signals::before_sigreturn();
            // This entry does not return through `keep_errno`.
            crate::hostfs::set_errno(errno);
            // SAFETY: the frame the kernel built, at the program's rsp.
            unsafe { fs_sigreturn(frame) }
        }
        // A seccomp filter would judge the engine's own system calls too
        // (mmap and mprotect for the code cache, the counter file's writes)
        // and could deny them half-way through the run.
        libc::SYS_prctl if a[0] == libc::PR_SET_SECCOMP as u64 => {
            fatal(next, "the program installs a seccomp filter (prctl PR_SET_SECCOMP), which would also judge the native engine's own system calls: count it with --engine emulate")
        }
        libc::SYS_seccomp if a[0] == libc::SECCOMP_SET_MODE_STRICT as u64 || a[0] == libc::SECCOMP_SET_MODE_FILTER as u64 => {
            fatal(next, "the program installs a seccomp filter (seccomp SECCOMP_SET_MODE_*), which would also judge the native engine's own system calls: count it with --engine emulate")
        }
        libc::SYS_arch_prctl if matches!(a[0], 0x1001 | 0x1004) => {
            fatal(next, "the program uses the gs segment register (arch_prctl ARCH_SET_GS/ARCH_GET_GS), which the native engine keeps for itself: count it with --engine emulate")
        }
        libc::SYS_mprotect | libc::SYS_pkey_mprotect => {
            let r = raw(nr, a);
            if r == 0 {
                let writable = a[2] & libc::PROT_WRITE as u64 != 0;
                range_changed(a[0], a[1], writable);
                if writable {
                    writable_view(a[0], a[1]);
                }
            }
            r
        }
        libc::SYS_munmap => {
            let r = unmap_but_the_kernels_pages(a[0], a[1]);
            if r == 0 {
                range_changed(a[0], a[1], true);
            }
            r
        }
        libc::SYS_mmap => {
            let r = raw(nr, a);
            if a[3] & libc::MAP_FIXED as u64 != 0 && !failed(r) {
                range_changed(a[0], a[1], true);
            }
            let shared_writable = a[3] & libc::MAP_SHARED as u64 != 0
                && a[2] & libc::PROT_WRITE as u64 != 0
                && a[4] as i32 >= 0;
            if shared_writable && !failed(r) {
                writable_view(r as u64, a[1]);
            }
            r
        }
        libc::SYS_mremap => {
            let r = raw(nr, a);
            if !failed(r) {
                // The old range may be gone or shrunk, the new one is new.
                range_changed(a[0], a[1], true);
                range_changed(r as u64, a[2], true);
            }
            r
        }
        _ => raw(nr, a),
    };
    ctx.rax = ret as u64;
    ctx.rcx = next;
    ctx.r11 = ctx.rflags;
    translator::lookup_or_translate(next)
}

/// A system call's result that is an error number.
fn failed(r: i64) -> bool {
    (-4095..0).contains(&r)
}

/// The program mapped, unmapped or protected `at..at+len` anew.
fn range_changed(at: u64, len: u64, writable: bool) {
    if let Some(t) = translator::lock().as_mut() {
        t.range_changed(at, at.saturating_add(len), writable);
    }
}

/// The program mapped a file shared and writable at `at..at+len`: it may
/// show code translated from another view of the file (written_code.rs).
fn writable_view(at: u64, len: u64) {
    if let Some(t) = translator::lock().as_mut() {
        t.writable_view(at, at.saturating_add(len));
    }
}

/// `clone` of a thread: the child starts in the cache at `next` with its
/// own bank, dispatcher stack and a copy of the caller's vector state.
fn new_thread(
    ctx: &mut Context,
    next: u64,
    a: [u64; 6],
    masked: Option<u64>,
) -> Result<i64, String> {
    let target = translator::lookup_or_translate(next)?;
    let Some(child) = thread::create(0) else {
        return Ok(-(libc::EAGAIN as i64));
    };
    let bank = child
        .bank(0)
        .ok_or_else(|| crate::sys::no_memory("no memory for a thread's counters"))?;
    let mut c = *ctx;
    c.rax = 0;
    c.rcx = next;
    c.r11 = ctx.rflags;
    let at = (child.dstack_top - std::mem::size_of::<Context>() as u64 - 64) & !15;
    // SAFETY: the child's dispatcher stack and header are fresh mappings of
    // its own; the xsave areas are xsave_bytes() each.
    unsafe {
        *(at as *mut Context) = c;
        std::ptr::copy_nonoverlapping(
            gs_word(header::XSAVE) as *const u8,
            child.xsave as *mut u8,
            thread::xsave_bytes(),
        );
        let w = bank as *mut u64;
        *w.add(header::RESUME_CTX as usize / 8) = at;
        match masked {
            // The child inherits the blocked mask: it starts by restoring the program's.
            Some(mask) => {
                *w.add(header::RESUME_TARGET as usize / 8) =
                    crate::signals::fs_unmask_and_go as *const () as u64;
                *w.add(header::NEXT as usize / 8) = target;
                *w.add(header::MASK as usize / 8) = mask;
            }
            None => *w.add(header::RESUME_TARGET as usize / 8) = target,
        }
        *w.add(header::APP_RSP as usize / 8) = a[1];
    }
    // SAFETY: clone with the program's arguments; the child never returns here.
    let r = unsafe { fs_clone(a[0], a[1], a[2], a[3], a[4], bank as u64) };
    if r < 0 {
        child.never_started();
    } else {
        child.started(r as u64);
        sampling::thread_started(child.index, r as u64);
    }
    Ok(r)
}

/// The program's `munmap`, leaving the kernel's pages mapped: the runtime's
/// C library calls into the vDSO (the clock), and Valgrind unmaps it as it
/// starts (its own code never calls it), after which the runtime's next
/// call faulted in the unmapped page. The rest of the range is unmapped;
/// the program is told all of it was.
fn unmap_but_the_kernels_pages(addr: u64, len: u64) -> i64 {
    let unmap = |lo: u64, hi: u64| {
        // SAFETY: the program's own `munmap`, on part of its range.
        unsafe { syscall6(libc::SYS_munmap as u64, [lo, hi - lo, 0, 0, 0, 0]) }
    };
    let end = addr.saturating_add(len).saturating_add(4095) & !4095;
    let kept: Vec<_> = crate::codemap::kernels_pages()
        .iter()
        .filter(|(lo, hi)| addr & 4095 == 0 && *lo < end && *hi > addr)
        .copied()
        .collect();
    if kept.is_empty() {
        // SAFETY: as above, as the program asked.
        return unsafe { syscall6(libc::SYS_munmap as u64, [addr, len, 0, 0, 0, 0]) };
    }
    let mut from = addr;
    let mut sorted = kept;
    sorted.sort_unstable();
    for (lo, hi) in sorted {
        if from < lo {
            let r = unmap(from, lo);
            if r != 0 {
                return r;
            }
        }
        from = from.max(hi);
    }
    if from < end {
        return unmap(from, end);
    }
    0
}
