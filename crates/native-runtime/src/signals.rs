//! Signals.
//!
//! - The program's handlers run in the cache, counted: `rt_sigaction`
//!   installs `fs_signal_entry` in the kernel and remembers the handler's
//!   translation. The entry saves the cache code's scratch words (a signal
//!   may land inside an instrumentation sequence), lowers the dispatcher
//!   stack below the interrupted code's stack pointer or the handler's,
//!   whichever is on it (a signal may land while the dispatcher starts,
//!   before it blocks signals; the handler then runs on an alternate stack
//!   if it asked for one, and its own dispatcher entries must not overwrite
//!   the registers the interrupted entry saved), and jumps to the handler's
//!   cache copy.
//!   The handler's `rt_sigreturn` restores the words. The program is told
//!   its own handler when it asks.
//! - Ordinary system calls run in the cache, so a signal interrupting one
//!   finds the program's own context. While the program has handlers the
//!   dispatcher runs with signals blocked (it holds the translator's lock)
//!   and leaves through `fs_unmask_and_go`, which restores the mask: pending
//!   signals land at its system call's return, and their handlers are
//!   shown the program's registers and the block the dispatcher was going
//!   to (`unmask_window`). It keeps the registers its system call takes in
//!   gs words, never below the program's stack pointer.
//! - Translation exits (a branch's first execution, an indirect-branch
//!   miss), nearly every entry of a program's start-up, run without the
//!   two system calls of blocking and unblocking (270 ns a pair here,
//!   some 4% of a compiler's counted run): a signal for the program's
//!   handlers that comes meanwhile is deferred ([`defer`]) and raised again
//!   as the dispatcher leaves ([`raise_deferred`]), where it lands as above.
//! - Fatal signals with the default action write the counts first (a
//!   crashed program gets a partial report), then take their default action.
//! - SIGSEGV enters `fs_segv_entry` whatever the program set: a write to a
//!   page the engine write-protected (written_code.rs) is handled there and
//!   never reaches the program (a SIGSEGV sent by `kill`, si_code <= 0, is
//!   never taken for one: its context holds the last fault's address);
//!   other faults go on to the program's handler or the fatal one
//!   ([`SEGV_NEXT`]). Its action always has SA_SIGINFO, for the kernel to
//!   write that si_code.

use crate::dispatch::{gs_word, set_gs_word};
use crate::header;
use crate::sys::{self, syscall6};
use crate::{out, translator};
use std::arch::global_asm;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

const NSIG: usize = 65;
/// The cache address of each signal's handler (read by fs_signal_entry).
static FS_SIGNAL_TARGETS: [AtomicU64; NSIG] = [const { AtomicU64::new(0) }; NSIG];
/// The handler the program installed, as it would read it back.
static APP_HANDLER: [AtomicU64; NSIG] = [const { AtomicU64::new(0) }; NSIG];
static HANDLERS: AtomicBool = AtomicBool::new(false);
/// Where `fs_segv_entry` sends a fault that is not the engine's: the
/// fatal handler, or `fs_signal_entry` (the program's handler).
static SEGV_NEXT: AtomicU64 = AtomicU64::new(0);
/// The program's SIGSEGV handler was installed with SA_RESETHAND (which the
/// engine emulates: the engine's entry must stay installed).
static SEGV_RESETHAND: AtomicBool = AtomicBool::new(false);
pub const SA_RESETHAND: u64 = 0x8000_0000;
const SA_NODEFER: u64 = 0x4000_0000;
/// What the engine changed in the action the program set for each signal
/// ([`keep_segv_deliverable`]), so that it reads back as set.
static CHANGED: [AtomicU8; NSIG] = [const { AtomicU8::new(0) }; NSIG];
/// SIGSEGV taken out of the handler's mask.
const UNMASKED_SEGV: u8 = 1;
/// SA_NODEFER added to SIGSEGV's own action.
const ADDED_NODEFER: u8 = 2;
/// SA_SIGINFO added to SIGSEGV's own action.
const ADDED_SIGINFO: u8 = 4;
/// How far below the fault it was entered for a fault in the program's
/// SIGSEGV handler may be to count as nested in it ([`segv_next`]).
const NESTED_FAULT_SPAN: u64 = 64 << 10;

/// Faults: the engine's own code must still get them, so they are never
/// blocked in the dispatcher nor deferred.
const FAULTS: [i32; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE];

const FATAL: [i32; 10] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGXCPU,
];
/// Words saved per signal (96-byte entries): SAVE_RAX..REP_RCX, APP_RSP,
/// DSTACK, XSAVE, IBL_TARGET, NEXT, MASK.
const SAVED: [i32; 11] = [
    0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x38, 0x40, 0x50, 0x70, 0x80,
];
const ENTRY: u64 = 96;

