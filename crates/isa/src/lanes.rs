//! Lanes and widths from the operand registers (flop-rules.md, "Elements":
//! scalar = 1; packed = register width / element width).

use crate::table::{FlopRow, Shape};
use iced_x86::{Instruction, OpKind};

/// Bits of the widest MMX or vector register operand (64, 128, 256 or 512);
/// 0 when the instruction has none.
pub fn vector_bits(insn: &Instruction) -> u32 {
    (0..insn.op_count())
        .filter(|&i| insn.op_kind(i) == OpKind::Register)
        .map(|i| insn.op_register(i))
        .filter(|r| r.is_vector_register() || r.is_mm())
        .map(|r| r.size() as u32 * 8)
        .max()
        .unwrap_or(0)
}

/// Lanes the instruction computes when no mask applies. Packed forms take the
/// register width, so an embedded broadcast (`[rax]{1to8}`) changes nothing:
/// the one element read is used in every lane. Every packed row of the table
/// has a vector register operand; were one to lack it, the form counts one
/// lane rather than guess.
pub fn lanes(insn: &Instruction, row: &FlopRow) -> u32 {
    match row.shape {
        Shape::Scalar => 1,
        Shape::Packed => (vector_bits(insn) / row.lane_bits()).max(1),
    }
}
