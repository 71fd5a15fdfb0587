//! The floating-point mnemonics that count no FLOP, declared, so that the
//! completeness test can tell a decision from an omission. flop-rules.md:
//! "Not counted as FLOP (they still appear in the instruction mix): compares,
//! conversions, rounding, blends, shuffles, logical ops, moves, broadcasts,
//! loads and stores, integer SIMD". Decisions beyond that list are written
//! next to their group.

use iced_x86::Mnemonic::{self, *};

/// Floating-point instructions that are not FLOP instructions.
#[rustfmt::skip]
pub static NOT_FLOP: &[Mnemonic] = &[
    // Compares and classification. VRANGE* selects the min/max/absolute value by imm8: a
    // compare-and-select, no arithmetic result.
    Cmppd, Cmpps, Cmpsd, Cmpss, Comisd, Comiss, Fcom, Fcomi, Fcomip, Fcomp, Fcompp, Ficom, Ficomp,
    Ftst, Fucom, Fucomi, Fucomip, Fucomp, Fucompp, Fxam, Pfcmpeq, Pfcmpge, Pfcmpgt, Ucomisd,
    Ucomiss, Vcmppd, Vcmpph, Vcmpps, Vcmpsd, Vcmpsh, Vcmpss, Vcomisd, Vcomish, Vcomiss, Vfpclasspd,
    Vfpclassph, Vfpclassps, Vfpclasssd, Vfpclasssh, Vfpclassss, Vrangepd, Vrangeps, Vrangesd,
    Vrangess, Vucomisd, Vucomish, Vucomiss,
    // Conversions between precisions and to/from integers (including x87 FILD/FIST*, BCD
    // FBLD/FBSTP and the AVX-NE-CONVERT loads).
    Cvtdq2pd, Cvtdq2ps, Cvtpd2dq, Cvtpd2pi, Cvtpd2ps, Cvtpi2pd, Cvtpi2ps, Cvtps2dq, Cvtps2pd,
    Cvtps2pi, Cvtsd2si, Cvtsd2ss, Cvtsi2sd, Cvtsi2ss, Cvtss2sd, Cvtss2si, Cvttpd2dq, Cvttpd2pi,
    Cvttps2dq, Cvttps2pi, Cvttsd2si, Cvttss2si, Fbld, Fbstp, Fild, Fist, Fistp, Fisttp, Pf2id,
    Pf2iw, Pi2fd, Pi2fw, Vbcstnebf162ps, Vbcstnesh2ps, Vcvtdq2pd, Vcvtdq2ph, Vcvtdq2ps,
    Vcvtne2ps2bf16, Vcvtneebf162ps, Vcvtneeph2ps, Vcvtneobf162ps, Vcvtneoph2ps, Vcvtneps2bf16,
    Vcvtpd2dq, Vcvtpd2ph, Vcvtpd2ps, Vcvtpd2qq, Vcvtpd2udq, Vcvtpd2uqq, Vcvtph2dq, Vcvtph2pd,
    Vcvtph2ps, Vcvtph2psx, Vcvtph2qq, Vcvtph2udq, Vcvtph2uqq, Vcvtph2uw, Vcvtph2w, Vcvtps2dq,
    Vcvtps2pd, Vcvtps2ph, Vcvtps2phx, Vcvtps2qq, Vcvtps2udq, Vcvtps2uqq, Vcvtqq2pd, Vcvtqq2ph,
    Vcvtqq2ps, Vcvtsd2sh, Vcvtsd2si, Vcvtsd2ss, Vcvtsd2usi, Vcvtsh2sd, Vcvtsh2si, Vcvtsh2ss,
    Vcvtsh2usi, Vcvtsi2sd, Vcvtsi2sh, Vcvtsi2ss, Vcvtss2sd, Vcvtss2sh, Vcvtss2si, Vcvtss2usi,
    Vcvttpd2dq, Vcvttpd2qq, Vcvttpd2udq, Vcvttpd2uqq, Vcvttph2dq, Vcvttph2qq, Vcvttph2udq,
    Vcvttph2uqq, Vcvttph2uw, Vcvttph2w, Vcvttps2dq, Vcvttps2qq, Vcvttps2udq, Vcvttps2uqq,
    Vcvttsd2si, Vcvttsd2usi, Vcvttsh2si, Vcvttsh2usi, Vcvttss2si, Vcvttss2usi, Vcvtudq2pd,
    Vcvtudq2ph, Vcvtudq2ps, Vcvtuqq2pd, Vcvtuqq2ph, Vcvtuqq2ps, Vcvtusi2sd, Vcvtusi2sh, Vcvtusi2ss,
    Vcvtuw2ph, Vcvtw2ph,
    // Rounding (ROUNDPS, VRNDSCALE*, FRNDINT), fraction and
    // reduction (VREDUCE*, XOP VFRCZ*), and exponent/mantissa manipulation (VGETEXP*,
    // VGETMANT*, VSCALEF*, FSCALE, FXTRACT) and special-value fix-ups (VFIXUPIMM*): they
    // rewrite exponents, signs and rounding, like the rounding flop-rules.md excludes.
    Frndint, Fscale, Fxtract, Roundpd, Roundps, Roundsd, Roundss,
    Vfixupimmpd, Vfixupimmps, Vfixupimmsd, Vfixupimmss, Vfrczpd, Vfrczps, Vfrczsd, Vfrczss,
    Vgetexppd, Vgetexpph, Vgetexpps, Vgetexpsd, Vgetexpsh, Vgetexpss, Vgetmantpd, Vgetmantph,
    Vgetmantps, Vgetmantsd, Vgetmantsh, Vgetmantss, Vreducepd, Vreduceph, Vreduceps, Vreducesd,
    Vreducesh, Vreducess, Vrndscalepd, Vrndscaleph, Vrndscaleps, Vrndscalesd, Vrndscalesh,
    Vrndscaless, Vroundpd, Vroundps, Vroundsd, Vroundss, Vscalefpd, Vscalefph, Vscalefps, Vscalefsd,
    Vscalefsh, Vscalefss,
    // Logical and sign operations (bitwise on the encoding): ANDPS, XORPD, FABS, FCHS, VTESTPS.
    Andnpd, Andnps, Andpd, Andps, Fabs, Fchs, Orpd, Orps, Vandnpd, Vandnps, Vandpd, Vandps, Vorpd,
    Vorps, Vtestpd, Vtestps, Vxorpd, Vxorps, Xorpd, Xorps,
    // Blends, shuffles, permutes, inserts/extracts, expand/compress.
    Blendpd, Blendps, Blendvpd, Blendvps, Extractps, Insertps, Pswapd, Shufpd, Shufps, Unpckhpd,
    Unpckhps, Unpcklpd, Unpcklps, Vblendmpd, Vblendmps, Vblendpd, Vblendps, Vblendvpd, Vblendvps,
    Vcompresspd, Vcompressps, Vexpandpd, Vexpandps, Vextractf128, Vextractf32x4, Vextractf32x8,
    Vextractf64x2, Vextractf64x4, Vextractps, Vinsertf128, Vinsertf32x4, Vinsertf32x8, Vinsertf64x2,
    Vinsertf64x4, Vinsertps, Vperm2f128, Vpermi2pd, Vpermi2ps, Vpermil2pd, Vpermil2ps, Vpermilpd,
    Vpermilps, Vpermpd, Vpermps, Vpermt2pd, Vpermt2ps, Vshuff32x4, Vshuff64x2, Vshufpd, Vshufps,
    Vunpckhpd, Vunpckhps, Vunpcklpd, Vunpcklps,
    // Moves, loads, stores, broadcasts, masked moves, gathers/scatters and their prefetches,
    // x87 loads/stores/constants, FXCH and FCMOVcc.
    Fcmovb, Fcmovbe, Fcmove, Fcmovnb, Fcmovnbe, Fcmovne, Fcmovnu, Fcmovu, Fld, Fld1, Fldl2e, Fldl2t,
    Fldlg2, Fldln2, Fldpi, Fldz, Fst, Fstp, Fstpnce, Fxch, Movapd, Movaps, Movddup, Movhlps, Movhpd,
    Movhps, Movlhps, Movlpd, Movlps, Movmskpd, Movmskps, Movntpd, Movntps, Movntsd, Movntss, Movsd,
    Movshdup, Movsldup, Movss, Movupd, Movups, Vbroadcastf128, Vbroadcastf32x2, Vbroadcastf32x4,
    Vbroadcastf32x8, Vbroadcastf64x2, Vbroadcastf64x4, Vbroadcastsd, Vbroadcastss, Vgatherdpd,
    Vgatherdps, Vgatherpf0dpd, Vgatherpf0dps, Vgatherpf0qpd, Vgatherpf0qps, Vgatherpf1dpd,
    Vgatherpf1dps, Vgatherpf1qpd, Vgatherpf1qps, Vgatherqpd, Vgatherqps, Vmaskmovpd, Vmaskmovps,
    Vmovapd, Vmovaps, Vmovddup, Vmovhlps, Vmovhpd, Vmovhps, Vmovlhps, Vmovlpd, Vmovlps, Vmovmskpd,
    Vmovmskps, Vmovntpd, Vmovntps, Vmovsd, Vmovsh, Vmovshdup, Vmovsldup, Vmovss, Vmovupd, Vmovups,
    Vscatterdpd, Vscatterdps, Vscatterpf0dpd, Vscatterpf0dps, Vscatterpf0qpd, Vscatterpf0qps,
    Vscatterpf1dpd, Vscatterpf1dps, Vscatterpf1qpd, Vscatterpf1qps, Vscatterqpd, Vscatterqps,
    // x87 control and state: control/status words, environment, stack pointer, FPU save and
    // restore.
    Fclex, Fdecstp, Fdisi, Feni, Ffree, Ffreep, Fincstp, Finit, Fldcw, Fldenv, Fnclex, Fndisi,
    Fneni, Fninit, Fnop, Fnsave, Fnsetpm, Fnstcw, Fnstenv, Fnstsw, Frstor, Fsave, Fsetpm,
    Fstcw, Fstenv, Fstsw,
    // 3DNow! integer instructions (3DNow! encoding, integer elements).
    Pavgusb, Pmulhrw,
    // AMX tile floating-point ops (TDPBF16PS, TDPFP16PS, TCMMxxFP16PS): flop-rules.md reports AMX
    // apart, as `amx`, never mixed into FLOP.
    Tcmmimfp16ps, Tcmmrlfp16ps, Tdpbf16ps, Tdpfp16ps,
];