extern "C" {
    fn fs_signal_entry();
    fn fs_segv_entry();
    /// `rt_sigreturn`: the restorer of the runtime's own handlers.
    pub fn fs_restore_rt();
    /// Sets the signal mask to gs:[MASK], then jumps to gs:[NEXT], with
    /// every register of the program intact: pending signals are delivered
    /// here, outside the dispatcher, and their handlers run in the cache.
    pub fn fs_unmask_and_go();
    /// Where `fs_unmask_and_go` gives the program's registers back, after
    /// its system call; to `fs_unmask_end`, past its jump to gs:[NEXT].
    fn fs_unmask_return();
    fn fs_unmask_end();
}

global_asm!(
    r#"
    .text
    .globl fs_segv_entry
    .type fs_segv_entry,@function
fs_segv_entry:
    push rdi
    push rsi
    push rdx
    cmp dword ptr [rsi + 8], 0
    jle 2f
    mov rdi, rdx
    call {write_fault}
    test rax, rax
    jnz 1f
2:
    mov rdi, [rsp]
    call {segv_next}
    pop rdx
    pop rsi
    pop rdi
    jmp rax
1:
    add rsp, 24
    ret
"#,
    write_fault = sym crate::hostfs::code_write_fault,
    segv_next = sym segv_next,
);

/// Where a SIGSEGV that is not the engine's goes (`fs_segv_entry`, `uc`
/// its context), with SA_RESETHAND applied.
///
/// The program's handler runs with SIGSEGV deliverable even where the
/// program asked for it blocked ([`keep_segv_deliverable`]). Natively a
/// fault inside such a handler kills the process; here it would enter the
/// handler again, and again, until the stack overflowed and the kernel
/// killed the process with no counts written. So a fault at the same
/// instruction as the one the handler was entered for, on the same stack
/// just below it (the handler's own frame lies there), while that handler
/// has not returned, is taken as natively: the fatal handler writes the
/// counts, and the process dies of SIGSEGV. (The handler has then run
/// once more than natively, up to its fault.)
extern "C" fn segv_next(uc: u64) -> u64 {
    let next = SEGV_NEXT.load(Ordering::Acquire);
    if next == fs_signal_entry as *const () as u64
        && CHANGED[libc::SIGSEGV as usize].load(Ordering::Acquire) & ADDED_NODEFER != 0
    {
        // SAFETY: the kernel's context of this fault.
        let (pc, rsp) = unsafe { (*pc_word(uc), *((uc as usize + UC_RSP) as *const u64)) };
        let (last_pc, last_rsp) = (gs_word(header::SEGV_PC), gs_word(header::SEGV_RSP));
        if pc == last_pc && rsp < last_rsp && last_rsp - rsp < NESTED_FAULT_SPAN {
            set_gs_word(header::SEGV_PC, 0);
            return fatal_handler as *const () as u64;
        }
        set_gs_word(header::SEGV_PC, pc);
        set_gs_word(header::SEGV_RSP, rsp);
    }
    if SEGV_RESETHAND.swap(false, Ordering::AcqRel) {
        SEGV_NEXT.store(fatal_handler as *const () as u64, Ordering::Release);
        APP_HANDLER[libc::SIGSEGV as usize].store(0, Ordering::Release);
    }
    next
}

