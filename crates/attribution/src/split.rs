//! One large process image attributed on several threads: its executed
//! blocks cut into parts at machine-function boundaries, each part
//! attributed by the next free thread (each thread with a symbolizer of
//! its own), the parts merged.
//!
//! A machine function's blocks stay in one part, so its control flow (its
//! loops, their entries and iterations) is whole there; functions and lines
//! are keyed by name, so a source function or line met in two parts (an
//! inlined function, a header's line) sums across them as it would in one
//! pass. The rows are those of [`Attribution::of`] over the whole image.
//! A compiler's cc1 spends about two seconds in that pass on one thread.

use crate::executed::ExecBlock;
use crate::parallel::largest_first;
use crate::place;
use crate::tally::Sampled;
use crate::{Attribution, Executed};
use flopscope_counter_file::profile::End;
use flopscope_model::started;
use flopscope_symbols::{Mapping, Symbolizer};
use rustc_hash::FxHashMap;

/// Executed instructions below which one thread does it all: a thread and
/// a second symbolizer (which reads its modules' tables again) cost more
/// than the split saves on a small image.
pub const MIN_INSNS: usize = 50_000;

/// Where code is, the same in every snapshot that maps it: its module's
/// rank among the process's module names and the offset in its file, or
/// ([`Modules::anonymous`], the address) outside every file. Ranks follow
/// the names, so keys order as one pass orders loops (by module name, then
/// address), and the parts' loops, concatenated, are in that order.
type Key = (u32, u64);

/// Every snapshot's mappings by start, each with its module's rank: a
/// block's key is a binary search and two integers, not a scan of the
/// snapshot and a comparison of names (a JIT's start-up: 250,000 blocks,
/// 3,900 mappings over its snapshots).
struct Modules {
    /// Per snapshot, by start.
    by_start: Vec<Vec<Span>>,
    anonymous: u32,
}

impl Modules {
    fn new(ex: &Executed) -> Modules {
        let name = |m: &Mapping| m.path.to_string_lossy().into_owned();
        let mut names: Vec<String> = ex.snapshots.iter().flatten().map(name).collect();
        names.push(place::ANONYMOUS.to_owned());
        names.sort_unstable();
        names.dedup();
        let rank = |n: &str| names.partition_point(|x| x.as_str() < n) as u32;
        let by_start = ex
            .snapshots
            .iter()
            .map(|maps| {
                let mut v: Vec<_> = maps
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.start, m.end, m.file_offset, rank(&name(m)), i))
                    .collect();
                v.sort_unstable_by_key(|e| e.0);
                v
            })
            .collect();
        Modules {
            by_start,
            anonymous: rank(place::ANONYMOUS),
        }
    }

    /// How many of `snapshot`'s mappings start at or below `pc`.
    fn below(&self, snapshot: usize, pc: u64) -> usize {
        self.by_start
            .get(snapshot)
            .map_or(0, |maps| maps.partition_point(|e| e.0 <= pc))
    }

    /// The key of `pc` in `snapshot`, and the index of the mapping
    /// holding it.
    fn key(&self, snapshot: usize, pc: u64) -> (Key, Option<usize>) {
        let found = self.below(snapshot, pc).checked_sub(1).and_then(|i| {
            let e = self.by_start[snapshot][i];
            (pc < e.1).then_some(e)
        });
        match found {
            Some((start, _, offset, rank, i)) => ((rank, pc - start + offset), Some(i)),
            None => ((self.anonymous, pc), None),
        }
    }

    /// Whether the keys of `snapshot`'s addresses from `a` to `b` go up
    /// with them: both in one mapping, or both outside every mapping with
    /// none starting between.
    fn ordered(&self, snapshot: usize, a: u64, b: u64) -> bool {
        let (na, nb) = (self.below(snapshot, a), self.below(snapshot, b));
        let inside = |n: usize, pc: u64| n > 0 && pc < self.by_start[snapshot][n - 1].1;
        na == nb && inside(na, a) == inside(nb, b)
    }
}

/// A mapping as [`Modules`] keeps it: start, end, the offset of `start`
/// in its file, its module's rank, and its index in the snapshot.
type Span = (u64, u64, u64, u32, usize);

/// The parts' key ranges: part p holds the keys from `firsts[p - 1]` on,
/// below `firsts[p]`.
struct Parts {
    firsts: Vec<Key>,
}

