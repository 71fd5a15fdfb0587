//! One process's counts per function, line and local function while its
//! instructions are added: keyed by name identity, not text (hashing or
//! comparing names per instruction cost more than the rest of the work),
//! then moved to the text-keyed maps of [`crate::Attribution`].

use crate::calls::FnKey;
use crate::place::{self, Place};
use crate::rows::{FnAcc, LineKey};
use crate::time::Samples;
use flopscope_model::Counts;
use rustc_hash::{FxHashMap, FxHashSet};

/// Sampled addresses, by file offset (of any module): only these need the
/// per-address tables that place samples (the rows' address table, loop bodies).
pub type Sampled = FxHashSet<u64>;

/// The sampled addresses of `samples`, for [`crate::Attribution::of`].
pub fn sampled(samples: &Samples) -> Sampled {
    samples.at.keys().map(|(_, offset)| *offset).collect()
}

/// Keys of one process's tallies: names by identity (`place::id`), not
/// text, while every name comes from one `Places`.
type FnId = (usize, usize);
type LineId = (usize, Option<usize>, Option<u32>, usize);

/// One process's counts per function, line and local function, keyed by
/// name identity while its instructions are added (one `Places`, so equal
/// names are one allocation), then moved to the text-keyed maps.
#[derive(Default)]
pub(crate) struct Tally {
    pub functions: FxHashMap<FnId, (FnKey, FnAcc)>,
    pub lines: FxHashMap<LineId, (LineKey, Counts)>,
    pub local: FxHashMap<FnId, (FnKey, Counts)>,
}

impl Tally {
    /// Adds the counts `c` of instructions at one site `p`, the first at
    /// `pc` (the lowest: a block's instructions ascend).
    pub fn add(&mut self, p: Place, pc: u64, c: &Counts) {
        let m = place::id(&p.module);
        for f in p.chain.iter() {
            self.local
                .entry((m, place::id(f)))
                .or_insert_with(|| ((p.module.clone(), f.clone()), Counts::default()))
                .1
                .merge(c);
        }
        let (_, f) = self
            .functions
            .entry((m, place::id(&p.function)))
            .or_insert_with(|| {
                let acc = FnAcc {
                    address: u64::MAX,
                    ..Default::default()
                };
                ((p.module.clone(), p.function.clone()), acc)
            });
        f.counts.merge(c);
        let start = if p.function == p.symbol {
            p.symbol_start
        } else {
            pc
        };
        f.address = f.address.min(start);
        if let Some(caller) = &p.inlined_into {
            f.inlined_into.insert(caller.clone());
        }
        if let (Some(l), Some(file)) = (p.line, &p.file) {
            // The lowest (line, file): a tie goes to the same file whatever
            // the order instructions come in (merged parts, see `split`).
            if f.first_line
                .as_ref()
                .is_none_or(|(fl, ff)| (l, file) < (*fl, ff))
            {
                f.first_line = Some((l, file.clone()));
            }
        }
        let line_id = (
            m,
            p.file.as_ref().map(place::id),
            p.line,
            place::id(&p.function),
        );
        self.lines
            .entry(line_id)
            .or_insert_with(|| {
                let key = (p.module.clone(), p.file.clone(), p.line, p.function.clone());
                (key, Counts::default())
            })
            .1
            .merge(c);
    }
}
