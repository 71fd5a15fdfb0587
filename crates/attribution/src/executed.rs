//! One process's executed code, read back from the files an engine left:
//! the counter file (slot kinds, banks), its code table and its per-bank
//! block counters (`flopscope_counter_file::profile`).
//!
//! An instruction's counts are kept as what its slots counted (a kind and
//! an amount each, in one array for the process), not as a [`Counts`] of
//! maps each: a compiler's process runs a million distinct instructions,
//! and the maps cost their allocations, their memory and their copying.

use flopscope_counter_file::code_view::{self, BlockRef, RecordRef};
use flopscope_counter_file::layout::SlotKind;
use flopscope_counter_file::profile::{self, End, PieceKind, DYNAMIC_COUNTERS};
use flopscope_counter_file::read::{add_slot, CounterFile};
use flopscope_model::started;
use flopscope_model::Counts;
use flopscope_symbols::{Mapping, PerfMap};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// What an instruction's executions counted in one slot kind: `amount` of
/// the process's kind number `kind` ([`Executed::kinds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub kind: u32,
    pub amount: u64,
}

/// An instruction of an executed block, with everything its executions
/// in that block counted: `len` items of [`Executed::items`] from `first`.
#[derive(Debug, Clone, Copy)]
pub struct ExecInsn {
    pub pc: u64,
    pub first: u32,
    pub len: u32,
}

/// A translated block that ran.
#[derive(Debug, Clone)]
pub struct ExecBlock {
    /// The mappings in force when it was translated.
    pub snapshot: usize,
    pub start: u64,
    pub end: End,
    /// Executions of the block.
    pub runs: u64,
    /// Times its conditional branch was taken.
    pub taken: u64,
    /// Whether `taken` is known: false for a conditional branch the engine
    /// counted neither side of (the native engine counts the not-taken side
    /// of backward branches only), `taken` then 0.
    pub split_known: bool,
    /// The rest of a block cut at another block's start (to attribute
    /// parts of a process apart): reached by falling in, never entered at
    /// `start` as a block is.
    pub cut: bool,
    pub insns: Vec<ExecInsn>,
    /// Indexes in `insns` of the instructions a followed jump led to from
    /// the one before (`profile::Insn::jumped`): where the control flow
    /// jumps within the block (the native engine translates on through
    /// unconditional jumps).
    pub jumped: Box<[u32]>,
}

/// One process's executed code.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    /// The process's executable mappings, each snapshot as recorded.
    pub snapshots: Vec<Vec<Mapping>>,
    pub blocks: Vec<ExecBlock>,
    /// The slot kinds items count, each once.
    pub kinds: Arc<Vec<SlotKind>>,
    /// Every instruction's items, shared by the parts a process is cut
    /// into (`split`).
    pub items: Arc<Vec<Item>>,
    /// Attribution data was lost (the engine said so): rows are partial.
    pub lost: bool,
    /// The names the process's JIT compiler gave its generated code (its
    /// perf map), if it wrote one during the run.
    pub jit_names: Option<Arc<PerfMap>>,
}

/// The perf map of the process that counted into `cf`, if it wrote one
/// while it ran: a map older than the process is another's that had its
/// pid before.
fn jit_names(cf: &CounterFile) -> Option<Arc<PerfMap>> {
    let (pid, started_ns) = cf.pid_and_start();
    let path = PerfMap::path_of(pid);
    let written = std::fs::metadata(&path).ok()?.modified().ok()?;
    let since_epoch = written.duration_since(std::time::UNIX_EPOCH).ok()?;
    // File times come from a coarse clock, up to a tick behind.
    const TICK_NS: u128 = 10_000_000;
    if since_epoch.as_nanos() + TICK_NS < u128::from(started_ns) {
        return None;
    }
    PerfMap::read(&path).filter(|m| !m.is_empty()).map(Arc::new)
}

/// Slot kinds numbered as met.
#[derive(Default)]
struct Kinds {
    list: Vec<SlotKind>,
    ids: FxHashMap<SlotKind, u32>,
}

impl Kinds {
    fn id(&mut self, k: SlotKind) -> u32 {
        *self.ids.entry(k).or_insert_with(|| {
            self.list.push(k);
            (self.list.len() - 1) as u32
        })
    }
}

