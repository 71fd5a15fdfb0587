//! The translator's shared state: translated blocks, counter slots, code
//! arenas, the indirect-branch table. One lock; held only while translating
//! or linking (cache code never takes it).

use crate::cache::{self, Arena, IblTable};
use crate::header;
use crate::slots::Slots;
use crate::translate::{self, Exit, Resolver};
use flopscope_isa::Classifier;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

/// Translated blocks by program address, ordered: unmapping code forgets
/// the blocks of a range without visiting the others.
pub type AddrMap<V> = BTreeMap<u64, V>;

pub struct Translator {
    pub blocks: AddrMap<u64>,
    pub slots: Slots,
    pub(crate) arenas: Vec<Arena>,
    pub ibl: IblTable,
    classifier: Classifier,
    bufs: Option<translate::Buffers>,
    /// The laid-out bytes of the block being placed, and its marks.
    placed: Vec<u8>,
    marks: Vec<(u32, u32)>,
    /// XSAVE-family instructions were translated (their bytes are not counted).
    pub uncounted_state: bool,
    /// The first block translated from a writable page the engine could
    /// not protect (written_code.rs): code that may change unseen.
    pub generated_code_pc: Option<u64>,
    /// The pages code was translated from (written_code.rs).
    pub watch: crate::written_code::Watch,
    /// Every block translated, with the mappings snapshot it was read under
    /// (for attribution; kept when its code is unmapped).
    pub profiles: Vec<(usize, translate::BlockProfile)>,
}

static STATE: Mutex<Option<Translator>> = Mutex::new(None);

/// Sets up the translator (once, at take-over).
pub fn init() -> Result<(), String> {
    let ibl = IblTable::new().ok_or("cannot map the indirect-branch table")?;
    crate::thread::IBL.store(ibl.base() as usize, Ordering::Release);
    *lock() = Some(Translator {
        blocks: AddrMap::default(),
        slots: Slots::default(),
        arenas: Vec::new(),
        ibl,
        classifier: Classifier::new(),
        bufs: None,
        placed: Vec::new(),
        marks: Vec::new(),
        uncounted_state: false,
        generated_code_pc: None,
        watch: Default::default(),
        profiles: Vec::new(),
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

/// The cache address of the block at `pc`, translating it if needed.
pub fn lookup_or_translate(pc: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    t.get(pc)
}

/// [`lookup_or_translate`] for an indirect branch's target, which is also
/// published in the lookup table (only such targets are: fewer pages of the
/// table are touched).
pub fn lookup_indirect(pc: u64) -> Result<u64, String> {
    let mut g = lock();
    let t = g.as_mut().ok_or("the translator is not set up")?;
    let at = t.get(pc)?;
    t.ibl.insert(pc, at);
    Ok(at)
}

struct Exits<'a> {
    blocks: &'a AddrMap<u64>,
    arena: &'a mut Arena,
}

impl Resolver for Exits<'_> {
    fn resolve(&mut self, target: u64) -> Result<u64, String> {
        if let Some(c) = self.blocks.get(&target) {
            return Ok(*c);
        }
        let desc = Box::into_raw(Box::new(Exit::Direct { target, stub: 0 }));
        let stub = self
            .arena
            .stub(desc as u64)
            .ok_or("the code cache arena is full")?;
        // SAFETY: desc was just allocated and is not shared yet.
        unsafe { *desc = Exit::Direct { target, stub } };
        Ok(stub)
    }

    fn exit_desc(&mut self, exit: Exit) -> u64 {
        Box::into_raw(Box::new(exit)) as u64
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
        let dec = loop {
            let mut dec = translate::decode(pc, &mut self.classifier, bufs)?;
            // Protected only now: a write since the bytes were read went
            // unseen, so they are read again.
            let (writable, newly_protected) = self.watch_pages(pc, &dec);
            dec.writable = writable;
            if !newly_protected {
                break dec;
            }
            bufs = dec.recycle();
        };
        let r = self.translate_decoded(pc, &dec);
        self.bufs = Some(dec.recycle());
        r
    }

    fn translate_decoded(&mut self, pc: u64, dec: &translate::Decoded) -> Result<u64, String> {
        let ai = match self.arenas.iter().position(|a| a.reaches(pc)) {
            Some(i) => i,
            None => {
                let arena = Arena::near(pc).ok_or("cannot map a code cache arena")?;
                if crate::sampling::on() {
                    crate::cachemap::add_arena(arena.base, arena.end);
                }
                self.arenas.push(arena);
                self.arenas.len() - 1
            }
        };
        let arena = &mut self.arenas[ai];
        arena.align(16);
        let start = arena.next;
        let (ibl, enter) = (arena.ibl, arena.enter);
        let mut exits = Exits {
            blocks: &self.blocks,
            arena,
        };
        let built = translate::build(
            dec,
            &mut self.slots,
            &mut self.classifier,
            &mut exits,
            start,
            ibl,
            enter,
        )?;
        if self.slots.descs.len() >= header::MAX_SLOTS {
            return Err(format!(
                "more than {} counter slots: the program is too large for this version",
                header::MAX_SLOTS
            ));
        }
        self.uncounted_state |= built.uncounted_state;
        let snapshot = crate::codemap::snapshot_count().saturating_sub(1);
        self.profiles.push((snapshot, built.profile));
        let at = translate::place(
            &built.code,
            &mut self.arenas[ai],
            &mut self.placed,
            &mut self.marks,
        )?;
        debug_assert_eq!(at, start);
        if built.code.marking {
            // Before any thread can run the block: a sample in it maps back.
            crate::cachemap::publish(at, self.placed.len() as u32, pc, &self.marks);
        }
        self.blocks.insert(pc, at);
        Ok(at)
    }
}

/// Links the stub of `exit` to the block at `cache`.
pub fn link(stub: u64, cache: u64) {
    // SAFETY: the literal of a stub made by `Arena::stub`.
    unsafe { (*cache::stub_literal(stub)).store(cache, Ordering::Release) };
}
