//! The mask popcount the runtime adds before an instruction whose work
//! depends on a mask (AVX-512 opmasks, AVX masked moves and gathers).

use crate::code::{Code, RAX};
use crate::header;
use iced_x86::Register;

/// What loads the active-element bits into eax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskSource {
    /// An AVX-512 opmask register.
    Opmask(Register),
    /// The sign bits of a vector register's elements of this many bytes (AVX
    /// masked moves and AVX2 gathers); 1 for byte masks.
    Vector { reg: Register, elem_bytes: u32 },
}

/// `kmov eax/rax, k` or `(v)(p)movmsk eax, reg`: the mask bits into eax,
/// hand-encoded (VEX; registers 0-15).
fn mask_load(src: MaskSource, elems: u32) -> Vec<u8> {
    match src {
        MaskSource::Opmask(k) => {
            let k = (k as u32 - Register::K0 as u32) as u8;
            let modrm = 0xc0 | k;
            if elems <= 16 {
                vec![0xc5, 0xf8, 0x93, modrm] // kmovw eax, k
            } else if elems <= 32 {
                vec![0xc5, 0xfb, 0x93, modrm] // kmovd eax, k
            } else {
                vec![0xc4, 0xe1, 0xfb, 0x93, modrm] // kmovq rax, k
            }
        }
        MaskSource::Vector { reg, elem_bytes } => {
            let n = reg.number() as u8;
            let modrm = 0xc0 | (n & 7);
            if reg.is_mm() {
                return vec![0x0f, 0xd7, modrm]; // pmovmskb eax, mm
            }
            let (op, pp) = match elem_bytes {
                1 => (0xd7, 1), // vpmovmskb
                4 => (0x50, 0), // vmovmskps
                _ => (0x50, 1), // vmovmskpd
            };
            let l = u8::from(reg.is_ymm()) << 2;
            if n < 8 {
                vec![0xc5, 0xf8 | l | pp, op, modrm]
            } else {
                vec![0xc4, 0xc1, 0x78 | l | pp, op, modrm]
            }
        }
    }
}

/// Adds popcount(mask & ((1 << elems) - 1)) to `slot`, before an instruction.
pub fn count_mask(src: MaskSource, elems: u32, slot: u32, flags_live: bool, code: &mut Code) {
    count(src, elems, false, slot, flags_live, code);
}

/// Adds 1 to `slot` when any of mask & ((1 << elems) - 1) is set, before an
/// instruction (an embedded broadcast reads its element once).
pub fn count_any(src: MaskSource, elems: u32, slot: u32, flags_live: bool, code: &mut Code) {
    count(src, elems, true, slot, flags_live, code);
}

fn count(src: MaskSource, elems: u32, any: bool, slot: u32, flags_live: bool, code: &mut Code) {
    code.store_gs(header::SAVE_RAX, RAX);
    if flags_live {
        code.save_flags();
    }
    code.bytes(&mask_load(src, elems));
    if elems < 32 {
        code.bytes(&[0x25]); // and eax, imm32
        code.bytes(&(((1u64 << elems) - 1) as u32).to_le_bytes());
    } else if elems == 32 {
        code.bytes(&[0x89, 0xc0]); // mov eax, eax
    }
    if any {
        // neg rax (CF: any bit set); sbb eax, eax; neg eax: 0 or 1.
        code.bytes(&[0x48, 0xf7, 0xd8, 0x19, 0xc0, 0xf7, 0xd8]);
    } else {
        code.bytes(&[0xf3, 0x48, 0x0f, 0xb8, 0xc0]); // popcnt rax, rax
    }
    code.add_rax(slot);
    if flags_live {
        code.restore_flags();
    }
    code.load_gs(RAX, header::SAVE_RAX);
}

#[cfg(test)]
mod tests {
    use super::*;

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
        count_mask(MaskSource::Opmask(Register::K7), 32, 2, false, &mut c);
        count_mask(MaskSource::Opmask(Register::K3), 64, 3, false, &mut c);
        count_mask(
            MaskSource::Vector {
                reg: Register::XMM2,
                elem_bytes: 4,
            },
            4,
            4,
            false,
            &mut c,
        );
        count_mask(
            MaskSource::Vector {
                reg: Register::XMM12,
                elem_bytes: 1,
            },
            16,
            5,
            false,
            &mut c,
        );
        count_mask(
            MaskSource::Vector {
                reg: Register::MM3,
                elem_bytes: 1,
            },
            8,
            6,
            false,
            &mut c,
        );
        let code = crate::code::layout(&c, 0x7000_0000).unwrap();
        let text = crate::code::disassemble(&code, 0x7000_0000);
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
                "mov gs:[8],rax",
                "kmovd eax,k7",
                "mov eax,eax",
                "popcnt rax,rax",
                "add gs:[1010h],rax",
                "mov rax,gs:[8]",
                "mov gs:[8],rax",
                "kmovq rax,k3",
                "popcnt rax,rax",
                "add gs:[1018h],rax",
                "mov rax,gs:[8]",
                "mov gs:[8],rax",
                "vmovmskps eax,xmm2",
                "and eax,0Fh",
                "popcnt rax,rax",
                "add gs:[1020h],rax",
                "mov rax,gs:[8]",
                "mov gs:[8],rax",
                "vpmovmskb eax,xmm12",
                "and eax,0FFFFh",
                "popcnt rax,rax",
                "add gs:[1028h],rax",
                "mov rax,gs:[8]",
                "mov gs:[8],rax",
                "pmovmskb eax,mm3",
                "and eax,0FFh",
                "popcnt rax,rax",
                "add gs:[1030h],rax",
                "mov rax,gs:[8]",
            ]
        );
    }
}
