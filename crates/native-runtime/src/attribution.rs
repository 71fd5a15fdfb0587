//! The attribution files beside this process's counter file, written at
//! each flush (`flopscope_counter_file::profile` lays them out): the code
//! table (every block translated, with its instructions' static counts, how
//! it ends, and its slots) and each bank's slot counters, so that the CLI
//! attributes the counts to functions, loops and lines.
//!
//! A block's slot counts its executions; the other copies of a one-block
//! loop are [`PieceKind::Copy`] pieces; each slot of run-time work (active
//! lanes, elements, REP iterations) is a [`PieceKind::Extra`] piece of the
//! instruction it was made for; a conditional branch's not-taken slot gives
//! the taken count (executions minus not taken); the executions of a
//! block's first instructions only (`BlockProfile::partial`: a signal
//! handler left the block half-way, settle.rs) are a block of their own at
//! the same address, falling through to the instruction not run.

use crate::translator::Translator;
use flopscope_counter_file::layout::SlotKind;
use flopscope_counter_file::profile::{
    self, Block, CodeWriter, Insn, Piece, PieceKind, Record, BANK_STRIDE,
};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::Path;

/// Whether attribution is on (`flopscope count --no-attribution` turns it
/// off: no not-taken counters, no files).
pub fn enabled() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static ON: AtomicU8 = AtomicU8::new(2);
    match ON.load(Ordering::Relaxed) {
        2 => {
            let on = std::env::var_os(profile::OFF_ENV).is_none();
            ON.store(on as u8, Ordering::Relaxed);
            on
        }
        v => v == 1,
    }
}

/// Writes the code table of `t` and the counters of `banks` (in the order
/// the flush wrote the banks) beside counter file `counters`. `index` maps
/// slot kinds to the counter file's slots (kinds it lacks counted nothing).
/// Returns false if a file could not be written.
pub fn write<S: BuildHasher>(
    counters: &str,
    t: &Translator,
    index: &HashMap<SlotKind, usize, S>,
    banks: &[&[u64]],
) -> bool {
    if !enabled() {
        return true;
    }
    let path = Path::new(counters);
    write_code(path, t, index, banks).is_ok() && write_banks(path, banks).is_ok()
}

fn write_code<S: BuildHasher>(
    path: &Path,
    t: &Translator,
    index: &HashMap<SlotKind, usize, S>,
    banks: &[&[u64]],
) -> std::io::Result<()> {
    let ran = |slot: u32| {
        banks
            .iter()
            .any(|b| b.get(slot as usize).is_some_and(|c| *c != 0))
    };
    let items = |d: &[(SlotKind, u64)]| -> Vec<(u32, u32)> {
        d.iter()
            .filter_map(|(k, n)| Some((*index.get(k)? as u32, u32::try_from(*n).ok()?)))
            .collect()
    };
    let mut w = CodeWriter::open(&profile::code_path(path), false)?;
    let texts = crate::codemap::snapshots();
    let n = texts.len().max(1);
    let mut by_snapshot: Vec<Vec<&crate::translate::BlockProfile>> = vec![Vec::new(); n];
    for (s, p) in &t.profiles {
        let executed = ran(p.block_slot)
            || p.copies.iter().any(|c| ran(*c))
            || p.partial.iter().any(|(_, s)| ran(*s));
        if executed {
            by_snapshot[(*s).min(n - 1)].push(p);
        }
    }
    for (i, blocks) in by_snapshot.iter().enumerate() {
        if let Some(text) = texts.get(i) {
            w.push(&Record::Maps {
                delta: 0,
                text: text.clone(),
            })?;
        }
        for p in blocks {
            let insns = |n: usize| -> Vec<Insn> {
                p.insns[..n]
                    .iter()
                    .map(|&(pc, first, n)| Insn {
                        pc,
                        items: items(&p.items[first as usize..(first + n) as usize]),
                    })
                    .collect()
            };
            let mut pieces = vec![Piece {
                counter: p.block_slot,
                kind: PieceKind::Own,
                insns: insns(p.insns.len()),
            }];
            pieces.extend(p.copies.iter().map(|c| Piece {
                counter: *c,
                kind: PieceKind::Copy,
                insns: Vec::new(),
            }));
            pieces.extend(p.dynamic.iter().filter(|s| ran(**s)).map(|s| Piece {
                counter: *s,
                kind: PieceKind::Extra,
                insns: vec![Insn {
                    pc: t.slots.owners[*s as usize],
                    items: items(&t.slots.descs[*s as usize].items),
                }],
            }));
            w.push(&Record::Block(Block {
                start: p.start,
                end: p.end,
                taken_counter: None,
                fall_counter: p.fall_slot,
                pieces,
            }))?;
            // Executions of the first n instructions only: a block of its
            // own at the same address, ending where the handler left it.
            for &(n, slot) in p.partial.iter().filter(|(_, s)| ran(*s)) {
                w.push(&Record::Block(Block {
                    start: p.start,
                    end: profile::End::Fall {
                        next: p.insns[n as usize].0,
                    },
                    taken_counter: None,
                    fall_counter: None,
                    pieces: vec![Piece {
                        counter: slot,
                        kind: PieceKind::Own,
                        insns: insns(n as usize),
                    }],
                }))?;
            }
        }
    }
    w.finish()
}

fn write_banks(path: &Path, banks: &[&[u64]]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(profile::prof_path(path))?;
    let mut bytes = Vec::new();
    for (b, ctr) in banks.iter().enumerate() {
        bytes.clear();
        for c in ctr.iter() {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
        f.write_all_at(&bytes, b as u64 * BANK_STRIDE)?;
    }
    Ok(())
}
