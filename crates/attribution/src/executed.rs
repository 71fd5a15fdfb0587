//! One process's executed code, read back from the files an engine left:
//! the counter file (slot kinds, banks), its code table and its per-bank
//! block counters (`flopscope_counter_file::profile`).

use flopscope_counter_file::layout::SlotKind;
use flopscope_counter_file::profile::{self, End, PieceKind, Record, DYNAMIC_COUNTERS};
use flopscope_counter_file::read::{add_slot, CounterFile};
use flopscope_model::Counts;
use flopscope_symbols::Mapping;
use std::collections::HashMap;
use std::path::Path;

/// An instruction of an executed block, with everything its executions
/// in that block counted.
#[derive(Debug, Clone)]
pub struct ExecInsn {
    pub pc: u64,
    pub counts: Counts,
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
    /// The rest of a block cut at another block's start (to attribute
    /// parts of a process apart): reached by falling in, never entered at
    /// `start` as a block is.
    pub cut: bool,
    pub insns: Vec<ExecInsn>,
}

/// One process's executed code.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    /// The process's executable mappings, each snapshot as recorded.
    pub snapshots: Vec<Vec<Mapping>>,
    pub blocks: Vec<ExecBlock>,
    /// Attribution data was lost (the engine said so): rows are partial.
    pub lost: bool,
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
        let records =
            profile::read_records(&code).map_err(|e| format!("{}: {e}", code.display()))?;
        let banks: Vec<bool> = cf.bank_regions().iter().map(|r| keep(r)).collect();
        let runs = runs(&profile::prof_path(counters), &banks, &records)
            .map_err(|e| format!("{}: {e}", counters.display()))?;
        let kinds = cf.slot_kinds();
        let mut out = Executed {
            lost: cf.profile_lost(),
            ..Default::default()
        };
        // Dynamic-access instructions are recorded just before the block
        // that holds them (one translation writes both).
        let mut pending: HashMap<u64, u32> = HashMap::new();
        for r in records {
            match r {
                Record::Maps { delta, text } => {
                    let shift = |a: u64| (a as i64).wrapping_sub(delta) as u64;
                    let maps = flopscope_symbols::parse_maps(&text)
                        .into_iter()
                        .map(|m| Mapping {
                            start: shift(m.start),
                            end: shift(m.end),
                            ..m
                        })
                        .collect();
                    out.snapshots.push(maps);
                }
                Record::Dynamic { counter, pc } => {
                    pending.insert(pc, counter);
                }
                Record::Block(b) => {
                    let block = exec_block(&b, &runs, &kinds, &mut pending, out.snapshots.len());
                    pending.clear();
                    if block.runs > 0 || block.insns.iter().any(|i| !is_empty(&i.counts)) {
                        out.blocks.push(block);
                    }
                }
            }
        }
        if out.snapshots.is_empty() {
            out.snapshots.push(Vec::new());
        }
        Ok(Some(out))
    }
}

fn is_empty(c: &Counts) -> bool {
    c.instructions == 0 && c.mem_read.is_empty() && c.mem_write.is_empty() && c.flop.is_empty()
}

/// Every counter summed over the banks kept (`banks[b]`).
fn runs(prof: &Path, banks: &[bool], records: &[Record]) -> std::io::Result<Vec<u64>> {
    let mut n = 0u32;
    for r in records {
        match r {
            Record::Block(b) => {
                for p in &b.pieces {
                    n = n.max(p.counter.saturating_add(1));
                }
                for c in [b.taken_counter, b.fall_counter].into_iter().flatten() {
                    n = n.max(c + 1);
                }
            }
            Record::Dynamic { counter, .. } => n = n.max(counter + DYNAMIC_COUNTERS),
            Record::Maps { .. } => {}
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

fn exec_block(
    b: &profile::Block,
    runs: &[u64],
    kinds: &[Option<SlotKind>],
    dynamic: &mut HashMap<u64, u32>,
    maps_seen: usize,
) -> ExecBlock {
    let run = |c: u32| runs.get(c as usize).copied().unwrap_or(0);
    let add_items = |counts: &mut Counts, items: &[(u32, u32)], n: u64| {
        for (slot, inc) in items {
            if let Some(Some(kind)) = kinds.get(*slot as usize) {
                add_slot(counts, *kind, u64::from(*inc) * n);
            }
        }
    };
    // The block's executions: its first piece's, and its copies'.
    let copies: u64 = b
        .pieces
        .iter()
        .filter(|p| p.kind == PieceKind::Copy)
        .map(|p| run(p.counter))
        .sum();
    let block_runs = b.pieces.first().map(|p| run(p.counter)).unwrap_or(0) + copies;
    let mut insns: Vec<ExecInsn> = Vec::new();
    for (k, p) in b.pieces.iter().enumerate() {
        let n = match (k, p.kind) {
            (_, PieceKind::Copy) => continue,
            (0, _) => block_runs,
            _ => run(p.counter),
        };
        for i in &p.insns {
            let mut counts = Counts::default();
            add_items(&mut counts, &i.items, n);
            // Run-time work adds to its instruction's counts: the block's
            // instructions stay listed once each, in address order.
            let own = (p.kind == PieceKind::Extra)
                .then(|| insns.iter_mut().find(|x| x.pc == i.pc))
                .flatten();
            if let Some(own) = own {
                own.counts.merge(&counts);
                continue;
            }
            if let Some(first) = dynamic.remove(&i.pc) {
                for k in 0..DYNAMIC_COUNTERS {
                    let accesses = run(first + k);
                    if accesses == 0 {
                        continue;
                    }
                    let size = 1u32 << (k % 5);
                    let map = if k < 5 {
                        &mut counts.mem_read
                    } else {
                        &mut counts.mem_write
                    };
                    *map.entry(size).or_default() += accesses;
                }
            }
            insns.push(ExecInsn { pc: i.pc, counts });
        }
    }
    let taken = match (b.taken_counter, b.fall_counter) {
        (Some(t), _) => run(t),
        (None, Some(f)) => block_runs.saturating_sub(run(f)),
        (None, None) => 0,
    };
    ExecBlock {
        snapshot: maps_seen.saturating_sub(1),
        start: b.start,
        end: b.end,
        runs: block_runs,
        taken,
        cut: false,
        insns,
    }
}
