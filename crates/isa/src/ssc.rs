//! SDE's SSC marks: `__SSC_MARK(imm32)` emits `mov ebx, imm32` followed by
//! `64 67 90` (fs addr32 nop). Both engines recognise the pair when they
//! translate a block.

use iced_x86::{Code, Instruction, Register};

/// The mark's value when `bytes` (one instruction's) are a mark's `64 67 90`
/// and `prev`, the instruction before it in the block, is its `mov ebx`.
pub fn ssc_mark_value(bytes: &[u8], prev: Option<&Instruction>) -> Option<u32> {
    if bytes != [0x64, 0x67, 0x90] {
        return None;
    }
    let p = prev?;
    (p.code() == Code::Mov_r32_imm32 && p.op0_register() == Register::EBX).then(|| p.immediate32())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_the_nop_right_after_mov_ebx() {
        let mov_ebx = crate::decode_one(&[0xbb, 0x11, 0x01, 0, 0], 0).unwrap();
        let mov_eax = crate::decode_one(&[0xb8, 0x11, 0x01, 0, 0], 0).unwrap();
        let nop = [0x64, 0x67, 0x90];
        assert_eq!(ssc_mark_value(&nop, Some(&mov_ebx)), Some(0x111));
        assert_eq!(ssc_mark_value(&nop, Some(&mov_eax)), None);
        assert_eq!(ssc_mark_value(&nop, None), None);
        assert_eq!(ssc_mark_value(&[0x90], Some(&mov_ebx)), None);
    }
}
