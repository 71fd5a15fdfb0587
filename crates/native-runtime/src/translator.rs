//! The translator's shared state: translated blocks, counter slots, code
//! arenas, the indirect-branch table. One lock; held only while translating
//! or linking (cache code never takes it).

use crate::cache::{self, Arena, IblTable};
use crate::code::Target;
use crate::header;
use crate::slots::Slots;
use crate::translate::{self, Exit, Resolver};
use flopscope_isa::Classifier;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

pub struct Translator {
    /// The cache address of each translated block, by program address.
    /// Looked up at every translation and dispatcher entry: hashed (with a
    /// B-tree, gcc's counted run, 220,000 blocks, took 1% longer); a range
    /// is forgotten through the pages' index (written_code.rs).
    pub blocks: FxHashMap<u64, u64>,
    pub slots: Slots,
    pub(crate) arenas: Vec<Arena>,
    pub ibl: IblTable,
    classifier: Classifier,
    bufs: Option<translate::Buffers>,
    /// The last block's code, its buffers reused for the next.
    code: Option<crate::code::Code>,
    /// What [`translate::flags_dead_at`] found at each call target and
    /// counted fall-through looked at (calls to one function from many
    /// places look once); forgotten when the program's mappings change.
    pub flags_dead_at: FxHashMap<u64, bool>,
    /// The laid-out bytes of the block being placed, and its marks, links
    /// and keys.
    placed: Vec<u8>,
    patches: crate::code::Patches,
    /// The first block translated with XSAVE-family instructions (their
    /// bytes are not counted).
    pub uncounted_state: Option<u64>,
    /// The first block translated from a writable page the engine could
    /// not protect (written_code.rs): code that may change unseen.
    pub generated_code_pc: Option<u64>,
    /// The pages code was translated from (written_code.rs).
    pub watch: crate::written_code::Watch,
    /// The stubs linked to each block (unlinked when it is invalidated).
    pub incoming: Incoming,
    /// Every block translated, with the mappings snapshot it was read under
    /// (for attribution; kept when its code is unmapped).
    pub profiles: Vec<(usize, translate::BlockProfile)>,
    /// The profiles' instructions and items.
    pub profile_data: translate::ProfileData,
}

static STATE: Mutex<Option<Translator>> = Mutex::new(None);

/// Sets up the translator (once, at take-over).
pub fn init() -> Result<(), String> {
    let ibl = IblTable::new()
        .ok_or_else(|| crate::sys::no_memory("cannot map the indirect-branch table"))?;
    crate::thread::IBL.store(ibl.base() as usize, Ordering::Release);
    *lock() = Some(Translator {
        blocks: FxHashMap::default(),
        slots: Slots::default(),
        arenas: Vec::new(),
        ibl,
        classifier: Classifier::new(),
        bufs: None,
        code: None,
        flags_dead_at: FxHashMap::default(),
        placed: Vec::new(),
        patches: Default::default(),
        uncounted_state: None,
        generated_code_pc: None,
        watch: Default::default(),
        incoming: Incoming::default(),
        profiles: Vec::new(),
        profile_data: translate::ProfileData::default(),
    });
    Ok(())
}

pub fn lock() -> MutexGuard<'static, Option<Translator>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lock if it is free now (a fatal signal may arrive while it is held).
pub fn try_lock() -> Option<MutexGuard<'static, Option<Translator>>> {
    for _ in 0..1000 {
        match STATE.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&STATE)
}

/// The cache address of the block at `pc`, translating it if needed.
pub fn lookup_or_translate(pc: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    t.get(pc)
}

/// [`lookup_or_translate`] for a direct branch's target, whose `stub` is
/// linked to the block under the same lock: the block cannot be
/// invalidated in between, and so stays reachable from its incoming list.
pub fn lookup_and_link(pc: u64, stub: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    let at = t.get(pc)?;
    t.incoming.link(stub, at);
    Ok(at)
}

/// The cache address to resume at when a signal handler returns to `pc`
/// rather than to the cache copy of the instruction it interrupted at
/// `at` (or when that block was invalidated meanwhile): the interrupted
/// execution's counts settled first (settle.rs).
pub fn resume_elsewhere(at: &crate::cachemap::AtMark, pc: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    crate::settle::settle(t, at);
    t.get(pc)
}

