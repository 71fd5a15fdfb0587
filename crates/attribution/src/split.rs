//! One large process image attributed on several threads: its executed
//! blocks cut into parts at machine-function boundaries, each part
//! attributed with a symbolizer of its own, the parts merged.
//!
//! A machine function's blocks stay in one part, so its control flow (its
//! loops, their entries and iterations) is whole there; functions and lines
//! are keyed by name, so a source function or line met in two parts (an
//! inlined function, a header's line) sums across them as it would in one
//! pass. The rows are those of [`Attribution::of`] over the whole image.
//! A compiler's cc1 spends about two seconds in that pass on one thread.

use crate::executed::ExecBlock;
use crate::place;
use crate::tally::Sampled;
use crate::{Attribution, Executed};
use flopscope_counter_file::profile::End;
use flopscope_symbols::{Mapping, Symbolizer};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// Executed instructions below which one thread does it all: a thread and
/// a second symbolizer (which reads its modules' tables again) cost more
/// than the split saves on a small image.
pub const MIN_INSNS: usize = 50_000;

/// Where code is, the same in every snapshot that maps it: its module's
/// name and the offset in its file, or ("[anonymous]", the address) outside
/// every file. Ordered as one pass orders loops (by module name, then
/// address), so that the parts' loops, concatenated, are in that order.
type Key<'a> = (Cow<'a, str>, u64);

fn key<'a>(ex: &'a Executed, snapshot: usize, pc: u64) -> (Key<'a>, Option<&'a Mapping>) {
    let map = ex
        .snapshots
        .get(snapshot)
        .and_then(|maps| maps.iter().find(|m| m.contains(pc)));
    match map {
        Some(m) => (
            (m.path.to_string_lossy(), pc - m.start + m.file_offset),
            Some(m),
        ),
        None => ((Cow::Borrowed(place::ANONYMOUS), pc), None),
    }
}

/// [`Attribution::of`] in `parts` parts on as many threads (one part, on
/// this thread, below [`MIN_INSNS`] unless `forced`); `symbolizer` serves
/// the first part, the others get their own.
pub fn attribute(
    ex: Executed,
    sampled: Option<&Sampled>,
    symbolizer: &mut Symbolizer,
    parts: usize,
    forced: bool,
) -> Attribution {
    let insns: usize = ex.blocks.iter().map(|b| b.insns.len()).sum();
    // No more parts than blocks (a part per function at most, in the end).
    let parts = parts.min(ex.blocks.len());
    if parts <= 1 || (!forced && insns < MIN_INSNS) {
        return Attribution::of(&ex, sampled, symbolizer);
    }
    let part_of = assign(&ex, symbolizer, parts, insns);
    let starts: FxHashMap<(usize, u64), usize> = ex
        .blocks
        .iter()
        .zip(&part_of)
        .map(|(b, &part)| ((b.snapshot, b.start), part))
        .collect();
    let Executed {
        snapshots,
        blocks,
        kinds,
        items,
        lost,
    } = ex;
    let used = part_of.iter().max().map_or(1, |m| m + 1);
    let mut pieces: Vec<Executed> = (0..used)
        .map(|_| Executed {
            snapshots: snapshots.clone(),
            blocks: Vec::new(),
            kinds: kinds.clone(),
            items: items.clone(),
            lost,
        })
        .collect();
    for (b, part) in blocks.into_iter().zip(part_of) {
        for (part, piece) in cut_at_other_parts(b, part, &starts) {
            pieces[part].blocks.push(piece);
        }
    }
    pieces.retain(|p| !p.blocks.is_empty());
    let rest = pieces.split_off(1);
    let first = pieces.pop().expect("a part with blocks");
    std::thread::scope(|s| {
        let others: Vec<_> = rest
            .into_iter()
            .map(|p| s.spawn(move || Attribution::of(&p, sampled, &mut Symbolizer::asked_once())))
            .collect();
        let mut out = Attribution::of(&first, sampled, symbolizer);
        for h in others {
            out.merge(h.join().expect("an attribution thread panicked"));
        }
        out
    })
}

