//! One instruction, assembled with iced's `CodeAssembler` and decoded back
//! with `decode_one`, so that every test goes through the real decoder.

use flopscope_isa::{classify, decode_one, FpOp, InsnInfo, MemInfo};
use iced_x86::code_asm::CodeAssembler;
use iced_x86::{IcedError, Instruction};

pub fn insn(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Instruction {
    assemble(true, emit)
}

/// Forces the EVEX encoding where VEX would do: the assembler otherwise
/// drops an opmask on xmm/ymm forms that VEX can encode.
pub fn evex(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Instruction {
    assemble(false, emit)
}

fn assemble(
    prefer_vex: bool,
    emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>,
) -> Instruction {
    let mut a = CodeAssembler::new(64).unwrap();
    a.set_prefer_vex(prefer_vex);
    emit(&mut a).unwrap();
    let bytes = a.assemble(0x1000).unwrap();
    let insn = decode_one(&bytes, 0x1000).expect("decodes");
    assert_eq!(insn.len(), bytes.len(), "one instruction");
    insn
}

pub fn info(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> InsnInfo {
    classify(&insn(emit))
}

/// The FLOP part; panics when the instruction is not a FLOP instruction.
pub fn fp(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> FpOp {
    let i = insn(emit);
    classify(&i)
        .fp
        .unwrap_or_else(|| panic!("{i} is not classified as FLOP"))
}

pub fn mem(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> MemInfo {
    info(emit).mem
}
