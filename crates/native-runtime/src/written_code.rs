//! Code written at run time: JIT compilers, code patched in place (Open
//! MPI's memory hooks rewrite libc's functions), code unmapped and mapped
//! anew. Translations must follow every change, or the counts are those of
//! code that no longer exists.
//!
//! As mature binary translators do:
//! - Every translated block is indexed by the pages its instructions were
//!   read from ([`Watch::by_page`]).
//! - A page of a writable mapping that code is translated from is made
//!   read-only (the program's own view of it stays writable). The program's
//!   first write to it faults; the fault handler ([`fs_code_write_fault`],
//!   entered from signals.rs) gives the page its write permission back,
//!   invalidates the page's blocks and lets the write run again. The next
//!   execution there translates the new code, and protects the page again.
//! - Code in a shared mapping of a file (a memfd's) may be written through
//!   another mapping of the same file at another address: JIT compilers
//!   that never have code writable and executable at once (Erlang's BEAM)
//!   map their code twice, and write it through the writable view. The
//!   pages of such views that show translated code are made read-only
//!   too (`aliases`), when the code is translated and when a writable view
//!   is mapped or made writable later (`writable_view`); a write there
//!   faults, and invalidates the code page it shows.
//! - `mprotect` making code writable, `munmap`, `mmap` with MAP_FIXED and
//!   `mremap` invalidate the blocks of their range (syscalls.rs).
//! - The kernel's writes for the program (a `read` into a protected page)
//!   do not fault, they fail: once a page is protected, the system calls
//!   that write memory give its pages back first (kernel_writes.rs).
//! - An invalidated block stays in the cache (threads may be running it)
//!   with a jump to a fresh exit stub written over its start: whatever
//!   reaches it (direct links from other blocks, an indirect branch's
//!   one-target cache, a signal handler's entry) goes on to the dispatcher,
//!   which translates the code now at that address and links the stub to
//!   it. The indirect-branch table's entry is aimed at the stub, and the
//!   stubs linked to the block go back to the dispatcher
//!   (`translator::Incoming`): however often the code is
//!   rewritten, an old block is one hop from the current one.
//!
//! - A write that hits the page of the block it runs in may change that
//!   block's next instructions, which the processor runs as written at
//!   once. The block's execution is then settled as stopped before the
//!   write (settle.rs: its counters hold exactly the instructions that
//!   ran), and the write runs again as a block of its own
//!   ([`Translator::translate_alone`], reached through an exit stub of its
//!   own, [`Exit::Alone`]), which goes on to the translation of the new
//!   bytes after it. Not settled, as for a signal handler's move: a masked
//!   write's active lanes (counted again) and a REP string write's
//!   iterations before the fault (not counted); a write whose copy in the
//!   cache is not at its instruction's mark runs the block's old
//!   instructions to its end.
//!
//! Not protected: the main thread's stack and the current thread's stack
//! region (a nested function's trampoline, a Fortran internal procedure's:
//! the kernel writes a signal's frame there, which no system call
//! announces). Code run from there is reported as code
//! that may have changed unseen ([`Translator::generated_code_pc`]).

use crate::dispatch::gs_word;
use crate::header;
use crate::sys::syscall6;
use crate::translate::Exit;
use crate::translator::{self, Translator};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub const PAGE: u64 = 4096;
/// Pages this close to the translating thread's stack pointer count as
/// its stack.
const STACK_NEAR: u64 = 1 << 20;