/// The kernel is about to write `(start, length)` ranges of the
/// program's memory (kernel_writes.rs): their protected pages are given
/// back, their translations invalidated.
/// Says whether any page the engine may protect is there
/// (`Translator::kernel_write`).
pub fn kernel_writes(ranges: &[(u64, u64)]) -> bool {
    let mut watched = false;
    if let Some(t) = lock().as_mut() {
        for &(at, len) in ranges {
            watched |= t.kernel_write(at, at.saturating_add(len));
        }
    }
    watched
}

/// The cache address of the instruction at `pc` translated alone (the
/// dispatcher's [`Exit::Alone`]).
pub fn run_alone(pc: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    t.translate_alone(pc)
}

/// Whether the block translated from `orig` is still the one at `cache`
/// (not invalidated since: the program's code there is unchanged).
pub fn still_current(orig: u64, cache: u64) -> bool {
    let g = lock();
    g.as_ref()
        .is_some_and(|t| t.blocks.get(&orig) == Some(&cache))
}

/// [`lookup_or_translate`] for an indirect branch's target, which is also
/// published in the lookup table (only such targets are: fewer pages of the
/// table are touched). At the branch's first execution, its `record`
/// (cache.rs, `indirect_site`) is set to this target too, under the lock:
/// two threads filling one record at once could otherwise pair one's
/// target with the other's block.
pub fn lookup_indirect(pc: u64, record: Option<u64>) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    let at = t.get(pc)?;
    t.ibl.insert(pc, at);
    if let Some(r) = record {
        let incoming = &mut t.incoming;
        cache::fill_record(r, pc, |stub| incoming.link(stub, at));
    }
    Ok(at)
}

const FULL: &str = "the code cache arena is full";

struct Exits<'a> {
    blocks: &'a FxHashMap<u64, u64>,
    arena: &'a mut Arena,
}

impl Resolver for Exits<'_> {
    fn resolve(&mut self, target: u64) -> Result<Target, String> {
        if let Some(c) = self.blocks.get(&target) {
            return Ok(Target::Abs(*c));
        }
        let desc = Box::into_raw(Box::new(Exit::Direct { target, stub: 0 }));
        let stub = self.arena.stub(desc as u64).ok_or(FULL)?;
        // SAFETY: desc was just allocated and is not shared yet.
        unsafe { *desc = Exit::Direct { target, stub } };
        Ok(Target::Stub(stub))
    }

    fn exit_desc(&mut self, exit: Exit) -> u64 {
        Box::into_raw(Box::new(exit)) as u64
    }

    fn record(&mut self) -> Result<u64, String> {
        self.arena.record().ok_or_else(|| FULL.into())
    }

    fn literal(&mut self, value: u64) -> Result<u64, String> {
        self.arena.literal(value).ok_or_else(|| FULL.into())
    }
}

impl Translator {
    pub fn get(&mut self, pc: u64) -> Result<u64, String> {
        if let Some(c) = self.blocks.get(&pc) {
            return Ok(*c);
        }
        if !crate::dispatch::debug() {
            return self.translate(pc);
        }
        let t0 = crate::stats::now();
        let r = self.translate(pc);
        crate::stats::add_translation(crate::stats::now() - t0);
        r
    }

    fn translate(&mut self, pc: u64) -> Result<u64, String> {
        let mut bufs = self.bufs.take().unwrap_or_default();
        let mut dec = loop {
            let mut dec = translate::decode(pc, &mut self.classifier, bufs, translate::MAX_INSNS)?;
            // Protected only now: a write since the bytes were read went
            // unseen, so they are read again.
            let (writable, newly_protected) = self.watch_pages(pc, &dec);
            dec.writable = writable;
            if !newly_protected {
                break dec;
            }
            bufs = dec.recycle();
        };
        dec.flags_dead_at_end = dec.call_target().is_some_and(|t| self.kills_flags(&dec, t));
        dec.flags_dead_at_fall = dec
            .counted_fall()
            .is_some_and(|f| self.kills_flags(&dec, f));
        let r = self.translate_decoded(pc, &dec, true);
        self.bufs = Some(dec.recycle());
        r
    }

