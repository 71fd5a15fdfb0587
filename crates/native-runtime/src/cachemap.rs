//! Cache address -> program address, readable from a signal handler: where
//! a sample of the counted run (crate::sampling) landed in the program, and
//! the program counter a handler of the program is shown (signals.rs).
//!
//! The program runs from copies of its code, so an interrupted program
//! counter is a cache address; time per function needs the original one.
//! Each code-cache arena gets two append-only tables, written by the
//! translator (which holds its lock: one writer) and read without a lock:
//! - blocks, in cache order (an arena's blocks are laid out at increasing
//!   addresses): (cache start, length, program start, its marks, the index
//!   of its translation's profile, `Translator::profiles`);
//! - marks: for each copied program instruction, (offset of its copy in the
//!   block, its address less the program block's start, as a signed 32-bit
//!   number: a jump the block followed may lead below its start), from
//!   `code::Piece::Mark`.
//!
//! An entry is written in full before the table's length is published
//! (Release); a reader loads the length (Acquire) and reads only entries
//! below it, which never change again. A block is published before it can
//! run (before the translator returns its address), so a sample in a block
//! always finds it; blocks being translated on another thread are not run
//! yet. The tables are reserved whole (MAP_NORESERVE) at the arena's
//! creation, so no reader ever sees them move; pages are touched only as
//! entries are written.
//!
//! A sample between two marks maps to the earlier one (added counter code
//! before an instruction counts for the previous instruction); one in a
//! block's code before its first mark maps to the block's start. A signal
//! handler is shown a program address only at a mark exactly
//! ([`lookup_exact`]): there every register is the program's.

use crate::cache::ARENA_BYTES;
use crate::sys;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Arenas tracked (64 MiB each: 4 GiB of cache). Samples in later arenas
/// count as the engine's time.
pub const MAX_ARENAS: usize = 64;
/// Blocks an arena holds at most (each takes at least 16 bytes: aligned,
/// with a counter bump and a jump).
const MAX_BLOCKS: usize = ARENA_BYTES / 16;
/// Marks an arena's table has room for (a copied instruction with its
/// counters takes 4 bytes or more in all but contrived code); blocks
/// placed once it is full map to their start only.
const MAX_MARKS: usize = ARENA_BYTES / 4;

#[repr(C)]
#[derive(Clone, Copy)]
struct Block {
    cache: u64,
    orig: u64,
    len: u32,
    marks: u32,
    first_mark: u32,
    profile: u32,
}
const _: () = assert!(MAX_MARKS <= u32::MAX as usize);

struct ArenaMap {
    base: AtomicU64,
    end: AtomicU64,
    blocks: AtomicPtr<Block>,
    marks: AtomicPtr<(u32, u32)>,
    n_blocks: AtomicUsize,
    /// Written by the translator only (under its lock).
    n_marks: AtomicUsize,
}

static ARENAS: [ArenaMap; MAX_ARENAS] = [const {
    ArenaMap {
        base: AtomicU64::new(0),
        end: AtomicU64::new(0),
        blocks: AtomicPtr::new(std::ptr::null_mut()),
        marks: AtomicPtr::new(std::ptr::null_mut()),
        n_blocks: AtomicUsize::new(0),
        n_marks: AtomicUsize::new(0),
    }
}; MAX_ARENAS];
static N_ARENAS: AtomicUsize = AtomicUsize::new(0);