impl Executed {
    /// Reads the executed code of the process that counted into
    /// `counters`; `None` when the engine left no code table (an engine
    /// without attribution, or an older file).
    pub fn read(counters: &Path) -> Result<Option<Executed>, String> {
        Self::read_banks(counters, &|_| true)
    }

    /// [`Executed::read`] counting only the banks whose open regions (by
    /// name) satisfy `keep`: a region's own executed code.
    pub fn read_banks(
        counters: &Path,
        keep: &dyn Fn(&[String]) -> bool,
    ) -> Result<Option<Executed>, String> {
        let code = profile::code_path(counters);
        if !code.exists() {
            return Ok(None);
        }
        let cf = CounterFile::open(counters).map_err(|e| format!("{}: {e}", counters.display()))?;
        let data = map_code(&code).map_err(|e| format!("{}: {e}", code.display()))?;
        let records = code_view::records(&data);
        let banks: Vec<bool> = cf.bank_regions().iter().map(|r| keep(r)).collect();
        let runs = runs(&profile::prof_path(counters), &banks, &records)
            .map_err(|e| format!("{}: {e}", counters.display()))?;
        let mut kinds = Kinds::default();
        let slot_kind: Vec<Option<u32>> = cf
            .slot_kinds()
            .into_iter()
            .map(|k| k.map(|k| kinds.id(k)))
            .collect();
        let dynamic = dynamic_kinds(&mut kinds);
        let mut out = Executed {
            lost: cf.profile_lost(),
            jit_names: jit_names(&cf),
            ..Default::default()
        };
        // The mappings first (a few records): each block's snapshot is the
        // number of them before it, less one.
        let mut maps_before = Vec::with_capacity(records.len());
        for r in &records {
            maps_before.push(out.snapshots.len());
            if let RecordRef::Maps { delta, text } = *r {
                let shift = |a: u64| (a as i64).wrapping_sub(delta) as u64;
                let maps = flopscope_symbols::parse_maps(&String::from_utf8_lossy(text))
                    .into_iter()
                    .map(|m| Mapping {
                        start: shift(m.start),
                        end: shift(m.end),
                        ..m
                    })
                    .collect();
                out.snapshots.push(maps);
            }
        }
        let at = Tables {
            runs: &runs,
            slot_kind: &slot_kind,
            kinds: &kinds.list,
            dynamic: &dynamic,
        };
        let chunks = chunks(&records, CHUNK_THREADS);
        let done: Vec<(Vec<ExecBlock>, Vec<Item>)> = if chunks.len() == 1 {
            vec![blocks_of(&records, &maps_before, 0..records.len(), &at)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunks
                    .into_iter()
                    .map(|c| started::start(s, || blocks_of(&records, &maps_before, c, &at)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("no panic reading blocks"))
                    .collect()
            })
        };
        let mut items = Vec::with_capacity(done.iter().map(|(_, i)| i.len()).sum());
        out.blocks
            .reserve_exact(done.iter().map(|(b, _)| b.len()).sum());
        for (blocks, chunk_items) in done {
            let base = u32::try_from(items.len()).expect("fewer than 2^32 items a process");
            out.blocks.extend(blocks.into_iter().map(|mut b| {
                for i in &mut b.insns {
                    i.first += base;
                }
                b
            }));
            items.extend(chunk_items);
        }
        if out.snapshots.is_empty() {
            out.snapshots.push(Vec::new());
        }
        out.kinds = Arc::new(kinds.list);
        out.items = Arc::new(items);
        Ok(Some(out))
    }

    /// Its executed instructions (those of every block).
    pub fn insns(&self) -> usize {
        self.blocks.iter().map(|b| b.insns.len()).sum()
    }

    /// Adds what instruction `i` (of this process) counted into `c`.
    pub fn add_counts(&self, c: &mut Counts, i: &ExecInsn) {
        add_items(c, &self.items[i.range()], &self.kinds);
    }
}

impl ExecInsn {
    fn range(&self) -> std::ops::Range<usize> {
        self.first as usize..(self.first + self.len) as usize
    }
}

