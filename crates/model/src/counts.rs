//! `Counts`: the exact integer tallies an instrumenting engine accumulates.
//! Everything in a report's summary is derived from them, so two engines that
//! agree on `Counts` agree on every number printed.

use crate::tally_map::TallyMap;
use crate::units::{Bytes, Flop};
use crate::vocab::{FlopOp, OpClass, Precision};
use std::collections::BTreeMap;

/// One kind of floating-point instruction: the key of `fp_instructions` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FpKey {
    pub precision: Precision,
    /// Bits computed on: lanes x element bits for packed forms, the element
    /// width for scalar forms (64 for MULSD, 80 for x87).
    pub width_bits: u32,
    /// Elements the instruction computes when no mask applies (1 for scalar).
    pub lanes: u32,
    pub op: OpClass,
    /// An AVX-512 opmask other than k0 selects the active lanes.
    pub masked: bool,
}

impl FpKey {
    /// An unmasked kind of instruction.
    pub fn new(precision: Precision, width_bits: u32, lanes: u32, op: OpClass) -> FpKey {
        FpKey {
            precision,
            width_bits,
            lanes,
            op,
            masked: false,
        }
    }
}

/// Executions of one kind of FP instruction and the FLOP they performed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FpTally {
    pub count: u64,
    /// FLOP of these executions (FMA = 2; DPPS per imm8; masked: active lanes).
    pub flop: u64,
}

impl FpTally {
    pub fn add(&mut self, o: FpTally) {
        self.count += o.count;
        self.flop += o.flop;
    }
}

/// Exact dynamic counts of one thread, region or process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every executed instruction.
    pub instructions: u64,
    /// Executed floating-point instructions by kind, with their FLOP.
    pub fp_instructions: TallyMap<FpKey, FpTally>,
    /// FLOP by precision and category (FMA = 2).
    pub flop: TallyMap<(Precision, FlopOp), u64>,
    /// Data memory reads: access size in bytes -> number of accesses.
    pub mem_read: TallyMap<u32, u64>,
    /// Data memory writes: access size in bytes -> number of accesses.
    pub mem_write: TallyMap<u32, u64>,
}

fn add_u64(a: &mut u64, b: &u64) {
    *a += b;
}

fn weighted_sum(map: &TallyMap<u32, u64>) -> u64 {
    map.iter().map(|(size, n)| u64::from(*size) * n).sum()
}

impl Counts {
    /// Adds another tally into this one.
    pub fn merge(&mut self, other: &Counts) {
        self.instructions += other.instructions;
        self.fp_instructions
            .merge_with(&other.fp_instructions, |a, b| a.add(*b));
        self.flop.merge_with(&other.flop, add_u64);
        self.mem_read.merge_with(&other.mem_read, add_u64);
        self.mem_write.merge_with(&other.mem_write, add_u64);
    }

    /// Adds `count` executions of `key` that performed `flop` FLOP in all,
    /// every one of them booked under `booked`.
    pub fn add_fp(&mut self, key: FpKey, count: u64, flop: u64, booked: FlopOp) {
        self.fp_instructions
            .entry(key)
            .or_default()
            .add(FpTally { count, flop });
        *self.flop.entry((key.precision, booked)).or_default() += flop;
    }

    /// Removes zero entries, so that equal tallies compare equal.
    pub fn prune(&mut self) {
        self.fp_instructions
            .retain(|_, t| t.count != 0 || t.flop != 0);
        self.flop.retain(|_, v| *v != 0);
        self.mem_read.retain(|_, v| *v != 0);
        self.mem_write.retain(|_, v| *v != 0);
    }

    pub fn flop_total(&self) -> Flop {
        Flop(self.flop.values().sum())
    }

    pub fn flop_of(&self, precision: Precision) -> Flop {
        Flop(
            self.flop
                .iter()
                .filter(|((p, _), _)| *p == precision)
                .map(|(_, v)| v)
                .sum(),
        )
    }

    pub fn flop_by_op(&self, op: FlopOp) -> Flop {
        Flop(
            self.flop
                .iter()
                .filter(|((_, o), _)| *o == op)
                .map(|(_, v)| v)
                .sum(),
        )
    }

    pub fn bytes_read(&self) -> Bytes {
        Bytes(weighted_sum(&self.mem_read))
    }

    pub fn bytes_written(&self) -> Bytes {
        Bytes(weighted_sum(&self.mem_write))
    }

    /// SDE-style `elements_fp_<precision>_<lanes>[_masked]` counters: the number
    /// of executed FP instructions of each precision and element count (FMA = 1
    /// instruction, like SDE). x87 has no such counter.
    pub fn fp_elements(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (key, t) in &self.fp_instructions {
            let Some(word) = key.precision.sde_word() else {
                continue;
            };
            let suffix = if key.masked { "_masked" } else { "" };
            *out.entry(format!("elements_fp_{word}_{}{suffix}", key.lanes))
                .or_default() += t.count;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(precision: Precision, lanes: u32, op: OpClass) -> FpKey {
        FpKey {
            precision,
            width_bits: lanes * precision.element_bits(),
            lanes,
            op,
            masked: false,
        }
    }

    #[test]
    fn merge_adds_every_map_and_derived_totals_follow() {
        let mut a = Counts {
            instructions: 10,
            ..Default::default()
        };
        a.fp_instructions.insert(
            key(Precision::Fp64, 4, OpClass::Fma),
            FpTally { count: 3, flop: 24 },
        );
        a.flop.insert((Precision::Fp64, FlopOp::Fma), 24);
        a.mem_read.insert(32, 6);
        let mut b = a.clone();
        b.flop.insert((Precision::Fp32, FlopOp::Add), 5);
        b.mem_write.insert(8, 2);
        a.merge(&b);
        assert_eq!(a.instructions, 20);
        assert_eq!(a.flop_total(), Flop(53));
        assert_eq!(a.flop_of(Precision::Fp64), Flop(48));
        assert_eq!(a.flop_by_op(FlopOp::Add), Flop(5));
        assert_eq!(a.bytes_read(), Bytes(12 * 32));
        assert_eq!(a.bytes_written(), Bytes(16));
        assert_eq!(a.fp_elements()["elements_fp_double_4"], 6);
        assert_eq!(
            a.fp_instructions[&key(Precision::Fp64, 4, OpClass::Fma)],
            FpTally { count: 6, flop: 48 }
        );
    }

    #[test]
    fn add_fp_books_the_instructions_and_their_flop() {
        let mut c = Counts::default();
        let k = FpKey::new(Precision::Fp32, 256, 8, OpClass::Fma);
        c.add_fp(k, 10, 160, FlopOp::Fma);
        c.add_fp(k, 5, 80, FlopOp::Fma);
        assert_eq!(
            c.fp_instructions[&k],
            FpTally {
                count: 15,
                flop: 240
            }
        );
        assert_eq!(c.flop_by_op(FlopOp::Fma), Flop(240));
        assert_eq!(c.flop_of(Precision::Fp32), Flop(240));
    }

    #[test]
    fn x87_has_no_sde_element_counter() {
        let mut c = Counts::default();
        c.fp_instructions.insert(
            key(Precision::X87, 1, OpClass::Add),
            FpTally { count: 7, flop: 7 },
        );
        c.fp_instructions.insert(
            key(Precision::Fp32, 1, OpClass::Add),
            FpTally { count: 2, flop: 2 },
        );
        let e = c.fp_elements();
        assert_eq!(e.len(), 1);
        assert_eq!(e["elements_fp_single_1"], 2);
    }
}