    /// The instruction at `pc` translated as a block of its own that falls
    /// to the next: a write that may have rewritten the block it was in
    /// runs alone, so that what follows it is translated from the bytes it
    /// left (written_code.rs). Its page is not protected again (the write
    /// must run), and it is not the block `pc` resolves to (only its stub
    /// leads there). Kept for the next such write while the bytes at `pc`
    /// are the same.
    pub fn translate_alone(&mut self, pc: u64) -> Result<u64, String> {
        let mut before = [0u8; 15];
        let n = crate::sys::read_self(pc, &mut before);
        let bufs = self.bufs.take().unwrap_or_default();
        let mut dec = translate::decode(pc, &mut self.classifier, bufs, 1)?;
        let len = (dec.program_bytes() as usize).min(n);
        if let Some((at, was)) = self.watch.alone.get(&pc) {
            if was[..] == before[..len] {
                self.bufs = Some(dec.recycle());
                return Ok(*at);
            }
        }
        dec.writable = true;
        let r = self.translate_decoded(pc, &dec, false);
        self.bufs = Some(dec.recycle());
        let at = r?;
        let mut after = [0u8; 15];
        // Kept only if no write came between the reads and the decoding.
        if crate::sys::read_self(pc, &mut after[..len]) == len && after[..len] == before[..len] {
            self.watch.alone.insert(pc, (at, before[..len].to_vec()));
        }
        Ok(at)
    }

    /// Whether the code at `target`, where the block goes, writes the flags
    /// before reading them ([`translate::flags_dead_at`]), in code that
    /// cannot change unseen: neither the block nor the target on a page
    /// the program can write (directly, through another view of a shared
    /// file, or once the engine lifts its protection). A block relying on
    /// the target's code is not invalidated with it. The target is the
    /// callee of a call ending the block, or the code a counted conditional
    /// branch falls to.
    fn kills_flags(&mut self, dec: &translate::Decoded, target: u64) -> bool {
        if dec.writable {
            return false;
        }
        if let Some(&dead) = self.flags_dead_at.get(&target) {
            return dead;
        }
        let page = target & !4095;
        let dead = !self.watch.writable_page(page)
            && !self.watch.writable_page(page + 4096)
            && !crate::codemap::in_shared_view(target)
            && translate::flags_dead_at(target);
        self.flags_dead_at.insert(target, dead);
        dead
    }

    /// Translates `dec` into the cache; `resolves` makes it the block `pc`
    /// resolves to.
    fn translate_decoded(
        &mut self,
        pc: u64,
        dec: &translate::Decoded,
        resolves: bool,
    ) -> Result<u64, String> {
        let ai = match self.arenas.iter().position(|a| a.reaches(pc)) {
            Some(i) => i,
            None => {
                let arena = Arena::near(pc)
                    .ok_or_else(|| crate::sys::no_memory("cannot map a code cache arena"))?;
                crate::cachemap::add_arena(arena.base, arena.end);
                self.arenas.push(arena);
                self.arenas.len() - 1
            }
        };
        let arena = &mut self.arenas[ai];
        let arena_next_before = arena.next;
        arena.align(16);
        let start = arena.next;
        let routines = arena.routines;
        let mut exits = Exits {
            blocks: &self.blocks,
            arena,
        };
        let data_before = self.profile_data.len();
        let built = translate::build(
            dec,
            &mut self.slots,
            &mut self.classifier,
            &mut exits,
            start,
            &routines,
            self.code.take().unwrap_or_default(),
            &mut self.profile_data,
        )
        .inspect_err(|_| self.profile_data.truncate(data_before))?;
        if self.slots.descs.len() >= header::MAX_SLOTS {
            self.profile_data.truncate(data_before);
            return Err(format!(
                "more than {} counter slots: the program is too large for this version",
                header::MAX_SLOTS
            ));
        }
        if built.uncounted_state && self.uncounted_state.is_none() {
            self.uncounted_state = Some(pc);
        }
        let snapshot = crate::codemap::snapshot_count().saturating_sub(1);
        self.profiles.push((snapshot, built.profile));
        let at = translate::place(
            &built.code,
            &mut self.arenas[ai],
            &mut self.placed,
            &mut self.patches,
        )?;
        debug_assert_eq!(at, start);
        if let (Some((d, e)), Some(off)) = (built.syscall_exit, self.patches.resume) {
            for exit in [d, e] {
                // SAFETY: the descriptors were made for this block and are
                // not shared until the block is returned.
                if let Exit::Syscall { native, .. } | Exit::Efault { native, .. } =
                    unsafe { &mut *(exit as *mut Exit) }
                {
                    *native = at + u64::from(off);
                }
            }
        }
        if crate::dispatch::debug() {
            let padded = at - arena_next_before;
            crate::stats::add_code(dec.program_bytes(), self.placed.len() as u64 + padded);
        }
        if built.code.marking {
            // Before any thread can run the block: a sample in it maps back.
            let profile = (self.profiles.len() - 1) as u32;
            crate::cachemap::publish(
                at,
                self.placed.len() as u32,
                pc,
                &self.patches.marks,
                profile,
            );
        }
        self.code = Some(built.code);
        if !resolves {
            return Ok(at);
        }
        if dec.writable || self.watch.rewritten.contains(&pc) {
            self.incoming.watch(at);
        }
        self.blocks.insert(pc, at);
        Ok(at)
    }
}