fn add_items(c: &mut Counts, items: &[Item], kinds: &[SlotKind]) {
    for it in items {
        add_slot(c, kinds[it.kind as usize], it.amount);
    }
}

/// Whether a block that never ran counted nothing either: it adds no
/// instructions, accesses or FLOP (as a tally of its instructions would
/// show; such a block is left out).
fn counts_nothing(b: &ExecBlock, items: &[Item], kinds: &[SlotKind]) -> bool {
    b.insns.iter().all(|i| {
        let mut c = Counts::default();
        add_items(&mut c, &items[i.range()], kinds);
        c.instructions == 0 && c.mem_read.is_empty() && c.mem_write.is_empty() && c.flop.is_empty()
    })
}

/// Every counter summed over the banks kept (`banks[b]`).
fn runs(prof: &Path, banks: &[bool], records: &[RecordRef]) -> std::io::Result<Vec<u64>> {
    let mut n = 0u32;
    for r in records {
        match r {
            RecordRef::Block(b) => {
                for p in b.pieces() {
                    n = n.max(p.counter.saturating_add(1));
                }
                for c in [b.taken_counter, b.fall_counter].into_iter().flatten() {
                    n = n.max(c + 1);
                }
            }
            RecordRef::Dynamic { counter, .. } => n = n.max(counter + DYNAMIC_COUNTERS),
            RecordRef::Maps { .. } => {}
        }
    }
    let n = n.min(profile::COUNTERS_PER_BANK);
    let mut total = vec![0u64; n as usize];
    for b in (0..banks.len()).filter(|b| banks[*b]) {
        for (t, v) in total.iter_mut().zip(profile::read_bank(prof, b, n)?) {
            *t += v;
        }
    }
    Ok(total)
}

/// What turns a block's record into counts: every counter's total, the
/// kind of each slot, the kinds, and those of dynamic accesses (by counter
/// offset: reads of 1 to 16 bytes, then writes).
struct Tables<'a> {
    runs: &'a [u64],
    slot_kind: &'a [Option<u32>],
    kinds: &'a [SlotKind],
    dynamic: &'a [u32; DYNAMIC_COUNTERS as usize],
}

/// The kinds of dynamic accesses' counters, numbered in `kinds`.
fn dynamic_kinds(kinds: &mut Kinds) -> [u32; DYNAMIC_COUNTERS as usize] {
    std::array::from_fn(|k| {
        let size = 1u32 << (k % 5);
        kinds.id(if k < 5 {
            SlotKind::MemRead { size }
        } else {
            SlotKind::MemWrite { size }
        })
    })
}

/// Threads reading a large process's blocks: a compiler's cc1 has 220,000,
/// 0.1 s of work on one thread.
const CHUNK_THREADS: usize = 4;

/// Records a thread reads at the least (fewer: one thread reads them all).
const MIN_CHUNK: usize = 20_000;

/// `records` cut into about equal runs of records, one a thread (at most
/// `threads`), each ending just after a block: an instruction's dynamic
/// access record comes just before its block's.
fn chunks(records: &[RecordRef], threads: usize) -> Vec<std::ops::Range<usize>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(threads)
        .min(records.len() / MIN_CHUNK)
        .max(1);
    let mut out = Vec::with_capacity(threads);
    let mut from = 0;
    for t in 1..threads {
        let mut to = (records.len() * t / threads).max(from);
        while to < records.len() && !matches!(records[to - 1], RecordRef::Block(_)) {
            to += 1;
        }
        if to > from {
            out.push(from..to);
            from = to;
        }
    }
    out.push(from..records.len());
    out
}

/// The executed blocks of `records[range]` and their items (numbered from
/// the chunk's first); `maps_before`: the mappings recorded before each.
fn blocks_of(
    records: &[RecordRef],
    maps_before: &[usize],
    range: std::ops::Range<usize>,
    at: &Tables,
) -> (Vec<ExecBlock>, Vec<Item>) {
    // At most a block a record: reserved whole (untouched memory costs
    // nothing), not grown by copying into fresh pages.
    let mut blocks = Vec::with_capacity(range.len());
    let mut items = Vec::new();
    let mut scratch = Vec::new();
    // Dynamic-access instructions are recorded just before the block that
    // holds them (one translation writes both).
    let mut pending: HashMap<u64, u32> = HashMap::new();
    for i in range {
        match &records[i] {
            RecordRef::Maps { .. } => {}
            RecordRef::Dynamic { counter, pc } => {
                pending.insert(*pc, *counter);
            }
            RecordRef::Block(b) => {
                let mark = items.len();
                let mut to = Items {
                    items: &mut items,
                    scratch: &mut scratch,
                };
                let block = exec_block(b, at, &mut to, &mut pending, maps_before[i]);
                pending.clear();
                if block.runs > 0 || !counts_nothing(&block, &items, at.kinds) {
                    blocks.push(block);
                } else {
                    items.truncate(mark);
                }
            }
        }
    }
    (blocks, items)
}

