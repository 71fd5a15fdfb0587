//! Blocks QEMU leaves half-way and runs on from a one-instruction block.
//!
//! A block's counts are added when it starts (one callback per execution:
//! translate.rs). QEMU 7.2 may stop a block at one of its instructions and
//! go on from there with a block of that one instruction, made for the
//! occasion:
//! - a write into the page the running block was translated from (code
//!   that rewrites itself): QEMU invalidates the page's blocks and, the
//!   running one among them, goes on at the write with a block of that
//!   instruction alone (precise self-modifying code), whose next block is
//!   translated from the bytes it left;
//! - an atomic instruction that cannot run in parallel with the other
//!   threads, run alone with them stopped.
//!
//! The block left counted whole ran only its instructions before that one.
//! At the next block's start this module sees it: the previous block of
//! the vCPU holds the new one's start among its instructions, and the new
//! one is a single instruction that writes memory (a block made for any
//! other reason and reached from there would run on to the previous one's
//! end, or start at its end). The previous block's instructions from there
//! on are taken back from the bank, its execution from its counter, and its
//! instructions before there are counted on a counter of their own, written
//! to the code table as a block of their own at the same start, falling
//! through to the instruction run alone (as the native engine settles a
//! block left half-way). Blocks with region markers are not corrected.

use super::bank::bump;
use super::profile::{self as prof, BlockData};
use super::translate::Item;
use flopscope_counter_file::profile::{self, End, Record};
use std::collections::HashMap;
use std::sync::Mutex;

/// A block's instructions, for taking back those it did not run.
pub struct Insns {
    /// Each instruction's address and the end of its items in `items`.
    pcs: Box<[(u64, u32)]>,
    items: Box<[Item]>,
}

impl Insns {
    /// The leaked instruction list of a block, from the code table's view of
    /// its instructions; lives, as callback user data, for the life of QEMU.
    pub fn leak(insns: &[profile::Insn]) -> *const Insns {
        let mut pcs = Vec::with_capacity(insns.len());
        let mut items = Vec::new();
        for i in insns {
            items.extend(i.items.iter().map(|&(slot, inc)| Item { slot, inc }));
            pcs.push((i.pc, items.len() as u32));
        }
        Box::leak(Box::new(Insns {
            pcs: pcs.into(),
            items: items.into(),
        }))
    }

    /// The instruction at `pc` and its items' start, if it is one of the block's.
    fn find(&self, pc: u64) -> Option<(usize, usize)> {
        let k = self.pcs.iter().position(|&(p, _)| p == pc)?;
        let from = k.checked_sub(1).map_or(0, |j| self.pcs[j].1 as usize);
        Some((k, from))
    }
}

/// The counters of blocks' first instructions run alone, by block and
/// number of instructions (made at their first use).
static PREFIXES: Mutex<Option<HashMap<(usize, usize), u32>>> = Mutex::new(None);

/// At the start of block `d` (one that may write: `alone_write`), after
/// block `prev` ran on the same vCPU (counted whole into `bank`): when
/// `prev` was left half-way for `d` (see the module's notes), takes back
/// what it did not run and says so (its branch was not taken either).
pub fn settle(bank: *mut u64, prev: &BlockData, d: &BlockData) -> bool {
    if !d.alone_write || std::ptr::eq(prev, d) || prev.insns.is_null() {
        return false;
    }
    // SAFETY: a leaked Insns, alive for the process.
    let insns = unsafe { &*prev.insns };
    let Some((k, from)) = insns.find(d.start) else {
        return false;
    };
    for it in &insns.items[from..] {
        bump(bank, it.slot, u64::from(it.inc).wrapping_neg());
    }
    let counters = prof::counters_of(bank);
    if !counters.is_null() && prev.counter != prof::NONE {
        bump(counters, prev.counter, u64::MAX);
        if k > 0 {
            prof::count(counters, prefix_counter(prev, insns, k));
        }
    }
    true
}

/// The counter of executions of the first `k` instructions of `block`.
fn prefix_counter(block: &BlockData, insns: &Insns, k: usize) -> u32 {
    let Ok(mut g) = PREFIXES.lock() else {
        return prof::NONE;
    };
    let known = g.get_or_insert_with(HashMap::new);
    if let Some(&c) = known.get(&(block as *const BlockData as usize, k)) {
        return c;
    }
    let counter = prof::counters(1);
    if counter != prof::NONE {
        let mut start = 0;
        let piece_insns = insns.pcs[..k]
            .iter()
            .map(|&(pc, end)| {
                let items = insns.items[start..end as usize]
                    .iter()
                    .map(|it| (it.slot, it.inc))
                    .collect();
                start = end as usize;
                profile::Insn {
                    pc,
                    jumped: false,
                    items,
                }
            })
            .collect();
        prof::write(&Record::Block(profile::Block {
            start: block.start,
            end: End::Fall {
                next: insns.pcs[k].0,
            },
            taken_counter: None,
            fall_counter: None,
            pieces: vec![profile::Piece {
                counter,
                kind: profile::PieceKind::Own,
                insns: piece_insns,
            }],
        }));
    }
    known.insert((block as *const BlockData as usize, k), counter);
    counter
}
