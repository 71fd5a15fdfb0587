//! Instruction builders for the code the runtime adds around the program's
//! own instructions: counters, mask popcounts, flag saves, exits.

use crate::header;
use iced_x86::{Code, Instruction, MemoryOperand, Register};

fn ok(r: Result<Instruction, iced_x86::IcedError>) -> Instruction {
    r.expect("a well-formed instruction")
}

/// `gs:[off]`.
pub fn gs(off: i32) -> MemoryOperand {
    MemoryOperand::new(Register::None, Register::None, 1, i64::from(off), 4, false, Register::GS)
}

pub fn store_gs(off: i32, reg: Register) -> Instruction {
    ok(Instruction::with2(Code::Mov_rm64_r64, gs(off), reg))
}

pub fn load_gs(reg: Register, off: i32) -> Instruction {
    ok(Instruction::with2(Code::Mov_r64_rm64, reg, gs(off)))
}

/// `add qword ptr gs:[counter], 1` (writes the flags).
pub fn bump(slot: u32) -> Instruction {
    ok(Instruction::with2(Code::Add_rm64_imm8, gs(header::counter(slot)), 1i32))
}

/// `add gs:[counter], rax` (writes the flags).
pub fn add_rax(slot: u32) -> Instruction {
    ok(Instruction::with2(Code::Add_rm64_r64, gs(header::counter(slot)), Register::RAX))
}

/// A counter increment that leaves the flags alone (rax saved around it).
pub fn bump_keep_flags(slot: u32, out: &mut Vec<Instruction>) {
    out.push(store_gs(header::SAVE_RAX, Register::RAX));
    out.push(load_gs(Register::RAX, header::counter(slot)));
    out.push(ok(Instruction::with2(
        Code::Lea_r64_m,
        Register::RAX,
        MemoryOperand::with_base_displ(Register::RAX, 1),
    )));
    out.push(store_gs(header::counter(slot), Register::RAX));
    out.push(load_gs(Register::RAX, header::SAVE_RAX));
}

/// Saves the arithmetic flags into gs:[SAVE_FLAGS] (rax already saved;
/// clobbers it): `lahf; seto al`.
pub fn save_flags(out: &mut Vec<Instruction>) {
    out.push(Instruction::with(Code::Lahf));
    out.push(ok(Instruction::with1(Code::Seto_rm8, Register::AL)));
    out.push(store_gs(header::SAVE_FLAGS, Register::RAX));
}

/// Restores what [`save_flags`] saved (clobbers rax): `add al, 0x7f; sahf`
/// sets OF from the saved `seto` byte, SF ZF AF PF CF from AH.
pub fn restore_flags(out: &mut Vec<Instruction>) {
    out.push(load_gs(Register::RAX, header::SAVE_FLAGS));
    out.push(ok(Instruction::with2(Code::Add_AL_imm8, Register::AL, 0x7fi32)));
    out.push(Instruction::with(Code::Sahf));
}

/// What loads the active-element bits into eax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskSource {
    /// An AVX-512 opmask register.
    Opmask(Register),
    /// The sign bits of a vector register's elements of this many bytes (AVX
    /// masked moves and AVX2 gathers); 1 for byte masks.
    Vector { reg: Register, elem_bytes: u32 },
}

