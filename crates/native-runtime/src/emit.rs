//! The mask popcount the runtime adds before an instruction whose work
//! depends on a mask (AVX-512 opmasks, AVX masked moves and gathers): the
//! rare forms, built as iced-x86 instructions inside a [`Code`] block.

use crate::code::{Code, Piece, RAX};
use crate::header;
use iced_x86::{Code as Op, Instruction, Register};

fn ok(r: Result<Instruction, iced_x86::IcedError>) -> Instruction {
    r.expect("a well-formed instruction")
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
pub fn count_mask(src: MaskSource, elems: u32, slot: u32, flags_live: bool, code: &mut Code) {
    code.store_gs(header::SAVE_RAX, RAX);
    if flags_live {
        code.save_flags();
    }
    let load = match src {
        MaskSource::Opmask(k) => {
            if elems <= 16 {
                ok(Instruction::with2(Op::VEX_Kmovw_r32_kr, Register::EAX, k))
            } else if elems <= 32 {
                ok(Instruction::with2(Op::VEX_Kmovd_r32_kr, Register::EAX, k))
            } else {
                ok(Instruction::with2(Op::VEX_Kmovq_r64_kr, Register::RAX, k))
            }
        }
        MaskSource::Vector { reg, elem_bytes } => {
            let op = match (elem_bytes, reg.is_ymm(), reg.is_mm()) {
                (_, _, true) => Op::Pmovmskb_r32_mm,
                (1, false, _) => Op::VEX_Vpmovmskb_r32_xmm,
                (1, true, _) => Op::VEX_Vpmovmskb_r32_ymm,
                (4, false, _) => Op::VEX_Vmovmskps_r32_xmm,
                (4, true, _) => Op::VEX_Vmovmskps_r32_ymm,
                (_, false, _) => Op::VEX_Vmovmskpd_r32_xmm,
                (_, true, _) => Op::VEX_Vmovmskpd_r32_ymm,
            };
            ok(Instruction::with2(op, Register::EAX, reg))
        }
    };
    code.put(Piece::Insn(load));
    if elems < 32 {
        code.put(Piece::Insn(ok(Instruction::with2(
            Op::And_EAX_imm32,
            Register::EAX,
            ((1u64 << elems) - 1) as u32,
        ))));
    } else if elems == 32 {
        code.bytes(&[0x89, 0xc0]); // mov eax, eax
    }
    code.bytes(&[0xf3, 0x48, 0x0f, 0xb8, 0xc0]); // popcnt rax, rax
    code.add_rax(slot);
    if flags_live {
        code.restore_flags();
    }
    code.load_gs(RAX, header::SAVE_RAX);
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

    #[test]
    fn mask_popcount_decodes_as_meant() {
        let mut c = Code::default();
        count_mask(MaskSource::Opmask(Register::K1), 8, 0, true, &mut c);
        count_mask(
            MaskSource::Vector {
                reg: Register::YMM9,
                elem_bytes: 8,
            },
            4,
            1,
            false,
            &mut c,
        );
        let code = crate::code::layout(&c.pieces, 0x7000_0000).unwrap();
        let mut d = Decoder::with_ip(64, &code, 0x7000_0000, DecoderOptions::NONE);
        let mut f = IntelFormatter::new();
        let text: Vec<String> = d
            .iter()
            .map(|i| {
                let mut s = String::new();
                f.format(&i, &mut s);
                s
            })
            .collect();
        assert_eq!(
            text,
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
                "mov rax,gs:[8]",
                "mov gs:[8],rax",
                "vmovmskpd eax,ymm9",
                "and eax,0Fh",
                "popcnt rax,rax",
                "add gs:[1008h],rax",
                "mov rax,gs:[8]",
            ]
        );
    }
}