global_asm!(
    r#"
    .text
    .globl fs_signal_entry
    .type fs_signal_entry,@function
fs_signal_entry:
    cmp qword ptr gs:[{defer_flag}], 0
    je 8f
    cmp edi, {sigsegv}
    je 8f
    cmp edi, {sigbus}
    je 8f
    cmp edi, {sigill}
    je 8f
    cmp edi, {sigfpe}
    je 8f
    jmp {defer}
8:
    mov rax, gs:[0x68]
    mov rcx, rax
    and ecx, 4095
    cmp ecx, 4000
    jb 1f
    and rax, -4096
1:
    mov rcx, gs:[0x08]
    mov [rax], rcx
    mov rcx, gs:[0x10]
    mov [rax+8], rcx
    mov rcx, gs:[0x18]
    mov [rax+16], rcx
    mov rcx, gs:[0x20]
    mov [rax+24], rcx
    mov rcx, gs:[0x28]
    mov [rax+32], rcx
    mov rcx, gs:[0x30]
    mov [rax+40], rcx
    mov rcx, gs:[0x38]
    mov [rax+48], rcx
    mov rcx, gs:[0x40]
    mov [rax+56], rcx
    mov rcx, gs:[0x50]
    mov [rax+64], rcx
    mov rcx, gs:[0x70]
    mov [rax+72], rcx
    mov rcx, gs:[0x80]
    mov [rax+80], rcx
    add rax, 96
    mov gs:[0x68], rax
    mov rcx, gs:[0x40]
    cmp rcx, gs:[0x88]
    jae 3f
    add rcx, gs:[0xf8]
    mov gs:[0x40], rcx
3:
    mov rcx, gs:[0x38]
    lea r8, [rcx - 0x100000]
    mov rax, rsp
    cmp rax, rcx
    ja 4f
    cmp rax, r8
    jae 5f
4:
    mov rax, [rdx + {uc_rsp}]
    cmp rax, rcx
    ja 2f
    cmp rax, r8
    jb 2f
5:
    lea rax, [rax - 1024]
    and rax, -16
    mov gs:[0x38], rax
2:
    push rdi
    push rsi
    push rdx
    mov rdi, rdx
    # rsi: the siginfo, show_program_pc's second argument.
    call {show_program_pc}
    pop rdx
    pop rsi
    pop rdi
    lea rax, [rip + {targets}]
    mov rax, [rax + rdi*8]
    jmp rax

    .globl fs_restore_rt
    .type fs_restore_rt,@function
fs_restore_rt:
    mov eax, 15
    syscall
    ud2

    .globl fs_unmask_and_go
    .type fs_unmask_and_go,@function
fs_unmask_and_go:
    mov gs:[0xa0], rax
    mov gs:[0xa8], rcx
    mov gs:[0xb0], rdx
    mov gs:[0xb8], rsi
    mov gs:[0xc0], rdi
    mov gs:[0xc8], r10
    mov gs:[0xd0], r11
    mov eax, 14
    mov edi, 2
    mov rsi, gs:[0x78]
    lea rsi, [rsi + 0x80]
    mov edx, 0
    mov r10d, 8
    syscall
    .globl fs_unmask_return
fs_unmask_return:
    mov rax, gs:[0xa0]
    mov rcx, gs:[0xa8]
    mov rdx, gs:[0xb0]
    mov rsi, gs:[0xb8]
    mov rdi, gs:[0xc0]
    mov r10, gs:[0xc8]
    mov r11, gs:[0xd0]
    jmp qword ptr gs:[0x70]
    .globl fs_unmask_end
fs_unmask_end:
"#,
    targets = sym FS_SIGNAL_TARGETS,
    show_program_pc = sym show_program_pc,
    uc_rsp = const UC_RSP,
    defer_flag = const header::DEFER,
    defer = sym defer,
    sigsegv = const FAULTS[0],
    sigbus = const FAULTS[1],
    sigill = const FAULTS[2],
    sigfpe = const FAULTS[3],
);

/// A signal for one of the program's handlers, or for the engine's fatal
/// handler, while the dispatcher serves a translation exit (gs:[DEFER]
/// set: it may hold the translator's lock, which the handler's code, or
/// writing the counts, would wait for): entered by `fs_signal_entry` (or
/// `fatal_handler`) in its place, it keeps the siginfo in the thread's
/// header and returns to the kernel with the signal added to the
/// interrupted context's mask, so that it stays blocked;
/// [`raise_deferred`] raises it again. Faults (SIGSEGV, SIGBUS, SIGILL,
/// SIGFPE) are never deferred. No lock, no allocation.
extern "C" fn defer(sig: i32, info: *const libc::siginfo_t, uc: *mut libc::ucontext_t) {
    let bit = 1u64 << (sig - 1);
    // SAFETY: the kernel's context of this signal; its mask's first word
    // holds signals 1 to 64.
    let mask = unsafe { std::ptr::addr_of_mut!((*uc).uc_sigmask) as *mut u64 };
    let deferred = gs_word(header::DEFERRED);
    if deferred == 0 {
        // SAFETY: as above.
        set_gs_word(header::DEFER_MASK, unsafe { *mask });
    }
    let n = gs_word(header::DEFER_COUNT) as usize;
    if n < header::DEFER_SLOTS {
        let at = gs_word(header::BANK_SELF) + header::DEFER_INFO as u64 + 128 * n as u64;
        // SAFETY: a slot of this thread's header; the kernel's siginfo.
        unsafe { std::ptr::copy_nonoverlapping(info as *const u8, at as *mut u8, 128) };
        set_gs_word(header::DEFER_COUNT, n as u64 + 1);
    }
    set_gs_word(header::DEFERRED, deferred | bit);
    // SAFETY: as above.
    unsafe { *mask |= bit };
    crate::stats::add_deferred();
}

