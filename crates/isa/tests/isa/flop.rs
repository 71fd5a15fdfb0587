//! Exact FLOP per instruction family, against flop-rules.md. Each case is
//! written `precision lanes/width_bits op[ masked] = FLOP by category`.

use crate::asm::{evex, fp, info, insn};
use flopscope_isa::{classify, FlopSplit, FpOp};
use iced_x86::code_asm::*;

fn split(s: FlopSplit) -> String {
    let parts: Vec<String> = s
        .iter()
        .map(|(op, n)| format!("{} {n}", op.key()))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

/// `fp32 4/128 add = add 4`.
fn show(fp: FpOp) -> String {
    let k = fp.key;
    let masked = if k.masked { " masked" } else { "" };
    format!(
        "{} {}/{} {}{masked} = {}",
        k.precision.key(),
        k.lanes,
        k.width_bits,
        k.op.key(),
        split(fp.flop)
    )
}

/// FLOP per active lane.
fn per_lane(fp: FpOp) -> String {
    split(fp.flop_per_lane)
}

/// Classifies the EVEX encoding (the assembler picks VEX for xmm/ymm forms
/// unless forced, dropping the opmask).
fn fp_evex(emit: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> FpOp {
    classify(&evex(emit)).fp.unwrap()
}

#[test]
fn sse_arithmetic() {
    assert_eq!(show(fp(|a| a.addps(xmm0, xmm1))), "fp32 4/128 add = add 4");
    assert_eq!(show(fp(|a| a.addsd(xmm0, xmm1))), "fp64 1/64 add = add 1");
    assert_eq!(
        show(fp(|a| a.subss(xmm0, dword_ptr(rax)))),
        "fp32 1/32 sub = sub 1"
    );
    assert_eq!(show(fp(|a| a.mulpd(xmm0, xmm1))), "fp64 2/128 mul = mul 2");
    assert_eq!(show(fp(|a| a.divss(xmm0, xmm1))), "fp32 1/32 div = div 1");
    assert_eq!(
        show(fp(|a| a.sqrtpd(xmm0, xmm1))),
        "fp64 2/128 sqrt = sqrt 2"
    );
    assert_eq!(
        show(fp(|a| a.minps(xmm0, xmm1))),
        "fp32 4/128 minmax = minmax 4"
    );
    assert_eq!(
        show(fp(|a| a.maxsd(xmm0, xmm1))),
        "fp64 1/64 minmax = minmax 1"
    );
    assert_eq!(show(fp(|a| a.rcpps(xmm0, xmm1))), "fp32 4/128 rcp = rcp 4");
    assert_eq!(show(fp(|a| a.rsqrtss(xmm0, xmm1))), "fp32 1/32 rcp = rcp 1");
    assert_eq!(per_lane(fp(|a| a.addps(xmm0, xmm1))), "add 1");
}

#[test]
fn horizontal_and_alternating() {
    assert_eq!(
        show(fp(|a| a.haddpd(xmm0, xmm1))),
        "fp64 2/128 hadd = add 2"
    );
    assert_eq!(
        show(fp(|a| a.hsubps(xmm0, xmm1))),
        "fp32 4/128 hsub = sub 4"
    );
    assert_eq!(
        show(fp(|a| a.vhaddps(ymm0, ymm1, ymm2))),
        "fp32 8/256 hadd = add 8"
    );
    assert_eq!(
        show(fp(|a| a.addsubpd(xmm0, xmm1))),
        "fp64 2/128 addsub = add 1 + sub 1"
    );
    assert_eq!(
        show(fp(|a| a.addsubps(xmm0, xmm1))),
        "fp32 4/128 addsub = add 2 + sub 2"
    );
    assert_eq!(
        show(fp(|a| a.vaddsubpd(ymm0, ymm1, ymm2))),
        "fp64 4/256 addsub = add 2 + sub 2"
    );
    // Lanes do not all cost the same: no per-lane split (never masked).
    assert_eq!(per_lane(fp(|a| a.addsubps(xmm0, xmm1))), "0");
}

#[test]
fn dot_products_count_the_products_imm8_selects() {
    assert_eq!(
        show(fp(|a| a.dpps(xmm0, xmm1, 0xFF))),
        "fp32 4/128 dot = mul 4 + add 3"
    );
    assert_eq!(
        show(fp(|a| a.dpps(xmm0, xmm1, 0x71))),
        "fp32 4/128 dot = mul 3 + add 2"
    );
    assert_eq!(
        show(fp(|a| a.dpps(xmm0, xmm1, 0x31))),
        "fp32 4/128 dot = mul 2 + add 1"
    );
    assert_eq!(show(fp(|a| a.dpps(xmm0, xmm1, 0x0F))), "fp32 4/128 dot = 0");
    assert_eq!(
        show(fp(|a| a.dppd(xmm0, xmm1, 0x31))),
        "fp64 2/128 dot = mul 2 + add 1"
    );
    assert_eq!(
        show(fp(|a| a.dppd(xmm0, xmm1, 0x11))),
        "fp64 2/128 dot = mul 1"
    );
    // imm8[7:6] select nothing in DPPD.
    let f = fp(|a| a.dppd(xmm0, xmmword_ptr(rax), 0xF3));
    assert_eq!(show(f), "fp64 2/128 dot = mul 2 + add 1");
    // VDPPS ymm: two 128-bit blocks.
    assert_eq!(
        show(fp(|a| a.vdpps(ymm0, ymm1, ymm2, 0xF1))),
        "fp32 8/256 dot = mul 8 + add 6"
    );
    assert_eq!(
        show(fp(|a| a.vdpps(ymm0, ymm1, ymm2, 0x31))),
        "fp32 8/256 dot = mul 4 + add 2"
    );
}

#[test]
fn avx_256() {
    assert_eq!(
        show(fp(|a| a.vaddpd(ymm0, ymm1, ymm2))),
        "fp64 4/256 add = add 4"
    );
    assert_eq!(
        show(fp(|a| a.vmulps(ymm0, ymm1, ymmword_ptr(rax)))),
        "fp32 8/256 mul = mul 8"
    );
    assert_eq!(
        show(fp(|a| a.vsqrtps(xmm0, xmm1))),
        "fp32 4/128 sqrt = sqrt 4"
    );
}

#[test]
fn fma3_every_form() {
    assert_eq!(
        show(fp(|a| a.vfmadd132ps(xmm0, xmm1, xmm2))),
        "fp32 4/128 fma = fma 8"
    );
    let f = fp(|a| a.vfmadd213ps(ymm0, ymm1, ymmword_ptr(rax)));
    assert_eq!(show(f), "fp32 8/256 fma = fma 16");
    assert_eq!(
        show(fp(|a| a.vfmadd231pd(ymm0, ymm1, ymm2))),
        "fp64 4/256 fma = fma 8"
    );
    let f = fp(|a| a.vfmadd132pd(xmm0, xmm1, xmmword_ptr(rax)));
    assert_eq!(show(f), "fp64 2/128 fma = fma 4");
    let f = fp(|a| a.vfmadd231ss(xmm0, xmm1, dword_ptr(rax)));
    assert_eq!(show(f), "fp32 1/32 fma = fma 2");
    let f = fp(|a| a.vfmadd213sd(xmm0, xmm1, qword_ptr(rax)));
    assert_eq!(show(f), "fp64 1/64 fma = fma 2");
    assert_eq!(
        show(fp(|a| a.vfmsub132ps(ymm0, ymm1, ymm2))),
        "fp32 8/256 fma = fma 16"
    );
    assert_eq!(
        show(fp(|a| a.vfnmadd231pd(xmm0, xmm1, xmm2))),
        "fp64 2/128 fma = fma 4"
    );
    assert_eq!(
        show(fp(|a| a.vfnmsub213ss(xmm0, xmm1, xmm2))),
        "fp32 1/32 fma = fma 2"
    );
    assert_eq!(
        show(fp(|a| a.vfnmsub231sd(xmm0, xmm1, xmm2))),
        "fp64 1/64 fma = fma 2"
    );
    assert_eq!(
        show(fp(|a| a.vfmaddsub213ps(ymm0, ymm1, ymm2))),
        "fp32 8/256 fma = fma 16"
    );
    let f = fp(|a| a.vfmsubadd231pd(ymm0, ymm1, ymmword_ptr(rax)));
    assert_eq!(show(f), "fp64 4/256 fma = fma 8");
    assert_eq!(per_lane(fp(|a| a.vfmadd231pd(ymm0, ymm1, ymm2))), "fma 2");
    // The memory operand is read whole.
    assert_eq!(
        info(|a| a.vfmadd213ps(ymm0, ymm1, ymmword_ptr(rax)))
            .mem
            .reads,
        [32]
    );
    assert_eq!(
        info(|a| a.vfmadd231ss(xmm0, xmm1, dword_ptr(rax)))
            .mem
            .reads,
        [4]
    );
}

#[test]
fn fma4() {
    assert_eq!(
        show(fp(|a| a.vfmaddps(xmm0, xmm1, xmm2, xmm3))),
        "fp32 4/128 fma = fma 8"
    );
    let f = fp(|a| a.vfmaddpd(ymm0, ymm1, ymmword_ptr(rax), ymm3));
    assert_eq!(show(f), "fp64 4/256 fma = fma 8");
    assert_eq!(
        show(fp(|a| a.vfnmsubsd(xmm0, xmm1, xmm2, xmm3))),
        "fp64 1/64 fma = fma 2"
    );
    assert_eq!(
        show(fp(|a| a.vfmaddsubps(ymm0, ymm1, ymm2, ymm3))),
        "fp32 8/256 fma = fma 16"
    );
}

#[test]
fn avx512_packed_masked_and_broadcast() {
    let f = fp(|a| a.vaddps(zmm0, zmm1, zmm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("fp32 16/512 add = add 16".into(), "add 1".into())
    );

    // {k1}: `flop` has every lane, `flop_per_lane` what each active lane adds.
    let f = fp(|a| a.vfmadd231pd(zmm0.k1(), zmm1, zmm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("fp64 8/512 fma masked = fma 16".into(), "fma 2".into())
    );
    // {k1}{z} alike.
    let f = fp(|a| a.vaddpd(zmm0.k1().z(), zmm1, zmm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("fp64 8/512 add masked = add 8".into(), "add 1".into())
    );

    // {1to8}: lanes from the register; one 8-byte element read.
    let i = info(|a| a.vaddpd(zmm0, zmm1, qword_bcst(rax)));
    assert_eq!(show(i.fp.unwrap()), "fp64 8/512 add = add 8");
    assert_eq!(
        (i.mem.reads.iter().collect::<Vec<_>>(), i.mem.dynamic),
        (vec![8], None)
    );
    let f = fp(|a| a.vfmadd231ps(ymm0, ymm1, dword_bcst(rax)));
    assert_eq!(show(f), "fp32 8/256 fma = fma 16");

    // Scalar with a mask.
    let f = fp_evex(|a| a.vaddss(xmm0.k1(), xmm1, xmm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("fp32 1/32 add masked = add 1".into(), "add 1".into())
    );

    let f = fp_evex(|a| a.vmaxpd(ymm16, ymm17, ymm18));
    assert_eq!(show(f), "fp64 4/256 minmax = minmax 4");
}

#[test]
fn avx512_approximations() {
    assert_eq!(
        show(fp(|a| a.vrcp14pd(zmm0, zmm1))),
        "fp64 8/512 rcp = rcp 8"
    );
    assert_eq!(
        show(fp(|a| a.vrsqrt14ps(ymm0, ymm1))),
        "fp32 8/256 rcp = rcp 8"
    );
    assert_eq!(
        show(fp(|a| a.vrcp14sd(xmm0, xmm1, xmm2))),
        "fp64 1/64 rcp = rcp 1"
    );
    assert_eq!(
        show(fp(|a| a.vrcp28pd(zmm0, zmm1))),
        "fp64 8/512 rcp = rcp 8"
    );
    assert_eq!(
        show(fp(|a| a.vrsqrt28ss(xmm0, xmm1, xmm2))),
        "fp32 1/32 rcp = rcp 1"
    );
    assert_eq!(
        show(fp(|a| a.vexp2pd(zmm0, zmm1))),
        "fp64 8/512 other = other 8"
    );
}

#[test]
fn avx512_bf16_dot_product() {
    // 16 fp32 results, each accumulating two bf16 products: 4 FLOP, as fma.
    let f = fp(|a| a.vdpbf16ps(zmm0, zmm1, zmm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("bf16 16/512 dot = fma 64".into(), "fma 4".into())
    );
    let f = fp(|a| a.vdpbf16ps(ymm0.k1(), ymm1, dword_bcst(rax)));
    assert_eq!(show(f), "bf16 8/256 dot masked = fma 32");
}

#[test]
fn avx512_fp16() {
    assert_eq!(
        show(fp(|a| a.vaddph(zmm0, zmm1, zmm2))),
        "fp16 32/512 add = add 32"
    );
    assert_eq!(
        show(fp(|a| a.vaddsh(xmm0, xmm1, xmm2))),
        "fp16 1/16 add = add 1"
    );
    assert_eq!(
        show(fp(|a| a.vfmadd231ph(ymm0, ymm1, ymm2))),
        "fp16 16/256 fma = fma 32"
    );
    assert_eq!(
        show(fp(|a| a.vsqrtph(xmm0, xmm1))),
        "fp16 8/128 sqrt = sqrt 8"
    );
    assert_eq!(
        show(fp(|a| a.vrcpph(zmm0, zmm1))),
        "fp16 32/512 rcp = rcp 32"
    );
    assert_eq!(
        show(fp(|a| a.vminph(zmm0, zmm1, zmm2))),
        "fp16 32/512 minmax = minmax 32"
    );
    let f = fp(|a| a.vfmadd213sh(xmm0.k1(), xmm1, xmm2));
    assert_eq!(show(f), "fp16 1/16 fma masked = fma 2");
}

#[test]
fn avx512_fp16_complex() {
    // A lane is one complex number (2 x fp16): multiply = 4 mul + 2 add,
    // multiply-add = 8, as fma.
    let f = fp(|a| a.vfmulcph(xmm0, xmm1, xmm2));
    assert_eq!(show(f), "fp16 4/128 mul = mul 16 + add 8");
    assert_eq!(per_lane(f), "mul 4 + add 2");
    assert_eq!(
        show(fp(|a| a.vfcmulcsh(xmm0, xmm1, xmm2))),
        "fp16 1/32 mul = mul 4 + add 2"
    );
    assert_eq!(
        show(fp(|a| a.vfmaddcph(zmm0, zmm1, zmm2))),
        "fp16 16/512 fma = fma 128"
    );
    let f = fp(|a| a.vfcmaddcph(ymm0.k1(), ymm1, ymm2));
    assert_eq!(
        (show(f), per_lane(f)),
        ("fp16 8/256 fma masked = fma 64".into(), "fma 8".into())
    );
}

#[test]
fn avx512_4fmaps() {
    // Four chained FMAs per lane.
    let i = info(|a| a.v4fmaddps(zmm0, zmm4, xmmword_ptr(rax)));
    assert_eq!(
        (show(i.fp.unwrap()), i.mem.reads.iter().collect::<Vec<_>>()),
        ("fp32 16/512 fma = fma 128".into(), vec![16])
    );
    let f = fp(|a| a.v4fnmaddss(xmm0, xmm4, xmmword_ptr(rax)));
    assert_eq!(show(f), "fp32 1/32 fma = fma 8");
}

#[test]
fn x87() {
    assert_eq!(show(fp(|a| a.fadd_2(st0, st1))), "x87 1/80 add = add 1");
    assert_eq!(show(fp(|a| a.faddp(st1, st0))), "x87 1/80 add = add 1");
    let i = info(|a| a.fiadd(dword_ptr(rax)));
    assert_eq!(
        (show(i.fp.unwrap()), i.mem.reads.iter().collect::<Vec<_>>()),
        ("x87 1/80 add = add 1".into(), vec![4])
    );
    assert_eq!(
        show(fp(|a| a.fsubr(qword_ptr(rax)))),
        "x87 1/80 sub = sub 1"
    );
    assert_eq!(show(fp(|a| a.fmulp(st1, st0))), "x87 1/80 mul = mul 1");
    assert_eq!(
        show(fp(|a| a.fidivr(word_ptr(rax)))),
        "x87 1/80 div = div 1"
    );
    assert_eq!(show(fp(|a| a.fsqrt())), "x87 1/80 sqrt = sqrt 1");
    // Transcendentals: 1 per result, class other.
    assert_eq!(show(fp(|a| a.fsin())), "x87 1/80 other = other 1");
    assert_eq!(show(fp(|a| a.fsincos())), "x87 1/80 other = other 2");
    assert_eq!(show(fp(|a| a.fyl2x())), "x87 1/80 other = other 1");

    let i = info(|a| a.fld(qword_ptr(rax)));
    assert_eq!(
        (i.fp, i.mem.reads.iter().collect::<Vec<_>>()),
        (None, vec![8])
    );
    let i = info(|a| a.fstp(tword_ptr(rax)));
    assert_eq!(
        (i.fp, i.mem.writes.iter().collect::<Vec<_>>()),
        (None, vec![10])
    );
    let not_flop = [
        insn(|a| a.fscale()),
        insn(|a| a.fabs()),
        insn(|a| a.fchs()),
        insn(|a| a.fxch(st0, st1)),
        insn(|a| a.fcom_2(st0, st1)),
        insn(|a| a.frndint()),
    ];
    for i in not_flop {
        assert_eq!(classify(&i).fp, None, "{i}");
    }
}

#[test]
fn amd_3dnow() {
    assert_eq!(show(fp(|a| a.pfadd(mm0, mm1))), "fp32 2/64 add = add 2");
    assert_eq!(
        show(fp(|a| a.pfmul(mm0, qword_ptr(rax)))),
        "fp32 2/64 mul = mul 2"
    );
    assert_eq!(show(fp(|a| a.pfrcp(mm0, mm1))), "fp32 1/32 rcp = rcp 1");
    assert_eq!(
        show(fp(|a| a.pfpnacc(mm0, mm1))),
        "fp32 2/64 addsub = add 1 + sub 1"
    );
    assert_eq!(show(fp(|a| a.pfacc(mm0, mm1))), "fp32 2/64 hadd = add 2");
}

#[test]
fn not_flop() {
    let cases = [
        insn(|a| a.cmpps(xmm0, xmm1, 1)),
        insn(|a| a.vcmppd(k1, zmm0, zmm1, 1)),
        insn(|a| a.comisd(xmm0, xmm1)),
        insn(|a| a.cvtsi2sd(xmm0, rax)),
        insn(|a| a.vcvtps2pd(zmm0, ymm1)),
        insn(|a| a.roundpd(xmm0, xmm1, 1)),
        insn(|a| a.vrndscaleps(zmm0, zmm1, 1)),
        insn(|a| a.andps(xmm0, xmm1)),
        insn(|a| a.vxorpd(ymm0, ymm1, ymm2)),
        insn(|a| a.movaps(xmm0, xmm1)),
        insn(|a| a.vbroadcastsd(ymm0, xmm1)),
        insn(|a| a.vblendvps(ymm0, ymm1, ymm2, ymm3)),
        insn(|a| a.shufps(xmm0, xmm1, 0)),
        insn(|a| a.vpaddd(ymm0, ymm1, ymm2)),
        insn(|a| a.vpdpbusd(zmm0, zmm1, zmm2)),
        insn(|a| a.vgetexppd(zmm0, zmm1)),
        insn(|a| a.vgetmantps(zmm0, zmm1, 0)),
        insn(|a| a.vscalefpd(zmm0, zmm1, zmm2)),
        insn(|a| a.vfixupimmpd(zmm0, zmm1, zmm2, 0)),
        insn(|a| a.vrangeps(zmm0, zmm1, zmm2, 0)),
        insn(|a| a.vreducepd(zmm0, zmm1, 0)),
        insn(|a| a.vfpclassps(k1, zmm0, 0)),
        insn(|a| a.tdpbf16ps(tmm0, tmm1, tmm2)),
        insn(|a| a.add(rax, rbx)),
    ];
    for i in cases {
        assert_eq!(classify(&i).fp, None, "{i}");
    }
}
