//! Bytes read and written per execution, and the dynamic-traffic markers.

use crate::asm::mem;
use flopscope_isa::{DynamicMem, MemInfo};
use iced_x86::code_asm::*;

fn fixed(reads: &[u32], writes: &[u32]) -> MemInfo {
    MemInfo {
        reads: reads.iter().copied().collect(),
        writes: writes.iter().copied().collect(),
        dynamic: None,
    }
}

fn dynamic(kind: DynamicMem) -> MemInfo {
    MemInfo {
        reads: Default::default(),
        writes: Default::default(),
        dynamic: Some(kind),
    }
}

#[test]
fn loads_stores_and_operands() {
    assert_eq!(mem(|a| a.movaps(xmm0, xmmword_ptr(rax))), fixed(&[16], &[]));
    assert_eq!(mem(|a| a.movaps(xmmword_ptr(rax), xmm0)), fixed(&[], &[16]));
    assert_eq!(
        mem(|a| a.vmovupd(ymm0, ymmword_ptr(rax))),
        fixed(&[32], &[])
    );
    assert_eq!(
        mem(|a| a.vaddpd(zmm0, zmm1, qword_bcst(rax))),
        fixed(&[8], &[])
    );
    assert_eq!(mem(|a| a.add(dword_ptr(rax), eax)), fixed(&[4], &[4]));
    assert_eq!(mem(|a| a.movaps(xmm0, xmm1)), fixed(&[], &[]));
    assert_eq!(mem(|a| a.fxsave(ptr(rax))), fixed(&[], &[512]));
    assert_eq!(mem(|a| a.fxrstor(ptr(rax))), fixed(&[512], &[]));
}

#[test]
fn stack() {
    assert_eq!(mem(|a| a.push(rax)), fixed(&[], &[8]));
    assert_eq!(mem(|a| a.push(qword_ptr(rax))), fixed(&[8], &[8]));
    assert_eq!(mem(|a| a.pop(rax)), fixed(&[8], &[]));
    assert_eq!(mem(|a| a.call(0x2000u64)), fixed(&[], &[8]));
    assert_eq!(mem(|a| a.ret()), fixed(&[8], &[]));
    // ENTER 16, 31: push rbp, 30 frame pointers copied (read and pushed),
    // push the new frame pointer (SDM Vol. 2, ENTER).
    let enter = mem(|a| a.enter(16u32, 31u32));
    assert_eq!(enter.reads.counts().collect::<Vec<_>>(), vec![(8, 30)]);
    assert_eq!(enter.writes.counts().collect::<Vec<_>>(), vec![(8, 32)]);
}

#[test]
fn conditional_accesses_always_happen() {
    assert_eq!(mem(|a| a.cmove(eax, dword_ptr(rax))), fixed(&[4], &[]));
    assert_eq!(mem(|a| a.cmpxchg(dword_ptr(rax), ecx)), fixed(&[4], &[4]));
    assert_eq!(mem(|a| a.cmpxchg16b(xmmword_ptr(rax))), fixed(&[16], &[16]));
}

#[test]
fn no_access() {
    assert_eq!(mem(|a| a.lea(rax, ptr(rbx + 8))), fixed(&[], &[]));
    assert_eq!(mem(|a| a.prefetcht0(byte_ptr(rbx))), fixed(&[], &[]));
    assert_eq!(mem(|a| a.nop_1(dword_ptr(rbx))), fixed(&[], &[]));
    assert_eq!(mem(|a| a.clflush(byte_ptr(rbx))), fixed(&[], &[]));
    assert_eq!(
        mem(|a| a.vgatherpf0dps(ptr(rax + zmm1 * 4).k1())),
        fixed(&[], &[])
    );
}

#[test]
fn string_instructions() {
    assert_eq!(mem(|a| a.movsb()), fixed(&[1], &[1]));
    assert_eq!(mem(|a| a.lodsq()), fixed(&[8], &[]));
    assert_eq!(mem(|a| a.stosd()), fixed(&[], &[4]));
    assert_eq!(mem(|a| a.rep().movsb()), dynamic(DynamicMem::RepString));
    assert_eq!(mem(|a| a.rep().stosq()), dynamic(DynamicMem::RepString));
    assert_eq!(mem(|a| a.repe().cmpsb()), dynamic(DynamicMem::RepString));
    assert_eq!(mem(|a| a.repne().scasb()), dynamic(DynamicMem::RepString));
}

#[test]
fn masked() {
    assert_eq!(
        mem(|a| a.vmaskmovps(ymm0, ymm1, ymmword_ptr(rax))),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vmaskmovpd(xmmword_ptr(rax), xmm1, xmm0)),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vpmaskmovd(ymm0, ymm1, ymmword_ptr(rax))),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.maskmovdqu(xmm0, xmm1)),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vmovups(zmm0.k1(), zmmword_ptr(rax))),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vmovups(zmmword_ptr(rax).k1(), zmm0)),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vaddps(zmm0.k1().z(), zmm1, zmmword_ptr(rax))),
        dynamic(DynamicMem::Masked)
    );
    assert_eq!(
        mem(|a| a.vaddps(zmm0.k1(), zmm1, dword_bcst(rax))),
        dynamic(DynamicMem::Masked)
    );
    // Without an opmask, the same forms are static.
    assert_eq!(
        mem(|a| a.vmovups(zmm0, zmmword_ptr(rax))),
        fixed(&[64], &[])
    );
    assert_eq!(
        mem(|a| a.vmovups(zmmword_ptr(rax), zmm0)),
        fixed(&[], &[64])
    );
}