/// Adds popcount(mask & ((1 << elems) - 1)) to `slot`, before an instruction.
pub fn count_mask(src: MaskSource, elems: u32, slot: u32, flags_live: bool, out: &mut Vec<Instruction>) {
    out.push(store_gs(header::SAVE_RAX, Register::RAX));
    if flags_live {
        save_flags(out);
    }
    match src {
        MaskSource::Opmask(k) => {
            let code = if elems <= 16 {
                Code::VEX_Kmovw_r32_kr
            } else if elems <= 32 {
                Code::VEX_Kmovd_r32_kr
            } else {
                Code::VEX_Kmovq_r64_kr
            };
            let dst = if code == Code::VEX_Kmovq_r64_kr { Register::RAX } else { Register::EAX };
            out.push(ok(Instruction::with2(code, dst, k)));
        }
        MaskSource::Vector { reg, elem_bytes } => {
            let ymm = reg.is_ymm();
            let mmx = reg.is_mm();
            let code = match (elem_bytes, ymm, mmx) {
                (_, _, true) => Code::Pmovmskb_r32_mm,
                (1, false, _) => Code::VEX_Vpmovmskb_r32_xmm,
                (1, true, _) => Code::VEX_Vpmovmskb_r32_ymm,
                (4, false, _) => Code::VEX_Vmovmskps_r32_xmm,
                (4, true, _) => Code::VEX_Vmovmskps_r32_ymm,
                (_, false, _) => Code::VEX_Vmovmskpd_r32_xmm,
                (_, true, _) => Code::VEX_Vmovmskpd_r32_ymm,
            };
            out.push(ok(Instruction::with2(code, Register::EAX, reg)));
        }
    }
    if elems < 32 {
        out.push(ok(Instruction::with2(Code::And_EAX_imm32, Register::EAX, ((1u64 << elems) - 1) as u32)));
    } else if elems == 32 {
        out.push(ok(Instruction::with2(Code::Mov_r32_rm32, Register::EAX, Register::EAX)));
    }
    out.push(ok(Instruction::with2(Code::Popcnt_r64_rm64, Register::RAX, Register::RAX)));
    out.push(add_rax(slot));
    if flags_live {
        restore_flags(out);
    }
    out.push(load_gs(Register::RAX, header::SAVE_RAX));
}

/// Before a REP string instruction: remember rcx.
pub fn rep_before() -> Instruction {
    store_gs(header::REP_RCX, Register::RCX)
}

/// After it: add the iterations done (rcx before - rcx after) to `slot`.
pub fn rep_after(slot: u32, flags_live: bool, out: &mut Vec<Instruction>) {
    out.push(store_gs(header::SAVE_RAX, Register::RAX));
    if flags_live {
        save_flags(out);
    }
    out.push(load_gs(Register::RAX, header::REP_RCX));
    out.push(ok(Instruction::with2(Code::Sub_r64_rm64, Register::RAX, Register::RCX)));
    out.push(add_rax(slot));
    if flags_live {
        restore_flags(out);
    }
    out.push(load_gs(Register::RAX, header::SAVE_RAX));
}

/// Pushes the program's return address `ret` (no scratch register, no flags).
pub fn push_return(ret: u64, out: &mut Vec<Instruction>) {
    out.push(ok(Instruction::with1(Code::Pushq_imm32, ret as u32 as i32)));
    out.push(ok(Instruction::with2(
        Code::Mov_rm32_imm32,
        MemoryOperand::with_base_displ(Register::RSP, 4),
        (ret >> 32) as u32,
    )));
}

pub fn jmp(target: u64) -> Instruction {
    ok(Instruction::with_branch(Code::Jmp_rel32_64, target))
}

/// Exit to the dispatcher with descriptor `desc` through the arena's entry
/// trampoline `enter`.
pub fn exit(desc: u64, enter: u64, out: &mut Vec<Instruction>) {
    out.push(store_gs(header::SAVE_RAX, Register::RAX));
    out.push(ok(Instruction::with2(Code::Mov_r64_imm64, Register::RAX, desc)));
    out.push(jmp(enter));
}

/// `mov rax, <the branch's operand>` from an indirect jmp/call.
pub fn load_target(branch: &Instruction) -> Instruction {
    let mut m = *branch;
    m.set_code(Code::Mov_r64_rm64);
    m.set_op0_kind(iced_x86::OpKind::Register);
    m.set_op0_register(Register::RAX);
    if branch.op0_kind() == iced_x86::OpKind::Memory {
        m.set_op1_kind(iced_x86::OpKind::Memory);
    } else {
        m.set_op1_kind(iced_x86::OpKind::Register);
        m.set_op1_register(branch.op0_register());
    }
    m
}