/// `b` (of part `part`) cut where a block of another part starts (its
/// snapshot's `starts`), each piece in the part of the block starting there:
/// one pass cuts a block at every other block's start it holds (`segments`:
/// code falling into a loop header, or from one function into the next), so
/// each part must hold the pieces from its own blocks' starts on. A piece
/// after a cut is `cut`: reached by falling in, not entered at its start.
fn cut_at_other_parts(
    b: ExecBlock,
    part: usize,
    starts: &FxHashMap<(usize, u64), usize>,
) -> Vec<(usize, ExecBlock)> {
    let at = |pc: u64| starts.get(&(b.snapshot, pc)).copied();
    let mut cuts = Vec::new();
    let mut current = part;
    for (k, i) in b.insns.iter().enumerate().skip(1) {
        if let Some(p) = at(i.pc).filter(|&p| p != current) {
            cuts.push((k, p));
            current = p;
        }
    }
    if cuts.is_empty() {
        return vec![(part, b)];
    }
    let ExecBlock {
        snapshot,
        start,
        end,
        runs,
        taken,
        cut,
        mut insns,
    } = b;
    let mut out = Vec::with_capacity(cuts.len() + 1);
    // From the last cut back, so that each split leaves the earlier part.
    let mut tail_end = (end, taken);
    for &(k, p) in cuts.iter().rev() {
        let rest = insns.split_off(k);
        let next = rest[0].pc;
        out.push((
            p,
            ExecBlock {
                snapshot,
                start: next,
                end: tail_end.0,
                runs,
                taken: tail_end.1,
                cut: true,
                insns: rest,
            },
        ));
        tail_end = (End::Fall { next }, 0);
    }
    out.push((
        part,
        ExecBlock {
            snapshot,
            start,
            end: tail_end.0,
            runs,
            taken: tail_end.1,
            cut,
            insns,
        },
    ));
    out
}

/// Each block's part: blocks ordered by where they are, cut into runs of
/// about equal instruction counts, each cut moved back to the start of the
/// machine function holding the block there (its control flow stays in one
/// part).
fn assign(ex: &Executed, symbolizer: &mut Symbolizer, parts: usize, insns: usize) -> Vec<usize> {
    let keys: Vec<Key> = ex
        .blocks
        .iter()
        .map(|b| key(ex, b.snapshot, b.start).0)
        .collect();
    let mut order: Vec<usize> = (0..ex.blocks.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    // Positions in `order` where parts 1.. begin.
    let mut cuts: Vec<usize> = Vec::with_capacity(parts - 1);
    let mut done = 0;
    for &i in &order {
        if cuts.len() + 1 < parts && done * parts >= insns * (cuts.len() + 1) {
            let start = function_start(ex, i, symbolizer);
            let at = order.partition_point(|&j| keys[j] < start);
            if at > 0 && cuts.last().is_none_or(|&c| at > c) {
                cuts.push(at);
            }
        }
        done += ex.blocks[i].insns.len();
    }
    let mut part_of = vec![0; ex.blocks.len()];
    for (pos, &i) in order.iter().enumerate() {
        part_of[i] = cuts.partition_point(|&c| c <= pos);
    }
    part_of
}

/// Where the machine function holding block `i` starts ([`Key`]): its
/// symbol's start, or the page's for code outside every file (named by
/// page, see `place`).
fn function_start<'a>(ex: &'a Executed, i: usize, symbolizer: &mut Symbolizer) -> Key<'a> {
    let b = &ex.blocks[i];
    let ((module, _), Some(m)) = key(ex, b.snapshot, b.start) else {
        return (Cow::Borrowed(place::ANONYMOUS), b.start & !0xfff);
    };
    let start = symbolizer.locate(m, b.start).symbol.start;
    let start = if m.contains(start) && start <= b.start {
        start
    } else {
        b.start
    };
    (module, start - m.start + m.file_offset)
}