/// As a translation exit leaves the dispatcher (gs:[DEFER] just cleared),
/// to `target`: raises again the signals [`defer`] kept, each with its
/// siginfo (`rt_tgsigqueueinfo` to this thread), and returns where the
/// dispatcher goes on: `target` when none was kept, else
/// `fs_unmask_and_go`, which restores the mask they came under, so that
/// they land at its system call's return, outside the dispatcher.
/// Signals are blocked while the kept ones are read and cleared: a handler
/// run just before (gs:[DEFER] clear) may have raised them already, from a
/// dispatcher exit of its own.
pub fn raise_deferred(target: u64) -> u64 {
    if gs_word(header::DEFERRED) == 0 {
        return target;
    }
    // Restored by `fs_unmask_and_go`.
    let old = block_all_but_faults();
    let deferred = gs_word(header::DEFERRED);
    let mut restore = old;
    if deferred != 0 {
        restore = gs_word(header::DEFER_MASK);
        let n = (gs_word(header::DEFER_COUNT) as usize).min(header::DEFER_SLOTS);
        let slots = gs_word(header::BANK_SELF) + header::DEFER_INFO as u64;
        let (pid, tid) = (sys::getpid(), sys::gettid());
        let mut raised = 0u64;
        for k in 0..n {
            let info = slots + 128 * k as u64;
            // SAFETY: a siginfo `defer` copied (si_signo first).
            let sig = unsafe { *(info as *const i32) };
            // SAFETY: queues the signal to this thread, as it came.
            let queued = unsafe {
                syscall6(
                    libc::SYS_rt_tgsigqueueinfo as u64,
                    [pid, tid, sig as u64, info, 0, 0],
                )
            };
            // Else (the queue limit, RLIMIT_SIGPENDING) sent without it below.
            if queued >= 0 {
                raised |= 1 << (sig - 1);
            }
        }
        // Beyond the slots (never seen), or not queued: the signal without
        // its siginfo.
        for sig in 1..=64u64 {
            if (deferred & !raised) >> (sig - 1) & 1 == 1 {
                // SAFETY: sends the signal to this thread.
                unsafe { syscall6(libc::SYS_tgkill as u64, [pid, tid, sig, 0, 0, 0]) };
            }
        }
        set_gs_word(header::DEFERRED, 0);
        set_gs_word(header::DEFER_COUNT, 0);
    }
    set_gs_word(header::MASK, restore);
    set_gs_word(header::NEXT, target);
    fs_unmask_and_go as *const () as u64
}

/// Where the interrupted stack pointer is in a `ucontext_t`.
const UC_RSP: usize =
    std::mem::offset_of!(libc::ucontext_t, uc_mcontext) + 8 * libc::REG_RSP as usize;

/// Where in a save entry the cache address a handler's context held is
/// kept (the word after the [`SAVED`] ones), 0 when it was left as it was.
const CACHE_PC: u64 = 8 * SAVED.len() as u64;
const _: () = assert!(CACHE_PC + 8 <= ENTRY);

