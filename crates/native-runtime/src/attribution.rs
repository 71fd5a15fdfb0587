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

use crate::translate::ProfileData;
use crate::translator::Translator;
use flopscope_counter_file::layout::SlotKind;
use flopscope_counter_file::profile::{self, CodeWriter, PieceKind, Record, BANK_STRIDE};
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
    // The first `n` instructions of `p`, each with its static items.
    let data = &t.profile_data;
    let insns = |e: &mut profile::BlockBytes, p: &crate::translate::BlockProfile, n: usize| {
        for &insn in &data.insns(p)[..n] {
            e.insn(
                insn.0,
                ProfileData::jumped(insn),
                pairs(index, data.items(insn)),
            );
        }
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
    // Each block encoded as it is read (no record built: at a compiler's
    // exit there are 250,000 of them, with an allocation an instruction).
    for (i, blocks) in by_snapshot.iter().enumerate() {
        if let Some(text) = texts.get(i) {
            w.push(&Record::Maps {
                delta: 0,
                text: text.clone(),
            })?;
        }
        for p in blocks {
            let extras = p.dynamic.iter().filter(|s| ran(**s));
            let pieces = 1 + p.copies.len() + extras.clone().count();
            let mut e = w.push_block(p.start, p.end, None, p.fall_slot, pieces)?;
            let n = p.insns.len();
            e.piece(p.block_slot, PieceKind::Own, n);
            insns(&mut e, p, n);
            for c in &p.copies {
                e.piece(*c, PieceKind::Copy, 0);
            }
            for s in extras {
                e.piece(*s, PieceKind::Extra, 1);
                e.insn(
                    t.slots.owners[*s as usize],
                    false,
                    pairs(index, &t.slots.descs[*s as usize].items),
                );
            }
            // Executions of the first n instructions only: a block of its
            // own at the same address, ending where the handler left it.
            for &(n, slot) in p.partial.iter().filter(|(_, s)| ran(*s)) {
                let end = profile::End::Fall {
                    next: data.insns(p)[n as usize].0,
                };
                let mut e = w.push_block(p.start, end, None, None, 1)?;
                e.piece(slot, PieceKind::Own, n as usize);
                insns(&mut e, p, n as usize);
            }
        }
    }
    w.finish()
}

/// The code table's (counter-file slot, increment) pairs of static items;
/// kinds the counter file lacks counted nothing.
fn pairs<'a, S: BuildHasher>(
    index: &'a HashMap<SlotKind, usize, S>,
    d: &'a [(SlotKind, u64)],
) -> impl Iterator<Item = (u32, u32)> + 'a {
    d.iter()
        .filter_map(|(k, n)| Some((*index.get(k)? as u32, u32::try_from(*n).ok()?)))
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