/// What the translator knows of the pages its code came from.
#[derive(Default)]
pub struct Watch {
    /// The blocks translated from each page, by program address.
    by_page: BTreeMap<u64, Vec<u64>>,
    /// Pages of writable mappings that code was translated from: true
    /// while the engine keeps them read-only, false once the program wrote
    /// to them (writable again, until code there is translated again).
    protected: BTreeMap<u64, bool>,
    pages: Vec<u64>,
    /// Pages of writable views of shared files that show translated code,
    /// kept read-only: the code pages each shows (one a view of the file
    /// translated from), and the view's protection to give back.
    aliases: BTreeMap<u64, (Vec<u64>, i32)>,
    /// The program addresses whose translations were invalidated: their
    /// next ones are watched for incoming links (translator::Incoming).
    pub rewritten: rustc_hash::FxHashSet<u64>,
    /// Writes that hit a protected page, and blocks invalidated in all.
    pub faults: u64,
    pub invalidated: u64,
    /// Writes' instructions translated alone (see the module's notes):
    /// their cache address and the bytes translated, by program address;
    /// and the exit stubs leading there.
    pub alone: rustc_hash::FxHashMap<u64, (u64, Vec<u8>)>,
    alone_stubs: rustc_hash::FxHashMap<u64, u64>,
}

impl Watch {
    /// Whether the page at `page` belongs to a writable mapping that code
    /// was translated from (the engine may be keeping it read-only).
    pub fn writable_page(&self, page: u64) -> bool {
        self.protected.contains_key(&page)
    }
}

impl Translator {
    /// Indexes the block at `pc` by its pages and protects those the
    /// program can write. Says whether any of them can be written (the
    /// block's start must then be patchable while threads run it), and
    /// whether any was protected just now.
    pub fn watch_pages(&mut self, pc: u64, dec: &crate::translate::Decoded) -> (bool, bool) {
        let mut pages = std::mem::take(&mut self.watch.pages);
        dec.pages(&mut pages);
        let (mut writable, mut newly) = (false, false);
        for &p in &pages {
            self.watch.by_page.entry(p).or_default().push(pc);
            for (q, prot) in crate::codemap::writable_aliases(p) {
                self.protect_alias(q, p, prot);
            }
            let known = self.watch.protected.get(&p).copied();
            let in_writable_mapping = match known {
                Some(_) => true,
                None => dec.writable && crate::codemap::mapping_of(p).is_some_and(|m| m.writable),
            };
            if !in_writable_mapping {
                continue;
            }
            writable = true;
            if known == Some(true) {
                continue;
            }
            if on_a_stack(p) || !self.protect(p) {
                self.generated_code_pc.get_or_insert(pc);
                continue;
            }
            self.watch.protected.insert(p, true);
            newly = true;
        }
        self.watch.pages = pages;
        (writable, newly)
    }

    /// Invalidates every block read from the pages of `lo..hi`.
    pub fn invalidate(&mut self, lo: u64, hi: u64) {
        let (lo, hi) = (lo & !(PAGE - 1), hi.saturating_add(PAGE - 1) & !(PAGE - 1));
        let pages: Vec<u64> = self.watch.by_page.range(lo..hi).map(|(p, _)| *p).collect();
        for p in pages {
            for pc in self.watch.by_page.remove(&p).unwrap_or_default() {
                self.invalidate_block(pc);
            }
        }
    }

    /// Page `q` of a writable view shows code page `code`: read-only from
    /// now on (until written), with `prot` to give back.
    fn protect_alias(&mut self, q: u64, code: u64, prot: i32) {
        if let Some((pages, _)) = self.watch.aliases.get_mut(&q) {
            if !pages.contains(&code) {
                pages.push(code);
            }
            return;
        }
        crate::kernel_writes::route(&self.arenas, q);
        if mprotect(q, prot & !libc::PROT_WRITE) {
            self.watch.aliases.insert(q, (vec![code], prot));
        } else {
            self.generated_code_pc.get_or_insert(code);
        }
    }

    /// `lo..hi` was mapped writable or made writable: its pages that show
    /// translated code through a shared file are protected (see the
    /// module's notes).
    pub fn writable_view(&mut self, lo: u64, hi: u64) {
        for (q, code, prot) in crate::codemap::views_onto(lo, hi) {
            if self.watch.by_page.contains_key(&code) {
                self.protect_alias(q, code, prot);
            }
        }
    }