/// Branch targets inside one block's added code: addresses no program uses.
pub const LABEL_NATIVE: u64 = 0xffff_ffff_ffff_f000;
pub const LABEL_SPECIAL: u64 = 0xffff_ffff_ffff_f001;

/// `ins` with the label `at` (its IP, which branches in the block name).
pub fn label(mut ins: Instruction, at: u64) -> Instruction {
    ins.set_ip(at);
    ins
}

pub fn popf() -> Instruction {
    Instruction::with(Code::Popfq)
}

/// Before a `syscall`: branches to LABEL_SPECIAL when the number in rax is
/// one the dispatcher handles, else falls through to LABEL_NATIVE (next).
/// Uses rcx (the `syscall` clobbers it) and keeps the flags (pushed below
/// the red zone; both labels must pop them and lift rsp by 128).
pub fn syscall_check(out: &mut Vec<Instruction>) -> u64 {
    out.push(lea_rsp(-128));
    out.push(Instruction::with(Code::Pushfq));
    out.push(ok(Instruction::with2(Code::Cmp_rm64_imm32, Register::RAX, 511i32)));
    out.push(ok(Instruction::with_branch(Code::Ja_rel32_64, LABEL_NATIVE)));
    out.push(ok(Instruction::with2(
        Code::Mov_r64_imm64,
        Register::RCX,
        crate::syscalls::SPECIAL.as_ptr() as u64,
    )));
    out.push(ok(Instruction::with2(
        Code::Cmp_rm8_imm8,
        MemoryOperand::with_base_index(Register::RCX, Register::RAX),
        0i32,
    )));
    out.push(ok(Instruction::with_branch(Code::Jne_rel32_64, LABEL_SPECIAL)));
    LABEL_SPECIAL
}

pub fn load_rsp_top() -> Instruction {
    ok(Instruction::with2(Code::Mov_r64_rm64, Register::RAX, MemoryOperand::with_base(Register::RSP)))
}

pub fn lea_rsp(add: i64) -> Instruction {
    ok(Instruction::with2(
        Code::Lea_r64_m,
        Register::RSP,
        MemoryOperand::with_base_displ(Register::RSP, add),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{BlockEncoder, BlockEncoderOptions, Decoder, DecoderOptions, Formatter, InstructionBlock, IntelFormatter};

    fn text(list: &[Instruction]) -> Vec<String> {
        let r = BlockEncoder::encode(64, InstructionBlock::new(list, 0x7000_0000), BlockEncoderOptions::NONE).unwrap();
        let mut d = Decoder::with_ip(64, &r.code_buffer, 0x7000_0000, DecoderOptions::NONE);
        let mut f = IntelFormatter::new();
        d.iter()
            .map(|i| {
                let mut s = String::new();
                f.format(&i, &mut s);
                s
            })
            .collect()
    }

    #[test]
    fn counters_and_flag_saves_encode_as_written() {
        let mut v = vec![bump(3)];
        bump_keep_flags(1, &mut v);
        assert_eq!(
            text(&v),
            [
                "add qword ptr gs:[1018h],1",
                "mov gs:[8],rax",
                "mov rax,gs:[1008h]",
                "lea rax,[rax+1]",
                "mov gs:[1008h],rax",
                "mov rax,gs:[8]"
            ]
        );
        let mut m = Vec::new();
        count_mask(MaskSource::Opmask(Register::K1), 8, 0, true, &mut m);
        assert_eq!(
            text(&m),
            [
                "mov gs:[8],rax",
                "lahf",
                "seto al",
                "mov gs:[18h],rax",
                "kmovw eax,k1",
                "and eax,0FFh",
                "popcnt rax,rax",
                "add gs:[1000h],rax",
                "mov rax,gs:[18h]",
                "add al,7Fh",
                "sahf",
                "mov rax,gs:[8]"
            ]
        );
        let mut p = Vec::new();
        push_return(0x7fff_1234_5678, &mut p);
        assert_eq!(text(&p), ["push 12345678h", "mov dword ptr [rsp+4],7FFFh"]);
    }
}
