//! Blocks QEMU leaves half-way.
//!
//! A block's counts are added when it starts (one callback per execution:
//! translate.rs). QEMU 7.2 may stop a block at one of its instructions and
//! go on from there:
//! - a write into the page the running block was translated from (code
//!   that rewrites itself): QEMU invalidates the page's blocks and, the
//!   running one among them, goes on at the write with a block of that
//!   instruction alone (precise self-modifying code), whose next block is
//!   translated from the bytes it left;
//! - an atomic instruction that cannot run in parallel with the other
//!   threads (one at an odd address): QEMU leaves the block there, and runs
//!   the instruction alone with the other threads stopped; while another
//!   thread holds that exclusive turn, it may first enter the block
//!   starting at the atomic again, and leave it again, several times.
//!
//! The block left counted whole ran only its instructions before that one.
//! At the next block's start this module sees it, from the previous block
//! the vCPU ran, when the new one starts with an instruction that may write
//! memory (where QEMU left the block before), at one of the previous one's
//! instructions, and either
//! - is a single instruction that writes memory (what QEMU runs alone: a
//!   block made for any other reason and started there would run on to the
//!   previous one's end), or
//! - is not where the previous one goes when it runs to its end (its
//!   fall-through, direct branch or call target; not known after an
//!   indirect branch, a return or a system call, which are left alone):
//!   the block itself entered again at its start counts as left there.
//!
//! The previous block's instructions are decoded again from the program's
//! memory (unchanged: the next block has not run yet, and the write that
//! rewrites code is its first instruction), those from there on are taken
//! back from the bank, its execution from its counter, and its
//! instructions before there are counted on a counter of their own,
//! written to the code table as a block of their own at the same start,
//! falling through to the instruction where it was left (as the native
//! engine settles a block left half-way). Nothing is kept per block for
//! this but its length and flags: blocks are left half-way rarely. Blocks
//! with region markers are not corrected.

use super::bank::bump;
use super::profile::{self as prof, BlockData};
use flopscope_counter_file::profile::{self, End, Record};
use std::collections::HashMap;
use std::sync::Mutex;

/// The counters of blocks' first instructions run alone, by block and
/// number of instructions (made at their first use).
static PREFIXES: Mutex<Option<HashMap<(usize, usize), u32>>> = Mutex::new(None);

/// At the start of block `d`, after block `prev` ran on the same vCPU
/// (counted whole into `bank`): when `prev` was left half-way for `d` (see
/// the module's notes), takes back what it did not run and says so (its
/// branch was not taken either). The usual cases, `d` outside `prev` or
/// where `prev` branches to, cost a comparison or two.
#[inline(always)]
pub fn left_half_way(bank: *mut u64, prev: &BlockData, d: &BlockData) -> bool {
    if d.start.wrapping_sub(prev.start) >= u64::from(prev.len)
        || (d.start == prev.taken && d.flags & prof::ALONE_WRITE == 0)
    {
        return false;
    }
    settle(bank, prev, d)
}

/// [`left_half_way`] once `d` starts inside `prev`, not where `prev`
/// branches to unless `d` may be an instruction run alone.
#[cold]
fn settle(bank: *mut u64, prev: &BlockData, d: &BlockData) -> bool {
    if prev.flags & prof::MARKED != 0
        || (d.flags & prof::ALONE_WRITE == 0 && prev.flags & prof::GOES_UNSEEN != 0)
    {
        return false;
    }
    let insns = super::translate::instructions(prev.start, prev.len);
    let Some(k) = insns.iter().position(|i| i.pc == d.start) else {
        return false;
    };
    for i in &insns[k..] {
        for &(slot, inc) in &i.items {
            bump(bank, slot, u64::from(inc).wrapping_neg());
        }
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

/// The counter of executions of the first `k` of `insns`, the instructions
/// of `block`.
fn prefix_counter(block: &BlockData, mut insns: Vec<profile::Insn>, k: usize) -> u32 {
    let Ok(mut g) = PREFIXES.lock() else {
        return prof::NONE;
    };
    let known = g.get_or_insert_with(HashMap::new);
    let key = (block as *const BlockData as usize, k);
    if let Some(&c) = known.get(&key) {
        return c;
    }
    let counter = prof::counters(1);
    if counter != prof::NONE {
        let next = insns[k].pc;
        insns.truncate(k);
        prof::write(&Record::Block(profile::Block {
            start: block.start,
            end: End::Fall { next },
            taken_counter: None,
            fall_counter: None,
            pieces: vec![profile::Piece {
                counter,
                kind: profile::PieceKind::Own,
                insns,
            }],
        }));
    }
    known.insert(key, counter);
    counter
}
