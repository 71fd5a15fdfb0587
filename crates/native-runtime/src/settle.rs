//! A block left half-way by a signal handler that returns elsewhere: the
//! program's handler moved the program counter of the context it
//! interrupted (Go's asynchronous preemption pushes a call to its
//! scheduler there; a JVM leaves a safepoint poll for its stub), or the
//! block was invalidated meanwhile; or by a write into the block's own
//! page, which runs again alone (written_code.rs). The interrupted execution ran the
//! block's first `i` instructions (the one it was interrupted before did
//! not run), and whatever runs next counts from there on (the translation
//! of the new address, or of the interrupted instruction, when it resumes
//! there later).
//!
//! What the block's counters hold for that execution depends on where it
//! stopped: the block's counter is bumped at one place in its copy
//! (`BlockProfile::counted_from`), and a one-block loop's only once a round
//! of copies (translate.rs), the unfinished round being added on the way
//! out. [`settle`] makes them hold exactly the `i` instructions that ran:
//! it takes back the execution counted whole, adds the finished copies of
//! the unfinished round, and counts the `i` instructions on a slot of
//! their own (made once per block and `i`, and written to the code table
//! as a block of its own at the same address, falling through to the
//! instruction not run: attribution sees them too).
//!
//! Not settled: run-time counts made just before the interrupted
//! instruction's copy (the active lanes of a masked instruction) stay
//! counted, so a handler that moves the program counter off exactly such an
//! instruction counts its lanes twice; a REP string instruction interrupted
//! between iterations counts its iterations after it ends, so the ones done
//! before such a handler moved off it are not counted; a handler that
//! leaves with `siglongjmp` does not return through the engine.

use crate::cachemap::AtMark;
use crate::dispatch::{gs_word, set_gs_word};
use crate::header;
use crate::slots::Desc;
use crate::translate::BlockProfile;
use crate::translator::Translator;

/// Corrects this thread's counters for the execution interrupted at `at`
/// (see the module's text). Under the translator's lock, on the thread
/// that was interrupted.
pub fn settle(t: &mut Translator, at: &AtMark) {
    let Some((_, p)) = t.profiles.get(at.profile as usize) else {
        return;
    };
    let Some((mut adds, ran)) = corrections(p, t.profile_data.insns(p), at) else {
        return;
    };
    if ran > 0 {
        match prefix_slot(t, at.profile as usize, ran) {
            Some(s) => adds.push((s, 1)),
            None => return,
        }
    }
    for (slot, n) in adds {
        let off = header::counter(slot);
        set_gs_word(off, gs_word(off).wrapping_add(n as u64));
    }
}

/// For the execution of `p`'s block interrupted at `at`: what to add to
/// which of its slots, and how many of its instructions ran (to be
/// counted on their own slot). None where `at` is not one of its
/// instructions.
fn corrections(
    p: &BlockProfile,
    insns: &[(u64, u32, u32)],
    at: &AtMark,
) -> Option<(Vec<(u32, i64)>, usize)> {
    let i = insns.iter().position(|&(pc, _, _)| pc == at.pc)?;
    let bumped = i as u32 >= p.counted_from;
    let mut adds = Vec::with_capacity(3);
    if p.copies.is_empty() {
        if bumped {
            adds.push((p.block_slot, -1));
        }
    } else {
        // A one-block loop: its copies' marks one copy after the other.
        let copies = p.copies.len();
        if at.marks == 0 || !at.marks.is_multiple_of(copies) {
            return None;
        }
        let copy = at.index / (at.marks / copies);
        if copy + 1 == copies && bumped {
            // The round's counter (worth every copy) was bumped.
            adds.push((p.copies[0], -1));
        }
        if copy > 0 {
            adds.push((p.block_slot, copy as i64));
        }
    }
    Some((adds, i))
}