/// Tracks a new arena `base..end` (under the translator's lock). False when
/// its tables cannot be had: samples in it then count as engine time.
pub fn add_arena(base: u64, end: u64) -> bool {
    let i = N_ARENAS.load(Ordering::Acquire);
    if i >= MAX_ARENAS {
        return false;
    }
    let Some(blocks) = sys::map_anon(MAX_BLOCKS * std::mem::size_of::<Block>(), false) else {
        return false;
    };
    let Some(marks) = sys::map_anon(MAX_MARKS * 8, false) else {
        sys::unmap(blocks, MAX_BLOCKS * std::mem::size_of::<Block>());
        return false;
    };
    let a = &ARENAS[i];
    a.base.store(base, Ordering::Relaxed);
    a.end.store(end, Ordering::Relaxed);
    a.blocks.store(blocks as *mut Block, Ordering::Relaxed);
    a.marks.store(marks as *mut (u32, u32), Ordering::Relaxed);
    a.n_blocks.store(0, Ordering::Relaxed);
    a.n_marks.store(0, Ordering::Relaxed);
    N_ARENAS.store(i + 1, Ordering::Release);
    true
}

/// Publishes the block placed at `cache` (`len` bytes), a copy of the
/// program's block at `orig`, with `marks` (offset in the copy, offset in
/// the program's block), in order, and its translation's `profile` index.
/// Under the translator's lock.
pub fn publish(cache: u64, len: u32, orig: u64, marks: &[(u32, u32)], profile: u32) {
    let Some(a) = arena_of(cache) else { return };
    let k = a.n_blocks.load(Ordering::Relaxed);
    if k >= MAX_BLOCKS {
        return;
    }
    let m = a.n_marks.load(Ordering::Relaxed);
    let (first_mark, n) = if m + marks.len() <= MAX_MARKS {
        // SAFETY: room checked; entries from m on are not published yet.
        unsafe {
            std::ptr::copy_nonoverlapping(
                marks.as_ptr(),
                a.marks.load(Ordering::Relaxed).add(m),
                marks.len(),
            )
        };
        a.n_marks.store(m + marks.len(), Ordering::Relaxed);
        (m as u32, marks.len() as u32)
    } else {
        (0, 0)
    };
    let b = Block {
        cache,
        orig,
        len,
        marks: n,
        first_mark,
        profile,
    };
    // SAFETY: entry k < MAX_BLOCKS, not published yet.
    unsafe { *a.blocks.load(Ordering::Relaxed).add(k) = b };
    a.n_blocks.store(k + 1, Ordering::Release);
}

fn arena_of(addr: u64) -> Option<&'static ArenaMap> {
    let n = N_ARENAS.load(Ordering::Acquire);
    ARENAS[..n]
        .iter()
        .find(|a| a.base.load(Ordering::Relaxed) <= addr && addr < a.end.load(Ordering::Relaxed))
}

/// The program address a cache address stands for; None outside every
/// published block (the runtime's own code, an arena's shared routines and
/// exit stubs). Async-signal-safe: no lock, no allocation.
pub fn lookup(addr: u64) -> Option<u64> {
    let (b, marks, off) = block_at(addr)?;
    let j = marks.partition_point(|m| u64::from(m.0) <= off);
    Some(match j.checked_sub(1) {
        Some(j) => program_pc(&b, marks[j]),
        None => b.orig,
    })
}

/// A cache address where the copy of a program instruction starts: there
/// every register is the program's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtMark {
    /// The program instruction's address.
    pub pc: u64,
    /// The program address and the cache address of its block.
    pub orig: u64,
    pub cache: u64,
    /// Which of the block's marks (in cache order), and how many it has: a
    /// one-block loop laid out in copies has each copy's marks in turn.
    pub index: usize,
    pub marks: usize,
    /// The block's translation profile (`Translator::profiles`).
    pub profile: u32,
}

/// The program instruction whose copy starts exactly at cache address
/// `addr` (None inside added code, or outside every block): where the
/// program itself stands at an instruction boundary, as at a fault.
/// Async-signal-safe.
pub fn lookup_exact(addr: u64) -> Option<u64> {
    at_mark(addr).map(|m| m.pc)
}