impl Parts {
    fn of(&self, key: Key) -> usize {
        self.firsts.partition_point(|&f| f <= key)
    }
}

/// Parts a thread: taken one after the other by whichever thread is free,
/// they even out what parts of equal instruction counts cost apart.
pub const PARTS_A_THREAD: usize = 8;

/// [`Attribution::of`] on `threads` threads (one pass, on this thread,
/// below [`MIN_INSNS`] instructions), in [`PARTS_A_THREAD`] parts a thread;
/// `forced`: in exactly `threads` parts, on as many threads as there are
/// cores. `symbolizer` serves this thread's parts, the other threads get
/// their own.
pub fn attribute(
    ex: Executed,
    sampled: Option<&Sampled>,
    symbolizer: &mut Symbolizer,
    threads: usize,
    forced: bool,
) -> Attribution {
    let insns = ex.insns();
    if threads <= 1 || (!forced && insns < MIN_INSNS) {
        return Attribution::of(&ex, sampled, symbolizer);
    }
    let (parts, threads) = if forced {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (threads, threads.min(cores))
    } else {
        (threads * PARTS_A_THREAD, threads)
    };
    // No more parts than blocks (a part per function at most, in the end).
    let parts = parts.min(ex.blocks.len());
    let modules = Modules::new(&ex);
    let (part_of, key_ranges) = assign(&ex, &modules, symbolizer, parts, insns);
    let starts: FxHashMap<(usize, u64), usize> = ex
        .blocks
        .iter()
        .zip(&part_of)
        .map(|(b, &part)| ((b.snapshot, b.start), part))
        .collect();
    let used = part_of.iter().max().map_or(1, |m| m + 1);
    let Executed {
        snapshots,
        blocks,
        kinds,
        items,
        lost,
        jit_names,
    } = ex;
    // Cut on two threads, each half of the blocks in order, the halves
    // then joined in order: each part's blocks in the order of one pass.
    let cut = |blocks: Vec<ExecBlock>, part_of: &[usize]| {
        let mut out: Vec<Vec<ExecBlock>> = (0..used).map(|_| Vec::new()).collect();
        for (b, &part) in blocks.into_iter().zip(part_of) {
            cut_at_other_parts(b, part, &starts, &modules, &key_ranges, &mut out);
        }
        out
    };
    let mut first = blocks;
    let half = first.len() / 2;
    let second = first.split_off(half);
    let (mut out, rest) = std::thread::scope(|s| {
        let rest = started::start(s, || cut(second, &part_of[half..]));
        (
            cut(first, &part_of[..half]),
            rest.join().expect("a cutting thread panicked"),
        )
    });
    for (blocks, more) in out.iter_mut().zip(rest) {
        blocks.extend(more);
    }
    let mut pieces: Vec<Executed> = out
        .into_iter()
        .map(|blocks| Executed {
            snapshots: snapshots.clone(),
            blocks,
            kinds: kinds.clone(),
            items: items.clone(),
            lost,
            jit_names: jit_names.clone(),
        })
        .collect();
    pieces.retain(|p| !p.blocks.is_empty());
    // The largest parts first, each taken by the next free thread: parts
    // of equal instruction counts do not cost the same (code with DWARF
    // costs more an address than code with a symbol table only).
    let sizes: Vec<u64> = pieces.iter().map(|p| p.insns() as u64).collect();
    let mut parts = largest_first(&sizes, threads, symbolizer, |i, symbolizer| {
        Attribution::of(&pieces[i], sampled, symbolizer)
    })
    .into_iter();
    let mut out = parts.next().expect("a part with blocks");
    for a in parts {
        out.merge(a);
    }
    out
}