/// The slot of executions of the first `n` instructions of profile
/// `profile`'s block (made at its first use); None when no slot is left.
fn prefix_slot(t: &mut Translator, profile: usize, n: usize) -> Option<u32> {
    let p = &t.profiles[profile].1;
    if let Some(&(_, s)) = p.partial.iter().find(|(k, _)| *k as usize == n) {
        return Some(s);
    }
    if t.slots.descs.len() + 1 >= header::MAX_SLOTS {
        return None;
    }
    let insns = t.profile_data.insns(p);
    let first_pc = insns[0].0;
    let mut d = Desc::default();
    for &insn in &insns[..n] {
        for &(kind, k) in t.profile_data.items(insn) {
            d.add(kind, k);
        }
    }
    t.slots.pc = first_pc;
    let s = t.slots.add(d);
    t.profiles[profile].1.partial.push((n as u32, s));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flopscope_counter_file::profile::End;

    /// A block of `n` instructions at 0x1000 (one byte each), its counter
    /// bumped before instruction `counted_from`, laid out `copies` times
    /// (0: once, no loop).
    fn block(n: u64, counted_from: u32, copies: usize) -> Block {
        let profile = BlockProfile {
            start: 0x1000,
            end: End::Fall { next: 0x1000 + n },
            block_slot: 7,
            copies: vec![9; copies],
            fall_slot: None,
            insns: 0..n as u32,
            dynamic: Vec::new(),
            counted_from,
            partial: Vec::new(),
        };
        (profile, (0..n).map(|k| (0x1000 + k, 0, 0)).collect())
    }

    /// A block's profile and its instructions.
    type Block = (BlockProfile, Vec<(u64, u32, u32)>);

    fn corrections(b: &Block, at: &AtMark) -> Option<(Vec<(u32, i64)>, usize)> {
        super::corrections(&b.0, &b.1, at)
    }

    /// Interrupted at instruction `k` of copy `copy`, `per_copy` marks a copy.
    fn at(k: u64, copy: usize, per_copy: usize, copies: usize) -> AtMark {
        AtMark {
            pc: 0x1000 + k,
            orig: 0x1000,
            cache: 0x7000_0000,
            index: copy * per_copy + k as usize,
            marks: per_copy * copies.max(1),
            profile: 0,
        }
    }

    #[test]
    fn a_block_left_half_way_counts_the_instructions_that_ran() {
        let b = block(4, 2, 0);
        assert_eq!(
            corrections(&b, &at(1, 0, 4, 1)),
            Some((vec![], 1)),
            "before the bump: the first instruction only"
        );
        assert_eq!(
            corrections(&b, &at(2, 0, 4, 1)),
            Some((vec![(7, -1)], 2)),
            "just after the bump: the execution taken back"
        );
        assert_eq!(
            corrections(&block(4, 0, 0), &at(0, 0, 4, 1)),
            Some((vec![(7, -1)], 0)),
            "at its first instruction, counted: nothing ran"
        );
        let mut away = at(1, 0, 4, 1);
        away.pc = 0x2000;
        assert_eq!(corrections(&b, &away), None, "not one of its instructions");
    }

    #[test]
    fn a_loop_left_in_a_round_counts_its_finished_copies() {
        // Three instructions a copy, eight copies, the round's counter
        // bumped before the second instruction of the last copy.
        let b = block(3, 1, 8);
        assert_eq!(corrections(&b, &at(0, 0, 3, 8)), Some((vec![], 0)));
        assert_eq!(
            corrections(&b, &at(2, 5, 3, 8)),
            Some((vec![(7, 5)], 2)),
            "five copies ran, then two instructions of the sixth"
        );
        assert_eq!(
            corrections(&b, &at(0, 7, 3, 8)),
            Some((vec![(7, 7)], 0)),
            "the last copy, before its bump"
        );
        assert_eq!(
            corrections(&b, &at(2, 7, 3, 8)),
            Some((vec![(9, -1), (7, 7)], 2)),
            "the last copy, after its bump: the round taken back"
        );
    }
}