    /// The program changed the protection of `lo..hi` (or unmapped it, or
    /// mapped something else there): the engine's protection of those
    /// pages is gone, and code there may change from now on.
    pub fn range_changed(&mut self, lo: u64, hi: u64, writable: bool) {
        crate::codemap::forget(lo, hi);
        // What a call target's code was seen to do may no longer hold.
        self.flags_dead_at.clear();
        let gone: Vec<u64> = self.watch.aliases.range(lo..hi).map(|(q, _)| *q).collect();
        for q in gone {
            self.watch.aliases.remove(&q);
        }
        let gone: Vec<u64> = self
            .watch
            .protected
            .range(lo..hi)
            .map(|(p, _)| *p)
            .collect();
        for p in gone {
            self.watch.protected.remove(&p);
        }
        if writable {
            self.invalidate(lo, hi);
        }
    }

    /// Sends whatever reaches the block translated from `pc` to the
    /// dispatcher, and forgets it.
    fn invalidate_block(&mut self, pc: u64) {
        let Some(at) = self.blocks.remove(&pc) else {
            return;
        };
        self.watch.invalidated += 1;
        self.watch.rewritten.insert(pc);
        let Some(arena) = self.arenas.iter_mut().find(|a| a.base <= at && at < a.end) else {
            return;
        };
        let desc = Box::into_raw(Box::new(Exit::Direct {
            target: pc,
            stub: 0,
        }));
        let Some(stub) = arena.stub(desc as u64) else {
            // No room for the stub: the old translation stays reachable.
            self.generated_code_pc.get_or_insert(pc);
            return;
        };
        // SAFETY: desc was just allocated and is not shared yet.
        unsafe { *desc = Exit::Direct { target: pc, stub } };
        let rel = (stub as i64 - (at as i64 + 5)) as i32 as u32 as u64;
        // SAFETY: blocks start 16-byte aligned in the arena's writable
        // memory; the jump replaces the block's first 5 bytes (one
        // instruction of at least 5 bytes: translate::build), the other 3
        // of the aligned word are kept, and the word is stored at once.
        let word = unsafe { &*(at as *const AtomicU64) };
        let old = word.load(Ordering::Acquire);
        word.store(
            (old & !0xff_ffff_ffff) | 0xe9 | (rel << 8),
            Ordering::Release,
        );
        self.incoming.unlink(at);
        self.ibl.retarget(pc, stub);
    }

    /// Where the write interrupted at cache address `pc`, about to run
    /// again, goes on (see the module's notes): None when the block it is
    /// in is still current (its code is not on the page written); else
    /// the stub of its instruction run alone, its block's execution
    /// settled as stopped before it.
    fn rerun_alone(&mut self, pc: u64) -> Option<u64> {
        let at = crate::cachemap::at_mark(pc)?;
        if self.blocks.get(&at.orig) == Some(&at.cache) {
            return None;
        }
        let stub = match self.watch.alone_stubs.get(&at.pc) {
            Some(&s) => s,
            None => {
                let arena = self
                    .arenas
                    .iter_mut()
                    .find(|a| a.base <= at.cache && at.cache < a.end)?;
                let desc = Box::into_raw(Box::new(Exit::Alone { pc: at.pc }));
                let Some(s) = arena.stub(desc as u64) else {
                    // SAFETY: allocated just above, shared with nothing.
                    drop(unsafe { Box::from_raw(desc) });
                    return None;
                };
                self.watch.alone_stubs.insert(at.pc, s);
                s
            }
        };
        crate::settle::settle(self, &at);
        Some(stub)
    }

    /// Makes page `p` read-only, the kernel's writes to it checked first.
    fn protect(&self, p: u64) -> bool {
        crate::kernel_writes::route(&self.arenas, p);
        mprotect(p, libc::PROT_READ | libc::PROT_EXEC)
    }