#[test]
fn gathers_and_scatters() {
    assert_eq!(
        mem(|a| a.vgatherdpd_3(ymm0, ptr(rax + xmm1 * 8), ymm2)),
        dynamic(DynamicMem::GatherScatter)
    );
    assert_eq!(
        mem(|a| a.vgatherdpd(zmm0.k1(), ptr(rax + ymm1 * 8))),
        dynamic(DynamicMem::GatherScatter)
    );
    assert_eq!(
        mem(|a| a.vpgatherdd_3(xmm0, ptr(rax + xmm1 * 4), xmm2)),
        dynamic(DynamicMem::GatherScatter)
    );
    assert_eq!(
        mem(|a| a.vscatterdps(ptr(rax + zmm1 * 4).k1(), zmm0)),
        dynamic(DynamicMem::GatherScatter)
    );
}

#[test]
fn state_dependent() {
    assert_eq!(
        mem(|a| a.xsave(ptr(rax))),
        dynamic(DynamicMem::StateDependent)
    );
    assert_eq!(
        mem(|a| a.xrstor64(ptr(rax))),
        dynamic(DynamicMem::StateDependent)
    );
    assert_eq!(
        mem(|a| a.xsaveopt(ptr(rax))),
        dynamic(DynamicMem::StateDependent)
    );
    assert_eq!(
        mem(|a| a.tileloadd(tmm0, ptr(rax + rbx))),
        dynamic(DynamicMem::StateDependent)
    );
}

#[test]
fn x87_environment_is_fixed() {
    assert_eq!(mem(|a| a.fnsave(ptr(rax))), fixed(&[], &[108]));
    assert_eq!(mem(|a| a.fldenv(ptr(rax))), fixed(&[28], &[]));
}

/// Every register form of every encoding (legacy with and without 66, F2,
/// F3 and REX.W over the one-byte, 0F, 0F38 and 0F3A maps and every mod=11
/// ModRM; VEX over its three maps, EVEX over its five, each L, W and
/// prefix, every reg field), decoded: where the classifier skips iced's
/// instruction-info factory (`touches_no_memory`), the factory finds no
/// memory access either. This is what makes the shortcut exact.
#[test]
fn register_forms_the_classifier_skips_touch_no_memory() {
    use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, OpAccess};
    use std::collections::BTreeSet;
    let mut factory = InstructionInfoFactory::new();
    let (mut skipped, mut wrong) = (0u32, BTreeSet::new());
    let mut check = |bytes: &[u8]| {
        let mut d = Decoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE);
        let insn = d.decode();
        if insn.is_invalid() || !flopscope_isa::touches_no_memory(&insn) {
            return;
        }
        skipped += 1;
        let touches = factory
            .info(&insn)
            .used_memory()
            .iter()
            .any(|m| !matches!(m.access(), OpAccess::None | OpAccess::NoMemAccess));
        if touches {
            wrong.insert(format!("{:?} ({insn})", insn.mnemonic()));
        }
    };
    let tail = [0u8; 8];
    let prefixes: [&[u8]; 8] = [
        &[],
        &[0x66],
        &[0xf2],
        &[0xf3],
        &[0x48],
        &[0x66, 0x48],
        &[0xf2, 0x48],
        &[0xf3, 0x48],
    ];
    let maps: [&[u8]; 4] = [&[], &[0x0f], &[0x0f, 0x38], &[0x0f, 0x3a]];
    for p in prefixes {
        for m in maps {
            for op in 0..=255u8 {
                for modrm in 0xc0..=0xffu8 {
                    let bytes = [p, m, &[op, modrm], &tail[..]].concat();
                    check(&bytes);
                }
            }
        }
    }
    for map in 1..=3u8 {
        for w in 0..2u8 {
            for l in 0..2u8 {
                for pp in 0..4u8 {
                    // R X B set (not extended), vvvv 1111 (unused), as encoded.
                    let vex = [0xc4, 0xe0 | map, (w << 7) | 0x78 | (l << 2) | pp];
                    for op in 0..=255u8 {
                        for reg in 0..8u8 {
                            let bytes = [&vex[..], &[op, 0xc1 | (reg << 3)], &tail[..]].concat();
                            check(&bytes);
                        }
                    }
                }
            }
        }
    }
    for map in [1u8, 2, 3, 5, 6] {
        for w in 0..2u8 {
            for ll in 0..3u8 {
                for pp in 0..4u8 {
                    let evex = [
                        0x62,
                        0xf0 | map,
                        (w << 7) | 0x78 | 0x04 | pp,
                        (ll << 5) | 0x08,
                    ];
                    for op in 0..=255u8 {
                        for reg in 0..8u8 {
                            let bytes = [&evex[..], &[op, 0xc1 | (reg << 3)], &tail[..]].concat();
                            check(&bytes);
                        }
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "skipped by the classifier, yet iced lists memory accesses: {wrong:#?}"
    );
    assert!(skipped > 50_000, "only {skipped} register forms decoded");
}
