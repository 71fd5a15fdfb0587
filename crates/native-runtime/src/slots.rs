//! Counter slots: what one execution of a block, or one unit of a dynamic
//! item (an active lane, an element, a REP iteration), adds to the counts.

use flopscope_counter_file::layout::SlotKind;
use flopscope_isa::{FpOp, InsnInfo};

/// The counts one unit of a slot stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Desc {
    pub items: Vec<(SlotKind, u64)>,
}

impl Desc {
    pub fn with_capacity(n: usize) -> Desc {
        Desc {
            items: Vec::with_capacity(n),
        }
    }

    pub fn add(&mut self, kind: SlotKind, n: u64) {
        if n == 0 {
            return;
        }
        match self.items.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, m)) => *m += n,
            None => self.items.push((kind, n)),
        }
    }

    /// One execution of `insn`: the instruction, its FLOP unless the lanes
    /// are counted at run time, its static bytes.
    pub fn add_static(&mut self, info: &InsnInfo, _insn: &iced_x86::Instruction) {
        self.add(SlotKind::Instructions, 1);
        if let Some(fp) = info.fp {
            let k = fp.key;
            let dynamic = k.masked && fp.flop_per_lane.total() > 0;
            self.add(
                SlotKind::FpInsn {
                    precision: k.precision,
                    op: k.op,
                    lanes: k.lanes,
                    width_bits: k.width_bits,
                    masked: k.masked,
                    flop_per_insn: if dynamic { 0 } else { fp.flop.total() },
                },
                1,
            );
            if !dynamic {
                for (op, n) in fp.flop.iter() {
                    self.add(
                        SlotKind::Flop {
                            precision: k.precision,
                            op,
                        },
                        u64::from(n),
                    );
                }
            }
        }
        for (size, n) in info.mem.reads.counts() {
            self.add(SlotKind::MemRead { size }, u64::from(n));
        }
        for (size, n) in info.mem.writes.counts() {
            self.add(SlotKind::MemWrite { size }, u64::from(n));
        }
    }

    /// One active lane of a masked FP instruction.
    pub fn add_lanes(&mut self, fp: &FpOp) {
        let k = fp.key;
        self.add(
            SlotKind::FpFlop {
                precision: k.precision,
                op: k.op,
                lanes: k.lanes,
                width_bits: k.width_bits,
                masked: k.masked,
            },
            u64::from(fp.flop_per_lane.total()),
        );
        for (op, n) in fp.flop_per_lane.iter() {
            self.add(
                SlotKind::Flop {
                    precision: k.precision,
                    op,
                },
                u64::from(n),
            );
        }
    }

    /// One active element of a masked access.
    pub fn add_access(&mut self, m: &crate::translate::MaskedAccess) {
        if m.read {
            self.add(SlotKind::MemRead { size: m.elem_bytes }, 1);
        }
        if m.write {
            self.add(SlotKind::MemWrite { size: m.elem_bytes }, 1);
        }
    }
}

/// Every slot's descriptor, by slot number, and the instruction each slot
/// of run-time work was made for (for attribution).
#[derive(Default)]
pub struct Slots {
    pub descs: Vec<Desc>,
    /// The program address of the instruction being instrumented when each
    /// slot was made.
    pub owners: Vec<u64>,
    /// The instruction being instrumented now.
    pub pc: u64,
}

impl Slots {
    /// A slot whose descriptor is set later.
    pub fn reserve(&mut self) -> u32 {
        self.add(Desc::default())
    }

    /// Kept for the whole run, one or more a block: held to their length
    /// (a block's descriptor is built with room to spare).
    pub fn set(&mut self, slot: u32, mut d: Desc) {
        d.items.shrink_to_fit();
        self.descs[slot as usize] = d;
    }

    pub fn add(&mut self, mut d: Desc) -> u32 {
        d.items.shrink_to_fit();
        self.descs.push(d);
        self.owners.push(self.pc);
        (self.descs.len() - 1) as u32
    }
}