/// `b` (of part `part`) cut where a block of another part starts (its
/// snapshot's `starts`), each piece pushed to the part of the block
/// starting there in `out`: one pass cuts a block at every other block's
/// start it holds (`segments`: code falling into a loop header, or from one
/// function into the next), so each part must hold the pieces from its own
/// blocks' starts on. A piece after a cut is `cut`: reached by falling in,
/// not entered at its start.
fn cut_at_other_parts(
    b: ExecBlock,
    part: usize,
    starts: &FxHashMap<(usize, u64), usize>,
    modules: &Modules,
    parts: &Parts,
    out: &mut [Vec<ExecBlock>],
) {
    // A block whose instructions' keys go up from its own to its last's,
    // all in its part, holds no other part's block start: most blocks, met
    // without a look-up an instruction.
    let last = b.insns.last().map_or(b.start, |i| i.pc);
    if modules.ordered(b.snapshot, b.start, last)
        && parts.of(modules.key(b.snapshot, last).0) == part
    {
        out[part].push(b);
        return;
    }
    let at = |pc: u64| starts.get(&(b.snapshot, pc)).copied();
    let mut cuts = Vec::new();
    let mut current = part;
    for (k, i) in b.insns.iter().enumerate().skip(1) {
        if let Some(p) = at(i.pc).filter(|&p| p != current) {
            cuts.push((k, p));
            current = p;
        }
    }
    let ExecBlock {
        snapshot,
        start,
        end,
        runs,
        taken,
        split_known,
        cut,
        mut insns,
        jumped,
    } = b;
    // From the last cut back, so that each split leaves the earlier part.
    let mut tail_end = (end, taken, split_known);
    // Each part's share of the followed jumps, as indexes of its own.
    let jumps_in = |from: usize, to: usize| -> Box<[u32]> {
        let within = jumped
            .iter()
            .filter(|&&j| (from + 1..to).contains(&(j as usize)));
        within.map(|&j| j - from as u32).collect()
    };
    let mut to = insns.len();
    for &(k, p) in cuts.iter().rev() {
        let rest = insns.split_off(k);
        let next = rest[0].pc;
        out[p].push(ExecBlock {
            snapshot,
            start: next,
            end: tail_end.0,
            runs,
            taken: tail_end.1,
            split_known: tail_end.2,
            cut: true,
            insns: rest,
            jumped: jumps_in(k, to),
        });
        to = k;
        tail_end = (End::Fall { next }, 0, true);
    }
    out[part].push(ExecBlock {
        snapshot,
        start,
        end: tail_end.0,
        runs,
        taken: tail_end.1,
        split_known: tail_end.2,
        cut,
        jumped: jumps_in(0, to),
        insns,
    });
}

/// Each block's part, and the parts' key ranges: blocks ordered by where
/// they are, cut into runs of about equal instruction counts, each cut
/// moved back to the start of the machine function holding the block there
/// (its control flow stays in one part).
fn assign(
    ex: &Executed,
    modules: &Modules,
    symbolizer: &mut Symbolizer,
    parts: usize,
    insns: usize,
) -> (Vec<usize>, Parts) {
    let keys: Vec<Key> = ex
        .blocks
        .iter()
        .map(|b| modules.key(b.snapshot, b.start).0)
        .collect();
    let mut order: Vec<usize> = (0..ex.blocks.len()).collect();
    order.sort_unstable_by_key(|&i| keys[i]);
    // Positions in `order` where parts 1.. begin.
    let mut cuts: Vec<usize> = Vec::with_capacity(parts - 1);
    let mut done = 0;
    for &i in &order {
        if cuts.len() + 1 < parts && done * parts >= insns * (cuts.len() + 1) {
            let start = function_start(ex, modules, i, symbolizer);
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
    // Equal keys are in one part (a cut is where keys reach a function's
    // start): part p's keys are those from its first block's on.
    let firsts = cuts.iter().map(|&c| keys[order[c]]).collect();
    (part_of, Parts { firsts })
}

/// Where the machine function holding block `i` starts ([`Key`]): its
/// symbol's start, or for code outside every file its perf map entry's or
/// its page's (see `place`).
fn function_start(ex: &Executed, modules: &Modules, i: usize, symbolizer: &mut Symbolizer) -> Key {
    let b = &ex.blocks[i];
    let ((module, _), Some(m)) = modules.key(b.snapshot, b.start) else {
        let named = ex.jit_names.as_ref().and_then(|j| j.lookup(b.start));
        return (modules.anonymous, place::anonymous_start(named, b.start));
    };
    let m = &ex.snapshots[b.snapshot][m];
    let start = symbolizer.locate(m, b.start).symbol.start;
    let start = if m.contains(start) && start <= b.start {
        start
    } else {
        b.start
    };
    (module, start - m.start + m.file_offset)
}
