//! The floating-point work of one decoded instruction: its table row applied
//! to the lanes its operands give.

use crate::table::{self, FlopRow, PerLane};
use crate::{lanes, FlopSplit, FpOp};
use flopscope_model::{FlopOp, FpKey};
use iced_x86::{Instruction, Register};

/// `None` when the mnemonic is not in the FLOP table.
///
/// `flop_per_lane` is the per-lane split of the row. It is left zero for the
/// forms whose lanes do not all cost the same, ADDSUB and DPPS/DPPD; none of
/// them has an EVEX (maskable) encoding, so no engine needs it there.
pub fn fp_op(insn: &Instruction) -> Option<FpOp> {
    let row = table::flop_row(insn.mnemonic())?;
    let lanes = lanes::lanes(insn, &row);
    let (flop, flop_per_lane) = match row.per_lane {
        PerLane::Uniform(per_lane) => (times(per_lane, lanes), per_lane),
        PerLane::AddSub => {
            let add = lanes / 2;
            (
                FlopSplit::two((FlopOp::Add, add), (FlopOp::Sub, lanes - add)),
                FlopSplit::default(),
            )
        }
        PerLane::DotImm8 => (dot_imm8(insn, &row, lanes), FlopSplit::default()),
    };
    let key = FpKey {
        precision: row.precision,
        width_bits: lanes * row.lane_bits(),
        lanes,
        op: row.op,
        masked: insn.op_mask() != Register::None,
    };
    Some(FpOp {
        key,
        flop,
        flop_per_lane,
    })
}

fn times(per_lane: FlopSplit, lanes: u32) -> FlopSplit {
    let [(a, n), (b, m)] = per_lane.parts;
    FlopSplit::two((a, n * lanes), (b, m * lanes))
}

/// DPPS/DPPD, following flop-rules.md ("multiplies + adds actually selected
/// by imm8"). In each 128-bit block, imm8[7:4] (DPPS, 4 fp32 elements) or
/// imm8[5:4] (DPPD, 2 fp64 elements) selects the products that enter the sum;
/// the others enter as +0.0. With m selected products a block counts m
/// multiplies and max(m - 1, 0) adds: the adds that actually combine selected
/// products. The hardware's fixed adder tree on the zeroed products is not
/// counted, nor is imm8[3:0], which only picks the result lanes that receive
/// the sum. VDPPS ymm has two blocks and counts both.
/// Examples: DPPS imm8 0xFF = 4 mul + 3 add; 0x71 = 3 + 2; DPPD 0x11 = 1 + 0.
fn dot_imm8(insn: &Instruction, row: &FlopRow, lanes: u32) -> FlopSplit {
    let blocks = (lanes * row.lane_bits() / 128).max(1);
    let select = insn.immediate8() >> 4;
    let select = if row.lane_bits() == 64 {
        select & 0b11
    } else {
        select & 0b1111
    };
    let m = select.count_ones();
    FlopSplit::two(
        (FlopOp::Mul, m * blocks),
        (FlopOp::Add, m.saturating_sub(1) * blocks),
    )
}