    /// The kernel will write `lo..hi` for the program: the pages of it the
    /// engine protected are given back as if the program wrote them. Says
    /// whether the range holds any page the engine may protect (given back
    /// now or before).
    pub fn kernel_write(&mut self, lo: u64, hi: u64) -> bool {
        let lo = lo & !(PAGE - 1);
        let (mut watched, mut pages) = (false, Vec::new());
        for (&p, &on) in self.watch.protected.range(lo..hi) {
            watched = true;
            if on {
                pages.push(p);
            }
        }
        pages.extend(self.watch.aliases.range(lo..hi).map(|(q, _)| *q));
        for &p in &pages {
            self.write_fault(p);
        }
        watched || !pages.is_empty()
    }

    /// A write faulted at `addr`: true when it hit a page the engine
    /// protected (now writable again, its blocks invalidated: the write
    /// may run again), false when the fault is the program's own.
    fn write_fault(&mut self, addr: u64) -> bool {
        let p = addr & !(PAGE - 1);
        if let Some((code, prot)) = self.watch.aliases.remove(&p) {
            for c in code {
                self.invalidate(c, c + PAGE);
            }
            self.watch.faults += 1;
            return mprotect(p, prot);
        }
        match self.watch.protected.get(&p).copied() {
            // Another thread's write got there first: run it again.
            Some(false) => true,
            Some(true) => {
                // Invalidated first: once the page is writable, no thread
                // may reach a translation of its old code.
                self.invalidate(p, p + PAGE);
                if !unprotect(p) {
                    return false;
                }
                self.watch.faults += 1;
                self.watch.protected.insert(p, false);
                true
            }
            None => false,
        }
    }
}

/// Whether page `p` belongs to a stack (see the module's notes).
fn on_a_stack(p: u64) -> bool {
    let rsp = gs_word(header::APP_RSP);
    let near = rsp != 0
        && p.abs_diff(rsp & !(PAGE - 1)) < STACK_NEAR
        // Near, but in a mapping of its own, it is not the stack: Valgrind
        // keeps its code cache just below one of its stacks, and its
        // patches to that code went unseen.
        && crate::codemap::one_kernel_mapping(rsp, p);
    near || crate::codemap::mapping_of(p).is_some_and(|m| m.stack)
}

fn unprotect(p: u64) -> bool {
    // Code ran from the page: the program had it executable.
    mprotect(p, libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC)
}

fn mprotect(p: u64, prot: i32) -> bool {
    // SAFETY: changes the protection of one page of the program's.
    unsafe { syscall6(libc::SYS_mprotect as u64, [p, PAGE, prot as u64, 0, 0, 0]) == 0 }
}

/// The SIGSEGV check (signals.rs calls it first, before the program's
/// handler or the engine's fatal one): 1 when the fault was a write to a
/// page the engine protected, handled (the faulting instruction runs
/// again, in its block or alone), 0 otherwise.
///
/// # Safety
/// `uc` is the kernel's `ucontext_t` of the signal.
pub unsafe extern "C" fn fs_code_write_fault(uc: *const libc::ucontext_t) -> u64 {
    // The machine context is filled whatever the handler's flags (the
    // siginfo is not without SA_SIGINFO): trap 14 is a page fault, bit 1
    // of its error code a write, cr2 the address.
    // SAFETY: per the contract.
    let g = unsafe { &(*uc).uc_mcontext.gregs };
    let (trap, err) = (g[libc::REG_TRAPNO as usize], g[libc::REG_ERR as usize]);
    let (addr, pc) = (
        g[libc::REG_CR2 as usize] as u64,
        g[libc::REG_RIP as usize] as u64,
    );
    // Only cache code: the runtime's own code may hold the lock.
    if trap != 14 || err & 2 == 0 || !crate::cache::in_cache(pc) {
        return 0;
    }
    let mut g = translator::lock();
    let Some(t) = g.as_mut() else {
        return 0;
    };
    if !t.write_fault(addr) {
        return 0;
    }
    if let Some(stub) = t.rerun_alone(pc) {
        // SAFETY: the kernel's context of this signal, which its return
        // restores; at the write's mark every register is the program's.
        unsafe { (*uc.cast_mut()).uc_mcontext.gregs[libc::REG_RIP as usize] = stub as i64 };
    }
    1
}