/// The stubs linked to each block that may be invalidated again and again,
/// by the block's cache address: the first, the others chained through
/// their next words ([`cache::stub_next`]).
#[derive(Default)]
pub struct Incoming {
    lists: FxHashMap<u64, u64>,
    /// The blocks whose incoming stubs are listed: those translated from a
    /// page the program can write, or from an address whose code was
    /// invalidated before (unmapped and mapped anew). Others (all of a
    /// compiler's) are linked without the list's cost (1.5% of gcc's run).
    watched: FxHashSet<u64>,
}

impl Incoming {
    /// Lists the stubs that will be linked to the block at `cache`.
    pub fn watch(&mut self, cache: u64) {
        self.watched.insert(cache);
    }

    /// Links `stub` to the block at `cache` ([`link`]) and lists it among
    /// the block's incoming stubs if the block is watched. A stub linked
    /// already (two threads took its exit before either linked it) is left
    /// as it is: each stub is on one list at most.
    pub fn link(&mut self, stub: u64, cache: u64) {
        // SAFETY: the literal and next words of a stub made by `Arena::stub`.
        let (literal, next) = unsafe { (&*cache::stub_literal(stub), &*cache::stub_next(stub)) };
        if literal.load(Ordering::Acquire) != cache::stub_exit(stub) {
            return;
        }
        link(stub, cache);
        if self.watched.contains(&cache) {
            next.store(
                self.lists.insert(cache, stub).unwrap_or(0),
                Ordering::Relaxed,
            );
        }
    }

    /// The block at `cache` was invalidated: the stubs linked to it go to
    /// the dispatcher again, and the branches linked through them to the
    /// stubs. Without this, code rewritten over and over (a JIT compiler's
    /// buffer) would leave a chain of every old translation, each linked to
    /// the next, for whatever still reaches the first (a call's one-target
    /// cache, a direct link): a walk as long as the number of rewrites.
    /// With it, an old block leads through its invalidation stub to the
    /// current one or to the dispatcher: one hop at most.
    pub fn unlink(&mut self, cache: u64) {
        self.watched.remove(&cache);
        let mut stub = self.lists.remove(&cache).unwrap_or(0);
        while stub != 0 {
            // SAFETY: the words of a stub made by `Arena::stub`.
            let (literal, site, next) = unsafe {
                (
                    &*cache::stub_literal(stub),
                    &*cache::stub_site(stub),
                    &*cache::stub_next(stub),
                )
            };
            let site = site.load(Ordering::Acquire);
            if site != 0 {
                // Back at the stub: it was in reach when the branch was made.
                let rel = (stub as i64 - (site as i64 + 4)) as i32 as u32;
                // SAFETY: a 4-byte aligned rel32 in a block of the cache.
                unsafe { &*(site as *const AtomicU32) }.store(rel, Ordering::Release);
            }
            literal.store(cache::stub_exit(stub), Ordering::Release);
            stub = next.swap(0, Ordering::Relaxed);
        }
    }
}