/// [`lookup_exact`], with the block that holds `addr` and the mark's place
/// in it. Async-signal-safe.
pub fn at_mark(addr: u64) -> Option<AtMark> {
    let (b, marks, off) = block_at(addr)?;
    let j = marks.partition_point(|m| u64::from(m.0) < off);
    let m = marks.get(j).filter(|m| u64::from(m.0) == off)?;
    Some(AtMark {
        pc: program_pc(&b, *m),
        orig: b.orig,
        cache: b.cache,
        index: j,
        marks: marks.len(),
        profile: b.profile,
    })
}

/// The program address of block `b`'s mark `m`.
fn program_pc(b: &Block, m: (u32, u32)) -> u64 {
    b.orig.wrapping_add(m.1 as i32 as i64 as u64)
}

/// A block's marks: (offset in the copy, offset in the program's block).
type Marks = &'static [(u32, u32)];

/// The published block holding `addr`, its marks, and `addr`'s offset in it.
fn block_at(addr: u64) -> Option<(Block, Marks, u64)> {
    let a = arena_of(addr)?;
    let n = a.n_blocks.load(Ordering::Acquire);
    // SAFETY: entries below the published length are written and final.
    let blocks = unsafe { std::slice::from_raw_parts(a.blocks.load(Ordering::Relaxed), n) };
    let i = blocks.partition_point(|b| b.cache <= addr).checked_sub(1)?;
    let b = blocks[i];
    let off = addr - b.cache;
    if off >= u64::from(b.len) {
        return None;
    }
    // SAFETY: the block's marks were written before it was published, and
    // the table is never unmapped.
    let marks = unsafe {
        std::slice::from_raw_parts(
            a.marks.load(Ordering::Relaxed).add(b.first_mark as usize),
            b.marks as usize,
        )
    };
    Some((b, marks, off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_addresses_map_to_the_instruction_or_block_start() {
        // An arena of its own (the tables are global; no real code needed).
        let base = 0x7000_0000_0000;
        assert!(add_arena(base, base + ARENA_BYTES as u64));
        let (b1, b2) = (base + 0x100, base + 0x180);
        // b1's third instruction lies below its start: a jump the block
        // followed led back there.
        let below = (-0x20i32) as u32;
        publish(b1, 0x40, 0x40_1000, &[(10, 0), (20, 3), (30, below)], 5);
        publish(b2, 0x20, 0x40_2000, &[], 6);
        assert_eq!(lookup(base + 0x10), None, "the arena's shared routines");
        assert_eq!(
            lookup(b1),
            Some(0x40_1000),
            "counter code before the first copy"
        );
        assert_eq!(lookup(b1 + 10), Some(0x40_1000));
        assert_eq!(lookup(b1 + 19), Some(0x40_1000));
        assert_eq!(lookup(b1 + 20), Some(0x40_1003));
        assert_eq!(lookup(b1 + 0x3f), Some(0x40_0fe0));
        assert_eq!(lookup(b1 + 0x40), None, "alignment padding");
        assert_eq!(
            lookup(b2 + 5),
            Some(0x40_2000),
            "no marks: the block's start"
        );
        assert_eq!(lookup(b2 + 0x20), None);
        assert_eq!(lookup(base + ARENA_BYTES as u64 - 40), None, "an exit stub");
        assert_eq!(lookup(0x1000), None, "outside every arena");
        assert_eq!(
            lookup_exact(b1 + 20),
            Some(0x40_1003),
            "a copy's first byte"
        );
        assert_eq!(lookup_exact(b1 + 10), Some(0x40_1000));
        assert_eq!(lookup_exact(b1 + 21), None, "inside a copy");
        assert_eq!(
            at_mark(b1 + 30),
            Some(AtMark {
                pc: 0x40_0fe0,
                orig: 0x40_1000,
                cache: b1,
                index: 2,
                marks: 3,
                profile: 5
            })
        );
        assert_eq!(lookup_exact(b1), None, "counter code before the first copy");
        assert_eq!(lookup_exact(b2), None, "a block without marks");
        assert_eq!(lookup_exact(base + 0x10), None);
    }
}