/// Where a block's instructions' items go: the chunk's array, and a
/// scratch list (an instruction's run-time work comes after the block's
/// other instructions, its items must end up beside the instruction's own).
struct Items<'a> {
    items: &'a mut Vec<Item>,
    scratch: &'a mut Vec<(u32, Item)>,
}

fn exec_block(
    b: &BlockRef,
    tables: &Tables,
    at: &mut Items,
    dynamic: &mut HashMap<u64, u32>,
    maps_seen: usize,
) -> ExecBlock {
    let run = |c: u32| tables.runs.get(c as usize).copied().unwrap_or(0);
    // The block's executions: its first piece's, and its copies'.
    let (mut block_runs, mut listed) = (0, 0);
    for (k, p) in b.pieces().enumerate() {
        if k == 0 || p.kind == PieceKind::Copy {
            block_runs += run(p.counter);
        }
        if p.kind != PieceKind::Extra {
            listed += p.len();
        }
    }
    let mut insns: Vec<ExecInsn> = Vec::with_capacity(listed);
    let mut jumped = Vec::new();
    at.scratch.clear();
    for (k, p) in b.pieces().enumerate() {
        let n = match (k, p.kind) {
            (_, PieceKind::Copy) => continue,
            (0, _) => block_runs,
            _ => run(p.counter),
        };
        for i in p.insns() {
            // Run-time work adds to its instruction's counts: the block's
            // instructions stay listed once each, in address order.
            let own = (p.kind == PieceKind::Extra)
                .then(|| insns.iter().position(|x| x.pc == i.pc))
                .flatten();
            let index = own.unwrap_or(insns.len()) as u32;
            for (slot, inc) in i.items() {
                if let Some(Some(kind)) = tables.slot_kind.get(slot as usize) {
                    let amount = u64::from(inc) * n;
                    at.scratch.push((
                        index,
                        Item {
                            kind: *kind,
                            amount,
                        },
                    ));
                }
            }
            if own.is_some() {
                continue;
            }
            // Instructions with run-time accesses are rare: an empty map
            // is not hashed into for every instruction.
            let dynamic_first = if dynamic.is_empty() {
                None
            } else {
                dynamic.remove(&i.pc)
            };
            if let Some(first) = dynamic_first {
                for k in 0..DYNAMIC_COUNTERS {
                    let accesses = run(first + k);
                    if accesses == 0 {
                        continue;
                    }
                    let kind = tables.dynamic[k as usize];
                    at.scratch.push((
                        index,
                        Item {
                            kind,
                            amount: accesses,
                        },
                    ));
                }
            }
            if i.jumped && !insns.is_empty() {
                jumped.push(insns.len() as u32);
            }
            insns.push(ExecInsn {
                pc: i.pc,
                first: 0,
                len: 0,
            });
        }
    }
    // Each instruction's items together, in the order they were met.
    at.scratch.sort_by_key(|&(i, _)| i);
    let mut from = 0;
    for (index, insn) in insns.iter_mut().enumerate() {
        let to = from + at.scratch[from..].partition_point(|&(i, _)| i as usize == index);
        insn.first = u32::try_from(at.items.len()).expect("fewer than 2^32 items a process");
        insn.len = (to - from) as u32;
        at.items
            .extend(at.scratch[from..to].iter().map(|&(_, it)| it));
        from = to;
    }
    let (taken, split_known) = match (b.taken_counter, b.fall_counter) {
        (Some(t), _) => (run(t), true),
        (None, Some(f)) => (block_runs.saturating_sub(run(f)), true),
        (None, None) => (0, !matches!(b.end, End::Cond { .. })),
    };
    ExecBlock {
        snapshot: maps_seen.saturating_sub(1),
        start: b.start,
        end: b.end,
        runs: block_runs,
        taken,
        split_known,
        cut: false,
        insns,
        jumped: jumped.into_boxed_slice(),
    }
}