/// Links the stub of `exit` to the block at `cache`: the stub's literal,
/// then the branch that goes to the stub, re-aimed at `cache` in place
/// when it reaches (code.rs: one aligned 4-byte store). Going straight
/// saves the hop through the stub's indirect jump, which sits at the far
/// end of the arena from the blocks. The literal first: a thread that
/// fetched the branch before the store still arrives, one hop later.
/// Under the translator's lock ([`Incoming::link`], which lists the stub
/// for [`Incoming::unlink`]); a branch in a block invalidated
/// since is only run by threads already inside it, and links never store
/// into a block's first word, which invalidation rewrites.
fn link(stub: u64, cache: u64) {
    // SAFETY: the literal and site words of a stub made by `Arena::stub`.
    let (literal, site) = unsafe { (&*cache::stub_literal(stub), &*cache::stub_site(stub)) };
    literal.store(cache, Ordering::Release);
    let site = site.load(Ordering::Acquire);
    if site == 0 {
        return;
    }
    if let Ok(rel) = i32::try_from(cache as i64 - (site as i64 + 4)) {
        // SAFETY: a 4-byte aligned rel32 in a block of the cache (code.rs).
        let field = unsafe { &*(site as *const AtomicU32) };
        field.store(rel as u32, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::Code;
    use std::sync::atomic::AtomicU64;

    /// Places `code` as a block of `a`.
    fn block(a: &mut Arena, code: &Code) -> u64 {
        let mut out = Vec::new();
        translate::place(code, a, &mut out, &mut Default::default()).expect("room")
    }

    /// `mov eax, v; ret`.
    fn returning(a: &mut Arena, v: u8) -> u64 {
        let mut c = Code::default();
        c.bytes(&[0xb8, v, 0, 0, 0, 0xc3]);
        block(a, &c)
    }

    fn call(at: u64) -> u32 {
        // SAFETY: a block of the test's arena that ends in `ret`.
        let f: extern "C" fn() -> u32 = unsafe { std::mem::transmute(at) };
        f()
    }

    #[test]
    fn a_linked_branch_goes_straight_to_its_target_and_on_through_an_invalidated_start() {
        let here = call as *const () as u64;
        let mut a = Arena::near(here).expect("an arena");
        let stub = a.stub(0).expect("room for a stub");
        let mut c = Code::default();
        c.bytes(&[0x31, 0xc0, 0x48, 0x85, 0xe4]); // xor eax, eax; test rsp, rsp
        c.jcc(0x5, Target::Stub(stub)); // jne: taken
        c.bytes(&[0x0f, 0x0b]); // ud2
        let branch = block(&mut a, &c);
        // SAFETY: the stub's site word.
        let site = unsafe { &*cache::stub_site(stub) }.load(Ordering::Relaxed);
        assert_eq!(
            (site % 4, site - branch),
            (0, 8),
            "xor, test, a 1-byte nop, jne"
        );
        let target = returning(&mut a, 42);
        link(stub, target);
        // SAFETY: the stub's literal.
        let literal = unsafe { &*cache::stub_literal(stub) };
        assert_eq!(literal.load(Ordering::Relaxed), target);
        // The stub no longer matters: aim its literal elsewhere.
        literal.store(returning(&mut a, 7), Ordering::Relaxed);
        assert_eq!(
            call(branch),
            42,
            "straight to the target, not through the stub"
        );
        // Invalidation writes a jump over the target's start
        // (written_code.rs): the linked branch arrives there and goes on.
        let other = returning(&mut a, 9);
        let rel = (other as i64 - (target as i64 + 5)) as i32;
        // SAFETY: the target block's first bytes.
        unsafe {
            *(target as *mut u8) = 0xe9;
            std::ptr::write_unaligned((target + 1) as *mut i32, rel);
        }
        assert_eq!(call(branch), 9);
    }

    /// A stub linked to a block that is then invalidated goes back to the
    /// dispatcher, and so does the branch linked through it: whatever
    /// reaches the old block is one hop from the next translation, not a
    /// chain through every translation since.
    #[test]
    fn stubs_linked_to_an_invalidated_block_lead_to_the_dispatcher_again() {
        let mut a = Arena::near(call as *const () as u64).expect("an arena");
        let (stub, other) = (a.stub(0).expect("room"), a.stub(0).expect("room"));
        let mut c = Code::default();
        c.jmp(Target::Stub(stub));
        let branch = block(&mut a, &c);
        // SAFETY: the stubs' words.
        let (literal, site, next) = unsafe {
            (
                &*cache::stub_literal(stub),
                &*cache::stub_site(stub),
                &*cache::stub_next(stub),
            )
        };
        let site = site.load(Ordering::Relaxed);
        let aimed = || {
            // SAFETY: the branch's rel32.
            let rel = unsafe { *(site as *const i32) };
            (site as i64 + 4 + rel as i64) as u64
        };
        let (target, newer) = (returning(&mut a, 42), returning(&mut a, 43));
        let mut incoming = Incoming::default();
        incoming.watch(target);
        incoming.watch(newer);
        incoming.link(stub, target);
        incoming.link(other, target);
        assert_eq!((aimed(), call(branch)), (target, 42));
        // Linked already: a second link (two threads took the exit) is ignored.
        incoming.link(stub, newer);
        assert_eq!(literal.load(Ordering::Relaxed), target);
        assert_eq!(next.load(Ordering::Relaxed), 0, "first on the list");
        incoming.unlink(target);
        for s in [stub, other] {
            // SAFETY: as above.
            let l = unsafe { &*cache::stub_literal(s) };
            assert_eq!(l.load(Ordering::Relaxed), cache::stub_exit(s));
        }
        assert_eq!(aimed(), stub, "the branch goes to its stub again");
        assert!(incoming.lists.is_empty());
        // And can be linked anew, to the next translation.
        incoming.link(stub, newer);
        assert_eq!((aimed(), call(branch)), (newer, 43));
    }

    /// An arena, an indirect-branch table, a `gs` bank for this thread
    /// (given back on drop) and three blocks that return rax + the carry
    /// flag + 10, 20 and 30 (`setc cl; movzx ecx, cl; lea eax,
    /// [rax+rcx+v]; ret`).
    struct Fixture {
        a: Arena,
        table: cache::IblTable,
        targets: [u64; 3],
        bank: u64,
    }

    impl Fixture {
        fn new() -> Fixture {
            let mut a = Arena::near(call as *const () as u64).expect("an arena");
            let table = cache::IblTable::new().expect("a table");
            // The header and a page of counters.
            let bank = crate::sys::map_anon(header::COUNTERS + 4096, false).expect("a bank") as u64;
            // SAFETY: the bank's IBL_TABLE word.
            unsafe { *((bank + header::IBL_TABLE as u64) as *mut u64) = table.base() };
            crate::sys::set_gs(bank);
            let targets = [10, 20, 30].map(|v| {
                let mut c = Code::default();
                c.bytes(&[
                    0x0f, 0x92, 0xc1, 0x0f, 0xb6, 0xc9, 0x8d, 0x44, 0x08, v, 0xc3,
                ]);
                block(&mut a, &c)
            });
            Fixture {
                a,
                table,
                targets,
                bank,
            }
        }

        /// A block that sets eax to 100 and the carry flag to `carry`, then
        /// ends in an indirect branch with `record` to its argument, its
        /// executions counted there in `count`.
        fn branch(&mut self, carry: bool, record: u64, count: Option<u32>) -> u64 {
            let mut c = Code::default();
            c.bytes(&[0xb8, 100, 0, 0, 0, if carry { 0xf9 } else { 0xf8 }]);
            c.store_gs(header::SAVE_RAX, crate::code::RAX);
            c.bytes(&[0x48, 0x89, 0xf8]); // mov rax, rdi
            cache::indirect_site(&mut c, record, &self.a.routines, count);
            block(&mut self.a, &c)
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            crate::sys::set_gs(0);
        }
    }

    fn call_with(at: u64, arg: u64) -> u32 {
        // SAFETY: a block of the test's arena that ends up in one ending in `ret`.
        let f: extern "C" fn(u64) -> u32 = unsafe { std::mem::transmute(at) };
        f(arg)
    }

    #[test]
    fn an_indirect_branch_reaches_its_cached_target_or_the_tables_with_the_flags_kept() {
        let mut f = Fixture::new();
        let [cached, first, second] = f.targets;
        // 0x2000 at its first probe, 0x2000 + 4 MiB (same start) at the next.
        let far = 0x2000 + (1 << 22);
        assert!(f.table.insert(0x2000, first) && f.table.insert(far, second));
        // SAFETY: counter slot 0 of the fixture's bank.
        let counter = unsafe { &*((f.bank + header::counter(0) as u64) as *const AtomicU64) };
        for count in [None, Some(0)] {
            for carry in [false, true] {
                let record = f.a.record().expect("room");
                let site = f.branch(carry, record, count);
                cache::fill_record(record, 0x1000, |stub| link(stub, cached));
                // Set once: a later target does not replace the first.
                cache::fill_record(record, 0x3000, |_| panic!("linked twice"));
                // SAFETY: the record's three words.
                let words = unsafe { std::slice::from_raw_parts(record as *const u64, 3) };
                let [key, stub, key_at] = [
                    words[cache::RECORD_KEY],
                    words[cache::RECORD_STUB],
                    words[cache::RECORD_KEY_AT],
                ];
                assert_eq!(key, 0x1000u64.wrapping_neg());
                // SAFETY: the key's immediate, in the placed block.
                let imm = unsafe { *(key_at as *const u64) };
                assert_eq!((key_at % 8, imm), (0, 0x1000u64.wrapping_neg()));
                // SAFETY: the literal word of the record's stub.
                let literal = unsafe { &*cache::stub_literal(stub) };
                assert_eq!(
                    literal.load(Ordering::Relaxed),
                    cached,
                    "the stub's literal"
                );
                // The hit's jump goes straight to the block, not its stub.
                // SAFETY: the site word of the record's stub.
                let rel32_at = unsafe { &*cache::stub_site(stub) }.load(Ordering::Relaxed);
                // SAFETY: the rel32 of the linked jump, in the placed block.
                let rel = unsafe { *(rel32_at as *const i32) };
                assert_eq!(
                    rel32_at.wrapping_add(4).wrapping_add(rel as i64 as u64),
                    cached
                );
                // Unlinked (its block invalidated), the stub leads the
                // dispatcher to the code now at the branch's target.
                // SAFETY: the exit of the record's stub, set once.
                let exit = unsafe { &*cache::stub_desc(stub) };
                assert!(
                    matches!(exit, Exit::Direct { target: 0x1000, stub: s } if *s == stub),
                    "{exit:?}"
                );
                let c = u32::from(carry);
                assert_eq!(call_with(site, 0x1000), 110 + c, "the branch's own target");
                assert_eq!(call_with(site, 0x2000), 120 + c, "the first probe");
                assert_eq!(call_with(site, far), 130 + c, "the shared probes");
            }
        }
        // Counted in the branch's code, the flags kept: two blocks, three runs each.
        assert_eq!(counter.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn a_target_out_of_reach_is_linked_through_the_literal_only() {
        let mut a = Arena::near(call as *const () as u64).expect("an arena");
        let stub = a.stub(0).expect("room for a stub");
        let mut c = Code::default();
        c.jmp(Target::Stub(stub));
        let at = block(&mut a, &c);
        let before = unsafe { std::slice::from_raw_parts(at as *const u8, 12) }.to_vec();
        let far = at.wrapping_add(3 << 30);
        link(stub, far);
        // SAFETY: the stub's literal and the block's bytes.
        assert_eq!(
            unsafe { &*cache::stub_literal(stub) }.load(Ordering::Relaxed),
            far
        );
        assert_eq!(
            unsafe { std::slice::from_raw_parts(at as *const u8, 12) },
            before
        );
    }
}