/// The program counter's word in the `ucontext_t` at `uc`.
fn pc_word(uc: u64) -> *mut u64 {
    // SAFETY: only the field's address is taken.
    unsafe {
        std::ptr::addr_of_mut!(
            (*(uc as *mut libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize]
        ) as *mut u64
    }
}

/// Called by `fs_signal_entry` (the entry just saved) before the program's
/// handler runs: a context interrupted at the copy of a program
/// instruction shows that instruction's address, as it would natively
/// (the JVM, for one, recognizes its own faulting instructions by their
/// address and resumes elsewhere); the cache address is kept in the save
/// entry for [`back_to_cache`]. Elsewhere (in added code, in the runtime)
/// the context is left as it is. No lock, no allocation, no TLS: any
/// thread, any moment.
extern "C" fn show_program_pc(uc: u64, info: u64) {
    let entry = gs_word(header::SIGSAVE) - ENTRY;
    let pc = pc_word(uc);
    unmask_window(uc);
    // SAFETY: the kernel's context, and the save entry just written.
    unsafe {
        let cache = *pc;
        let shown = crate::cachemap::lookup_exact(cache);
        *((entry + CACHE_PC) as *mut u64) = if shown.is_some() { cache } else { 0 };
        if let Some(p) = shown {
            *pc = p;
            show_program_fault_address(info, cache, p);
        }
    }
}

/// A SIGFPE's or SIGILL's `si_addr` is the address of the instruction that
/// faulted (the kernel writes the interrupted program counter there): it
/// is shown as the program's, as the context's program counter is (it was
/// the copy's, in the code cache). `info`: the kernel's siginfo in the
/// signal frame (rsi at the handler's entry; written by the kernel when
/// the action has SA_SIGINFO, the only way a handler reads it).
///
/// # Safety
/// `info` is the signal frame's siginfo.
unsafe fn show_program_fault_address(info: u64, cache: u64, program: u64) {
    let si = info as *const libc::siginfo_t;
    // SAFETY: the frame's siginfo (see above).
    let (signo, code) = unsafe { ((*si).si_signo, (*si).si_code) };
    if matches!(signo, libc::SIGFPE | libc::SIGILL) && code > 0 {
        // SAFETY: si_addr of the fault's union member (offset 16 on x86-64).
        let addr = unsafe { &mut *((info + 16) as *mut u64) };
        if *addr == cache {
            *addr = program;
        }
    }
}

/// The registers `fs_unmask_and_go` keeps in gs words, in their order there.
const UNMASK_REGS: [libc::c_int; 7] = [
    libc::REG_RAX,
    libc::REG_RCX,
    libc::REG_RDX,
    libc::REG_RSI,
    libc::REG_RDI,
    libc::REG_R10,
    libc::REG_R11,
];

/// A signal delivered when `fs_unmask_and_go` restored the mask (a pending
/// one lands at its system call's return), or while it gives the
/// registers back, finds some of them still its own: the context is made
/// the program's at the block it was going to (gs:[NEXT]), all registers
/// the program's, as if the signal had come there. The handler sees and
/// may change the program's state, and returning goes straight to the
/// block; a nested handler may reuse the gs words meanwhile.
/// Where a sample that landed at `rip` in `fs_unmask_and_go`'s window
/// stands in the program, if the mask that held it back was the program's
/// (its `rt_sigprocmask`; else the dispatcher held it back, and the time
/// was the engine's): the block the dispatcher was going to.
pub fn sample_in_unmask_window(rip: u64) -> Option<u64> {
    in_unmask_window(rip).filter(|_| gs_word(header::UNMASK_FOR_PROGRAM) != 0)
}

/// Where a signal that landed at `rip` in `fs_unmask_and_go`'s window
/// stands in the program: the block the dispatcher was going to (gs:[NEXT]).
fn in_unmask_window(rip: u64) -> Option<u64> {
    let from = fs_unmask_return as *const () as u64;
    let to = fs_unmask_end as *const () as u64;
    (from..to).contains(&rip).then(|| gs_word(header::NEXT))
}

fn unmask_window(uc: u64) {
    // SAFETY: the kernel's context of this signal.
    let gregs = unsafe { &mut (*(uc as *mut libc::ucontext_t)).uc_mcontext.gregs };
    let rip = gregs[libc::REG_RIP as usize] as u64;
    let Some(next) = in_unmask_window(rip) else {
        return;
    };
    for (k, r) in UNMASK_REGS.iter().enumerate() {
        gregs[*r as usize] = gs_word(header::UNMASK_SAVE + 8 * k as i32) as i64;
    }
    gregs[libc::REG_RIP as usize] = next as i64;
}

/// Before the program's `rt_sigreturn` (before [`before_sigreturn`]), with
/// `uc` its context: a context [`show_program_pc`] changed goes back to
/// the cache address it stood for, or, if the handler moved the program
/// counter, to the translation of the program address it chose; so does
/// one whose block was invalidated meanwhile (the handler, or another
/// thread, rewrote the code: natively the new bytes run). The interrupted
/// block, left half-way then, counts exactly the instructions that ran
/// (settle.rs).
pub fn back_to_cache(uc: u64) -> Result<(), String> {
    let p = gs_word(header::SIGSAVE);
    if p & 4095 < ENTRY {
        return Ok(());
    }
    // SAFETY: the entry `fs_signal_entry` saved for this handler.
    let cache = unsafe { *((p - ENTRY + CACHE_PC) as *const u64) };
    let Some(at) = (cache != 0)
        .then(|| crate::cachemap::at_mark(cache))
        .flatten()
    else {
        return Ok(());
    };
    let pc = pc_word(uc);
    // SAFETY: the context of the frame the handler returns through.
    let now = unsafe { *pc };
    let target = if at.pc == now && translator::still_current(at.orig, at.cache) {
        cache
    } else {
        crate::codemap::or_native_fault(translator::resume_elsewhere(&at, now), Some(now))?
    };
    // SAFETY: as above.
    unsafe { *pc = target };
    Ok(())
}

/// Restores the words the entry saved (the handler is returning).
pub fn before_sigreturn() {
    // A SIGSEGV handler that returns has dealt with its fault ([`segv_next`]).
    set_gs_word(header::SEGV_PC, 0);
    let p = gs_word(header::SIGSAVE);
    if p & 4095 < ENTRY {
        return;
    }
    let p = p - ENTRY;
    for (i, off) in SAVED.iter().enumerate() {
        // SAFETY: the entry wrote these words at p.
        let w = unsafe { *((p + 8 * i as u64) as *const u64) };
        set_gs_word(*off, w);
    }
    set_gs_word(header::SIGSAVE, p);
}

/// Blocks signals while the dispatcher runs, if the program has handlers.
pub fn block_in_dispatcher() -> Option<u64> {
    if !HANDLERS.load(Ordering::Relaxed) {
        return None;
    }
    Some(block_all_but_faults())
}

/// Blocks every signal but the [`FAULTS`] (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// which the engine's own code must still get); returns the mask before.
pub fn block_all_but_faults() -> u64 {
    let all: u64 = !FAULTS.iter().fold(0u64, |m, s| m | 1 << (s - 1));
    sys::sigmask(libc::SIG_BLOCK, all)
}

/// Blocks again after `unblock` (around a call the program's mask must see).
pub fn block_again(old: Option<u64>) {
    if old.is_some() {
        let _ = block_in_dispatcher();
    }
}

pub fn unblock(old: Option<u64>) {
    if let Some(old) = old {
        sys::sigmask(libc::SIG_SETMASK, old);
    }
}

/// The program's `rt_sigprocmask`. SIGSEGV is left out of every mask the
/// program sets ([`keep_segv_deliverable`] says why), so the mask it reads
/// back never holds it. `masked`: the program's mask while the dispatcher
/// blocks signals, which the dispatcher restores as it leaves: the call
/// then changes that, as the kernel would (SIGKILL and SIGSTOP stay
/// unblocked); else the kernel performs it.
pub fn sigprocmask(a: [u64; 6], masked: &mut Option<u64>) -> i64 {
    let (how, set, oldset, size) = (a[0], a[1], a[2], a[3]);
    if size != 8 {
        // SAFETY: the kernel rejects it.
        return unsafe { syscall6(libc::SYS_rt_sigprocmask as u64, a) };
    }
    let mut wanted = 0u64;
    if set != 0 {
        let mut b = [0u8; 8];
        if sys::read_self(set, &mut b) != 8 {
            return -(libc::EFAULT as i64);
        }
        wanted = u64::from_le_bytes(b) & !segv_bit();
    }
    let Some(mask) = masked else {
        let set = if set != 0 {
            &wanted as *const u64 as u64
        } else {
            0
        };
        // SAFETY: the program's call, its set without SIGSEGV.
        return unsafe { syscall6(libc::SYS_rt_sigprocmask as u64, [how, set, oldset, 8, 0, 0]) };
    };
    let old = *mask;
    set_gs_word(header::UNMASK_FOR_PROGRAM, 1);
    if set != 0 {
        const UNBLOCKABLE: u64 = 1 << (libc::SIGKILL - 1) | 1 << (libc::SIGSTOP - 1);
        *mask = match how as i32 {
            libc::SIG_BLOCK => old | wanted,
            libc::SIG_UNBLOCK => old & !wanted,
            libc::SIG_SETMASK => wanted,
            _ => return -(libc::EINVAL as i64),
        } & !UNBLOCKABLE;
    }
    if oldset != 0 && sys::write_self(oldset, &old.to_le_bytes()) != 8 {
        return -(libc::EFAULT as i64);
    }
    0
}

/// The mask a returning handler's frame restores, without SIGSEGV (the
/// handler may have added it to the frame's `uc_sigmask`).
pub fn keep_segv_unblocked_after(uc: u64) {
    // SAFETY: the frame's ucontext, at the program's rsp; the mask's first
    // word holds signals 1 to 64.
    unsafe {
        let mask = std::ptr::addr_of_mut!((*(uc as *mut libc::ucontext_t)).uc_sigmask) as *mut u64;
        *mask &= !segv_bit();
    }
}

/// At the take-over: a mask inherited across `exec` may block SIGSEGV.
pub fn unblock_segv() {
    sys::sigmask(libc::SIG_UNBLOCK, segv_bit());
}

/// `struct sigaction` as the kernel takes it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct KernelSigaction {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

pub const SA_SIGINFO: u64 = 4;
/// The kernel's SA_RESTORER (not in the libc crate's public flags).
pub const SA_RESTORER: u64 = 0x0400_0000;
const SA_ONSTACK: u64 = 0x0800_0000;

fn ours(h: u64) -> bool {
    h == fs_signal_entry as *const () as u64
        || h == fs_segv_entry as *const () as u64
        || h == fatal_handler as *const () as u64
        || h == crate::sampling::handler_address()
        || h == crate::sampling::shared_entry()
}

/// The disposition the program set for `sig` (0 SIG_DFL, 1 SIG_IGN, or its
/// handler), as it reads it back.
pub fn app_handler(sig: usize) -> u64 {
    APP_HANDLER
        .get(sig)
        .map_or(0, |h| h.load(Ordering::Acquire))
}

/// Records a disposition the program has without having set it through
/// `rt_sigaction` (SIG_IGN inherited across exec).
pub fn set_app_handler(sig: usize, h: u64) {
    if let Some(a) = APP_HANDLER.get(sig) {
        a.store(h, Ordering::Release);
    }
}

/// The program's `rt_sigaction(sig, act, oact, size)`.
pub fn sigaction(a: [u64; 6]) -> i64 {
    let (sig, act, oact, size) = (a[0] as usize, a[1], a[2], a[3]);
    if sig == 0 || sig >= NSIG {
        // SAFETY: the kernel rejects it.
        return unsafe { syscall6(libc::SYS_rt_sigaction as u64, a) };
    }
    let old_app = APP_HANDLER[sig].load(Ordering::Acquire);
    let old_changed = CHANGED[sig].load(Ordering::Acquire);
    if sig == libc::SIGPROF as usize && act != 0 && crate::sampling::owns_sigprof() {
        // SAFETY: the program passed a struct sigaction.
        let h = unsafe { (*(act as *const KernelSigaction)).handler };
        if h <= 1 {
            // SIG_DFL or SIG_IGN: the sampling handler stays; SIGPROFs not
            // its timers' follow the program's choice (sampling.rs).
            if oact != 0 {
                let mut old = crate::sampling::current_action();
                as_the_program_set_it(&mut old, old_app, old_changed);
                // SAFETY: the program passed room for the old action.
                unsafe { *(oact as *mut KernelSigaction) = old };
            }
            APP_HANDLER[sig].store(h, Ordering::Release);
            CHANGED[sig].store(0, Ordering::Release);
            crate::sampling::unshare();
            return 0;
        }
    }
    let mut mine = KernelSigaction::default();
    let mut new_handler = None;
    if act != 0 {
        // SAFETY: the program passed a struct sigaction.
        mine = unsafe { *(act as *const KernelSigaction) };
        let h = mine.handler;
        if h > 1 {
            let target = match translator::lookup_or_translate(h) {
                Ok(t) => t,
                Err(_) => return -(libc::EINVAL as i64),
            };
            FS_SIGNAL_TARGETS[sig].store(target, Ordering::Release);
            mine.handler = fs_signal_entry as *const () as u64;
            HANDLERS.store(true, Ordering::Release);
            if sig == libc::SIGPROF as usize && crate::sampling::owns_sigprof() {
                // The timers' signals stay samples (sampling.rs).
                crate::sampling::share_with(&mut mine);
            }
        } else if h == 0 && FATAL.contains(&(sig as i32)) {
            mine = fatal_action();
        }
        new_handler = Some(h);
    }
    if sig == libc::SIGSEGV as usize && act != 0 {
        route_segv(&mut mine);
    }
    let changed = if act != 0 {
        keep_segv_deliverable(sig, &mut mine)
    } else {
        old_changed
    };
    let act_arg = if act != 0 {
        &mine as *const _ as u64
    } else {
        0
    };
    // SAFETY: the program's call with its handler replaced by the engine's.
    let r = unsafe {
        syscall6(
            libc::SYS_rt_sigaction as u64,
            [sig as u64, act_arg, oact, size, 0, 0],
        )
    };
    if r == 0 {
        if oact != 0 {
            // SAFETY: the kernel just wrote it.
            as_the_program_set_it(
                unsafe { &mut *(oact as *mut KernelSigaction) },
                old_app,
                old_changed,
            );
        }
        CHANGED[sig].store(changed, Ordering::Release);
        if let Some(h) = new_handler {
            APP_HANDLER[sig].store(h, Ordering::Release);
        }
    }
    r
}

/// `o`, an action the kernel holds, as the program set it (`old_app` its
/// handler, `changed` what [`keep_segv_deliverable`] changed in it): the
/// runtime's sampling handler alone stands for none set; the entry sharing
/// SIGPROF (sampling.rs) and the runtime's other entries for the program's
/// handler, with the program's flags and mask.
fn as_the_program_set_it(o: &mut KernelSigaction, old_app: u64, changed: u8) {
    if changed & UNMASKED_SEGV != 0 {
        o.mask |= segv_bit();
    }
    if changed & ADDED_NODEFER != 0 {
        o.flags &= !SA_NODEFER;
    }
    if changed & ADDED_SIGINFO != 0 {
        o.flags &= !SA_SIGINFO;
    }
    if o.handler == crate::sampling::handler_address() {
        *o = KernelSigaction {
            handler: old_app,
            ..Default::default()
        };
    } else if ours(o.handler) {
        if o.handler == crate::sampling::shared_entry() {
            crate::sampling::as_program_set(o);
        }
        o.handler = old_app;
    }
}

/// The SIGSEGV action the kernel gets: the engine's entry, then the
/// program's handler, or the fatal one where the program set none or
/// ignores SIGSEGV (a fault is not ignored: the kernel ends the process).
fn route_segv(action: &mut KernelSigaction) {
    let next = if action.handler == fs_signal_entry as *const () as u64 {
        fs_signal_entry as *const () as u64
    } else {
        *action = fatal_action();
        fatal_handler as *const () as u64
    };
    SEGV_RESETHAND.store(action.flags & SA_RESETHAND != 0, Ordering::Release);
    action.flags &= !SA_RESETHAND;
    SEGV_NEXT.store(next, Ordering::Release);
    action.handler = fs_segv_entry as *const () as u64;
}

fn segv_bit() -> u64 {
    1 << (libc::SIGSEGV - 1)
}

/// SIGSEGV is never blocked by a handler's action, the program's or the
/// engine's (and SIGSEGV's own action has SA_SIGINFO, see below): a write
/// into a page of code the engine write-protected faults, and a fault the
/// kernel finds blocked kills the process. A handler that
/// writes code (QEMU's SIGSEGV handler invalidates its translations,
/// which rewrites the jumps between them) must still get its writes
/// through. Returns what was changed, for the action to read back as set.
fn keep_segv_deliverable(sig: usize, action: &mut KernelSigaction) -> u8 {
    let mut changed = 0;
    if action.mask & segv_bit() != 0 {
        action.mask &= !segv_bit();
        changed |= UNMASKED_SEGV;
    }
    if sig == libc::SIGSEGV as usize && action.flags & SA_NODEFER == 0 {
        action.flags |= SA_NODEFER;
        changed |= ADDED_NODEFER;
    }
    // `fs_segv_entry` reads the si_code, which the kernel writes only with
    // SA_SIGINFO; a handler without it gets the same registers on x86-64.
    if sig == libc::SIGSEGV as usize && action.flags & SA_SIGINFO == 0 {
        action.flags |= SA_SIGINFO;
        changed |= ADDED_SIGINFO;
    }
    changed
}

fn fatal_action() -> KernelSigaction {
    KernelSigaction {
        handler: fatal_handler as *const () as u64,
        flags: SA_SIGINFO | SA_RESTORER | SA_ONSTACK,
        restorer: fs_restore_rt as *const () as u64,
        mask: 0,
    }
}

/// Installs the fatal-signal handlers (at take-over).
pub fn install_fatal() {
    for sig in FATAL {
        let mut old = KernelSigaction::default();
        // SAFETY: reads the current action.
        unsafe {
            syscall6(
                libc::SYS_rt_sigaction as u64,
                [sig as u64, 0, &mut old as *mut _ as u64, 8, 0, 0],
            )
        };
        if sig == libc::SIGSEGV {
            // Set as the program set it (a constructor may have), through
            // the engine: the entry first, a handler run in the cache.
            sigaction([sig as u64, &old as *const _ as u64, 0, 8, 0, 0]);
            continue;
        }
        if old.handler != 0 {
            continue; // ignored or handled already: leave it
        }
        let act = fatal_action();
        // SAFETY: installs the engine's handler for a default-action signal.
        unsafe {
            syscall6(
                libc::SYS_rt_sigaction as u64,
                [sig as u64, &act as *const _ as u64, 0, 8, 0, 0],
            )
        };
    }
}

extern "C" fn fatal_handler(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // A fault comes again when the handler returns; the same signal sent
    // by `kill` or `raise` (si_code <= 0: SI_USER, SI_TKILL, SI_QUEUE) does
    // not, and is raised again below (QEMU's user mode ends that way, then
    // waits in `sigsuspend`: it waited for good).
    // SAFETY: the kernel's siginfo of this signal.
    let synchronous = FAULTS.contains(&sig) && unsafe { (*info).si_code } > 0;
    if !synchronous && gs_word(header::DEFER) != 0 {
        // In a translation exit, which may hold the translator's lock that
        // writing the counts takes: after it, as the program's handlers.
        defer(sig, info, uc.cast());
        return;
    }
    crate::hostfs::use_host_fs();
    static ONCE: AtomicBool = AtomicBool::new(false);
    if !ONCE.swap(true, Ordering::AcqRel) {
        out::note_end(flopscope_counter_file::layout::ProcessEnd::Signal(sig));
        out::flush(false);
        crate::sampling::finish(false);
    }
    let dfl = KernelSigaction::default();
    // SAFETY: back to the default action, then the signal again: the process
    // ends as it would have without the engine.
    unsafe {
        syscall6(
            libc::SYS_rt_sigaction as u64,
            [sig as u64, &dfl as *const _ as u64, 0, 8, 0, 0],
        );
        if !synchronous {
            syscall6(
                libc::SYS_tgkill as u64,
                [sys::getpid(), sys::gettid(), sig as u64, 0, 0, 0],
            );
        }
    }
}