/// A code table's bytes (an absent file is an empty table), mapped rather
/// than copied: a JIT's start-up leaves some 40 MB of it, read once, and
/// copying it into fresh memory took 33 to 40 ms of Numba's command on one
/// thread, mapping it with its pages populated 6 to 8 ms.
fn map_code(path: &Path) -> std::io::Result<Box<dyn std::ops::Deref<Target = [u8]>>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Box::new(Vec::new())),
        Err(e) => return Err(e),
    };
    if file.metadata()?.len() == 0 {
        return Ok(Box::new(Vec::new()));
    }
    // SAFETY: the engine wrote the file at its process's exit; the job's
    // processes have all ended, and nothing writes it again.
    match unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
        Ok(map) => Ok(Box::new(map)),
        // A file system that cannot map files: read it.
        Err(_) => Ok(Box::new(std::fs::read(path)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flopscope_counter_file::profile::{Block, Insn, Piece};
    use flopscope_model::vocab::{FlopOp, Precision};

    #[test]
    fn run_time_work_and_copies_count_with_their_instructions() {
        let insn = |pc, items: &[(u32, u32)]| Insn {
            pc,
            jumped: false,
            items: items.to_vec(),
        };
        let piece = |counter, kind, insns| Piece {
            counter,
            kind,
            insns,
        };
        // Two instructions run by counter 0 and its copy (counter 2); the
        // second's run-time work (4 FLOP a unit) counted by counter 1.
        let block = Block {
            start: 0x1000,
            end: End::Other,
            taken_counter: None,
            fall_counter: None,
            pieces: vec![
                piece(
                    0,
                    PieceKind::Own,
                    vec![insn(0x1000, &[(0, 1)]), insn(0x1004, &[(0, 1), (1, 1)])],
                ),
                piece(1, PieceKind::Extra, vec![insn(0x1004, &[(2, 4)])]),
                piece(2, PieceKind::Copy, Vec::new()),
            ],
        };
        let mut kinds = Kinds::default();
        let add = SlotKind::Flop {
            precision: Precision::Fp64,
            op: FlopOp::Add,
        };
        let slot_kind =
            [SlotKind::Instructions, SlotKind::MemRead { size: 8 }, add].map(|k| Some(kinds.id(k)));
        let dynamic = dynamic_kinds(&mut kinds);
        let tables = Tables {
            runs: &[10, 3, 5],
            slot_kind: &slot_kind,
            kinds: &kinds.list,
            dynamic: &dynamic,
        };
        let (mut items, mut scratch) = (Vec::new(), Vec::new());
        let mut at = Items {
            items: &mut items,
            scratch: &mut scratch,
        };
        let bytes = profile::Record::Block(block).encode();
        let [RecordRef::Block(view)] = code_view::records(&bytes)[..] else {
            panic!("one block record");
        };
        let b = exec_block(&view, &tables, &mut at, &mut HashMap::new(), 1);
        assert_eq!(b.runs, 15);
        let ex = Executed {
            blocks: vec![b],
            kinds: Arc::new(kinds.list),
            items: Arc::new(items),
            ..Default::default()
        };
        let insns = &ex.blocks[0].insns;
        assert_eq!(
            insns.iter().map(|i| i.pc).collect::<Vec<_>>(),
            [0x1000, 0x1004]
        );
        let counts = |i: &ExecInsn| {
            let mut c = Counts::default();
            ex.add_counts(&mut c, i);
            c
        };
        let (first, second) = (counts(&insns[0]), counts(&insns[1]));
        assert_eq!(first.instructions, 15);
        assert!(first.mem_read.is_empty() && first.flop.is_empty());
        assert_eq!(second.instructions, 15);
        assert_eq!(second.mem_read[&8], 15);
        assert_eq!(second.flop[&(Precision::Fp64, FlopOp::Add)], 12);
    }
}
