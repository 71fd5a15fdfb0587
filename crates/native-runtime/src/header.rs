//! What `gs` points at: each thread's current bank of counters, headed by
//! the words the code cache and the dispatcher use. A thread has one bank
//! per region state; the dispatcher moves `gs` when a marker changes state,
//! copying the header words that stay.
//!
//! ```text
//! gs:[0x00]            the thread (its `Thread`)
//! gs:[0x08..0x30]      scratch words of cache code (saved rax, rcx, flags, jump target, rcx before a REP)
//! gs:[0x30..0x90]      app rsp at dispatcher entry, dispatcher stack, xsave area, IBL table, resume words, signal words
//! gs:[0x90..0xa0]      a static program's fs while in the runtime, and the host's (hostfs.rs)
//! gs:[0xa0..0xd8]      the program's registers while `fs_unmask_and_go` makes its system call
//! gs:[0xd8..0x900]     signals deferred while the dispatcher translates (signals.rs, `defer`)
//! gs:[0x900..0x910]    where the program's SIGSEGV handler was last entered for a fault
//! gs:[0x910]           the dispatcher leaves with a mask the program set
//! gs:[0x918..0x928]    a system call run again after EFAULT (kernel_writes.rs)
//! gs:[COUNTERS + 8*s]  counter slot s (block executions, active lanes, REP iterations)
//! ```

pub const THREAD: i32 = 0x00;
pub const SAVE_RAX: i32 = 0x08;
pub const SAVE_RCX: i32 = 0x10;
pub const SAVE_FLAGS: i32 = 0x18;
pub const JUMP: i32 = 0x20;
pub const REP_RCX: i32 = 0x28;
/// A system call's number, kept across the call for its EFAULT check
/// (kernel_writes.rs): the REP word, which no instruction between the two
/// uses, and which a signal entry saves and restores as the other scratch
/// words.
pub const SYSCALL_NR: i32 = REP_RCX;
pub const APP_RSP: i32 = 0x30;
pub const DSTACK: i32 = 0x38;
pub const XSAVE: i32 = 0x40;
pub const IBL_TABLE: i32 = 0x48;
pub const IBL_TARGET: i32 = 0x50;
pub const RESUME_CTX: i32 = 0x58;
pub const RESUME_TARGET: i32 = 0x60;
/// Where a signal handler's entry saves the scratch words (a small stack).
pub const SIGSAVE: i32 = 0x68;
/// Where `fs_unmask_and_go` continues after restoring the signal mask.
pub const NEXT: i32 = 0x70;
/// The bank's own address (not copied between banks).
pub const BANK_SELF: i32 = 0x78;
/// The program's signal mask, for `fs_unmask_and_go` to restore.
pub const MASK: i32 = 0x80;
/// The end of the thread's xsave areas (signal entries move XSAVE down the
/// areas, one per nesting level, up to this).
pub const XSAVE_LIMIT: i32 = 0x88;
/// The program's `fs` base while the thread runs the runtime (statically
/// linked programs only; see hostfs.rs). Copied between banks.
pub const APP_FS: i32 = 0x90;
/// The host thread block the runtime uses on this thread as `fs`; 0 for a
/// dynamically linked program (no switch).
pub const HOST_FS: i32 = 0x98;
/// Where `fs_unmask_and_go` keeps the program's rax, rcx, rdx, rsi, rdi,
/// r10 and r11 (in that order, a word each) around its system call, which
/// takes them: not below the program's stack pointer, where its stack may
/// end (a Go goroutine's starts at 2 KB, with a small margin).
pub const UNMASK_SAVE: i32 = 0xa0;
/// Nonzero while the dispatcher serves a translation exit with the
/// program's signal mask in force: a signal for one of the program's
/// handlers, or for the engine's fatal handler, then waits until it leaves
/// (signals.rs, `defer`).
pub const DEFER: i32 = 0xd8;
/// The signals deferred meanwhile (bit `sig - 1`).
pub const DEFERRED: i32 = 0xe0;
/// The thread's signal mask when the first of them came.
pub const DEFER_MASK: i32 = 0xe8;
/// How many siginfo slots are filled.
pub const DEFER_COUNT: i32 = 0xf0;
/// Bytes of one xsave area: a signal entry moves XSAVE this far down the
/// areas (the processor's XSAVE size, in whole pages; thread.rs).
pub const XSAVE_STEP: i32 = 0xf8;
/// Their siginfo, in the order they came: [`DEFER_SLOTS`] of 128 bytes.
pub const DEFER_INFO: i32 = 0x100;
pub const DEFER_SLOTS: usize = 14;
const _: () = assert!(DEFER_INFO as usize + 128 * DEFER_SLOTS <= 0x900);
/// Where the program's SIGSEGV handler was last entered for a fault (the
/// faulting instruction, then the stack pointer), until a handler returns:
/// a fault nested in that handler is fatal, as natively (signals.rs,
/// `segv_next`).
pub const SEGV_PC: i32 = 0x900;
pub const SEGV_RSP: i32 = 0x908;
/// Set when the dispatcher leaves through `fs_unmask_and_go` with a mask
/// the program's `rt_sigprocmask` set (cleared at each entry): a sample
/// that lands there was held back by the program's mask, not the engine's
/// (sampling.rs).
pub const UNMASK_FOR_PROGRAM: i32 = 0x910;
/// The copy of the system call last run again after EFAULT (kernel_writes.rs,
/// `after_efault`), and how many times in a row.
pub const EFAULT_RETRY: i32 = 0x918;
pub const EFAULT_TRIES: i32 = 0x920;
/// Header words copied when `gs` moves to another bank of the same thread.
pub const KEPT: std::ops::Range<usize> = 0..0x78;

/// Offset of counter slot 0.
pub const COUNTERS: usize = 0x1000;
/// Counter slots a bank can hold (the address space is reserved, pages are
/// touched only where slots are used).
pub const MAX_SLOTS: usize = 1 << 22;
pub const BANK_BYTES: usize = COUNTERS + MAX_SLOTS * 8;

/// The gs displacement of counter slot `slot`.
pub fn counter(slot: u32) -> i32 {
    (COUNTERS + slot as usize * 8) as i32
}
