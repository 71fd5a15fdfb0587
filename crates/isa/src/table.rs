//! The one FLOP table: which x86 mnemonics are floating-point arithmetic, and
//! how much each element costs. It implements the FLOP table of
//! shared/reference/flop-rules.md; where that file is silent, the decision is
//! written next to the row that makes it.
//!
//! [`FLOP_ROWS`] lists every FLOP mnemonic; [`NOT_FLOP`] (in `not_flop.rs`)
//! lists the floating-point mnemonics that deliberately count no FLOP. A
//! mnemonic is in at most one of them, and the completeness test fails on any
//! floating-point `iced_x86::Code` whose mnemonic is in neither.
//!
//! Rows are keyed by [`Mnemonic`], so legacy SSE, VEX and EVEX forms of one
//! operation share a row; the operand registers give the lanes at
//! classification time (see `lanes.rs`).

use crate::FlopSplit;
use flopscope_model::{FlopOp, OpClass, OpClass as O, Precision};
use iced_x86::Mnemonic::{self, *};
use std::sync::OnceLock;
use Lane::Pair;
use Precision::{Bf16, Fp16, Fp32, Fp64, X87};
use Shape::{Packed as P, Scalar as S};

pub use crate::not_flop::NOT_FLOP;

/// Scalar or packed: how many lanes an instruction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One lane (ADDSS, FADD, PFRCP).
    Scalar,
    /// Register width / lane width lanes (ADDPS xmm = 4, VADDPD zmm = 8).
    Packed,
}

/// How the FLOP of one lane are booked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerLane {
    /// The same FLOP in every lane: ADDPS = 1 add, VFMADD231PD = 2 fma.
    Uniform(FlopSplit),
    /// ADDSUBPS, PFPNACC: half the lanes add, the other half subtract
    /// ("1 per result element", flop-rules.md).
    AddSub,
    /// DPPS, DPPD: per 128-bit block, the products selected by imm8 and the
    /// adds that sum them; see `flop.rs`.
    DotImm8,
}

/// What one lane (and one mask bit) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// One element of the row's precision.
    Element,
    /// Two elements: VDPBF16PS (two bf16 inputs per fp32 result) and the
    /// AVX512-FP16 complex forms (one complex number of two fp16).
    Pair,
}

/// The FLOP class of one mnemonic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlopRow {
    pub op: OpClass,
    pub precision: Precision,
    pub shape: Shape,
    pub lane: Lane,
    pub per_lane: PerLane,
}

impl FlopRow {
    /// Bits of one lane. Lanes, masks and `FpKey::width_bits` count in these
    /// units, so a pair lane makes `width_bits` the register width.
    pub fn lane_bits(&self) -> u32 {
        match self.lane {
            Lane::Element => self.precision.element_bits(),
            Lane::Pair => 2 * self.precision.element_bits(),
        }
    }
}

const fn split(op: FlopOp, n: u32) -> PerLane {
    PerLane::Uniform(FlopSplit::one(op, n))
}

/// The common case: the element width of `precision` is the lane, and the
/// FLOP per lane follow from the op class (flop-rules.md: 1 for add, sub,
/// mul, div, sqrt, min/max, rcp/rsqrt, one horizontal result, other; 2 for FMA).
const fn row(op: OpClass, precision: Precision, shape: Shape) -> FlopRow {
    let per_lane = match op {
        OpClass::Add | OpClass::HAdd => split(FlopOp::Add, 1),
        OpClass::Sub | OpClass::HSub => split(FlopOp::Sub, 1),
        OpClass::Mul => split(FlopOp::Mul, 1),
        OpClass::Div => split(FlopOp::Div, 1),
        OpClass::Sqrt => split(FlopOp::Sqrt, 1),
        OpClass::Fma => split(FlopOp::Fma, 2),
        OpClass::MinMax => split(FlopOp::MinMax, 1),
        OpClass::Rcp => split(FlopOp::Rcp, 1),
        OpClass::AddSub => PerLane::AddSub,
        OpClass::Dot => PerLane::DotImm8,
        OpClass::Other => split(FlopOp::Other, 1),
    };
    FlopRow {
        op,
        precision,
        shape,
        lane: Lane::Element,
        per_lane,
    }
}

const fn with(r: FlopRow, lane: Lane, per_lane: PerLane) -> FlopRow {
    FlopRow {
        lane,
        per_lane,
        ..r
    }
}

/// Every FLOP mnemonic, grouped; each group shares one [`FlopRow`].
#[rustfmt::skip]
pub static FLOP_ROWS: &[(&[Mnemonic], FlopRow)] = &[
    // SSE, AVX and AVX-512 fp32/fp64; AVX512-FP16 (precision fp16).
    (&[Addps, Vaddps], row(O::Add, Fp32, P)),
    (&[Addpd, Vaddpd], row(O::Add, Fp64, P)),
    (&[Vaddph], row(O::Add, Fp16, P)),
    (&[Addss, Vaddss], row(O::Add, Fp32, S)),
    (&[Addsd, Vaddsd], row(O::Add, Fp64, S)),
    (&[Vaddsh], row(O::Add, Fp16, S)),
    (&[Subps, Vsubps], row(O::Sub, Fp32, P)),
    (&[Subpd, Vsubpd], row(O::Sub, Fp64, P)),
    (&[Vsubph], row(O::Sub, Fp16, P)),
    (&[Subss, Vsubss], row(O::Sub, Fp32, S)),
    (&[Subsd, Vsubsd], row(O::Sub, Fp64, S)),
    (&[Vsubsh], row(O::Sub, Fp16, S)),
    (&[Mulps, Vmulps], row(O::Mul, Fp32, P)),
    (&[Mulpd, Vmulpd], row(O::Mul, Fp64, P)),
    (&[Vmulph], row(O::Mul, Fp16, P)),
    (&[Mulss, Vmulss], row(O::Mul, Fp32, S)),
    (&[Mulsd, Vmulsd], row(O::Mul, Fp64, S)),
    (&[Vmulsh], row(O::Mul, Fp16, S)),
    (&[Divps, Vdivps], row(O::Div, Fp32, P)),
    (&[Divpd, Vdivpd], row(O::Div, Fp64, P)),
    (&[Vdivph], row(O::Div, Fp16, P)),
    (&[Divss, Vdivss], row(O::Div, Fp32, S)),
    (&[Divsd, Vdivsd], row(O::Div, Fp64, S)),
    (&[Vdivsh], row(O::Div, Fp16, S)),
    (&[Sqrtps, Vsqrtps], row(O::Sqrt, Fp32, P)),
    (&[Sqrtpd, Vsqrtpd], row(O::Sqrt, Fp64, P)),
    (&[Vsqrtph], row(O::Sqrt, Fp16, P)),
    (&[Sqrtss, Vsqrtss], row(O::Sqrt, Fp32, S)),
    (&[Sqrtsd, Vsqrtsd], row(O::Sqrt, Fp64, S)),
    (&[Vsqrtsh], row(O::Sqrt, Fp16, S)),
    (&[Minps, Maxps, Vminps, Vmaxps], row(O::MinMax, Fp32, P)),
    (&[Minpd, Maxpd, Vminpd, Vmaxpd], row(O::MinMax, Fp64, P)),
    (&[Vminph, Vmaxph], row(O::MinMax, Fp16, P)),
    (&[Minss, Maxss, Vminss, Vmaxss], row(O::MinMax, Fp32, S)),
    (&[Minsd, Maxsd, Vminsd, Vmaxsd], row(O::MinMax, Fp64, S)),
    (&[Vminsh, Vmaxsh], row(O::MinMax, Fp16, S)),

    // Reciprocal and reciprocal-square-root approximations (SSE, AVX-512F
    // 14-bit, AVX-512ER 28-bit, AVX512-FP16): 1 per element, class rcp.
    (&[Rcpps, Vrcpps, Rsqrtps, Vrsqrtps, Vrcp14ps, Vrsqrt14ps, Vrcp28ps, Vrsqrt28ps], row(O::Rcp, Fp32, P)),
    (&[Vrcp14pd, Vrsqrt14pd, Vrcp28pd, Vrsqrt28pd], row(O::Rcp, Fp64, P)),
    (&[Vrcpph, Vrsqrtph], row(O::Rcp, Fp16, P)),
    (&[Rcpss, Vrcpss, Rsqrtss, Vrsqrtss, Vrcp14ss, Vrsqrt14ss, Vrcp28ss, Vrsqrt28ss], row(O::Rcp, Fp32, S)),
    (&[Vrcp14sd, Vrsqrt14sd, Vrcp28sd, Vrsqrt28sd], row(O::Rcp, Fp64, S)),
    (&[Vrcpsh, Vrsqrtsh], row(O::Rcp, Fp16, S)),

    // AVX-512ER 2^x approximation: not in flop-rules.md's table; counted like
    // the x87 transcendentals below, 1 per element in class `other`.
    (&[Vexp2ps], row(O::Other, Fp32, P)),
    (&[Vexp2pd], row(O::Other, Fp64, P)),

    // Horizontal add/sub (1 per result element, booked as add/sub) and
    // alternating add/sub (half the lanes add, half subtract).
    (&[Haddps, Vhaddps], row(O::HAdd, Fp32, P)),
    (&[Haddpd, Vhaddpd], row(O::HAdd, Fp64, P)),
    (&[Hsubps, Vhsubps], row(O::HSub, Fp32, P)),
    (&[Hsubpd, Vhsubpd], row(O::HSub, Fp64, P)),
    (&[Addsubps, Vaddsubps], row(O::AddSub, Fp32, P)),
    (&[Addsubpd, Vaddsubpd], row(O::AddSub, Fp64, P)),

    // Dot products selected by imm8 (see `flop::dot_imm8`).
    (&[Dpps, Vdpps], row(O::Dot, Fp32, P)),
    (&[Dppd, Vdppd], row(O::Dot, Fp64, P)),

    // FMA3 (132/213/231; N, SUB, ADDSUB, SUBADD forms) and AMD FMA4:
    // 2 per element, booked as fma.
    (&[Vfmadd132ps, Vfmadd213ps, Vfmadd231ps, Vfmsub132ps, Vfmsub213ps, Vfmsub231ps,
       Vfnmadd132ps, Vfnmadd213ps, Vfnmadd231ps, Vfnmsub132ps, Vfnmsub213ps, Vfnmsub231ps,
       Vfmaddsub132ps, Vfmaddsub213ps, Vfmaddsub231ps, Vfmsubadd132ps, Vfmsubadd213ps, Vfmsubadd231ps,
       Vfmaddps, Vfmsubps, Vfnmaddps, Vfnmsubps, Vfmaddsubps, Vfmsubaddps], row(O::Fma, Fp32, P)),
    (&[Vfmadd132pd, Vfmadd213pd, Vfmadd231pd, Vfmsub132pd, Vfmsub213pd, Vfmsub231pd,
       Vfnmadd132pd, Vfnmadd213pd, Vfnmadd231pd, Vfnmsub132pd, Vfnmsub213pd, Vfnmsub231pd,
       Vfmaddsub132pd, Vfmaddsub213pd, Vfmaddsub231pd, Vfmsubadd132pd, Vfmsubadd213pd, Vfmsubadd231pd,
       Vfmaddpd, Vfmsubpd, Vfnmaddpd, Vfnmsubpd, Vfmaddsubpd, Vfmsubaddpd], row(O::Fma, Fp64, P)),
    (&[Vfmadd132ph, Vfmadd213ph, Vfmadd231ph, Vfmsub132ph, Vfmsub213ph, Vfmsub231ph,
       Vfnmadd132ph, Vfnmadd213ph, Vfnmadd231ph, Vfnmsub132ph, Vfnmsub213ph, Vfnmsub231ph,
       Vfmaddsub132ph, Vfmaddsub213ph, Vfmaddsub231ph, Vfmsubadd132ph, Vfmsubadd213ph, Vfmsubadd231ph],
       row(O::Fma, Fp16, P)),
    (&[Vfmadd132ss, Vfmadd213ss, Vfmadd231ss, Vfmsub132ss, Vfmsub213ss, Vfmsub231ss,
       Vfnmadd132ss, Vfnmadd213ss, Vfnmadd231ss, Vfnmsub132ss, Vfnmsub213ss, Vfnmsub231ss,
       Vfmaddss, Vfmsubss, Vfnmaddss, Vfnmsubss], row(O::Fma, Fp32, S)),
    (&[Vfmadd132sd, Vfmadd213sd, Vfmadd231sd, Vfmsub132sd, Vfmsub213sd, Vfmsub231sd,
       Vfnmadd132sd, Vfnmadd213sd, Vfnmadd231sd, Vfnmsub132sd, Vfnmsub213sd, Vfnmsub231sd,
       Vfmaddsd, Vfmsubsd, Vfnmaddsd, Vfnmsubsd], row(O::Fma, Fp64, S)),
    (&[Vfmadd132sh, Vfmadd213sh, Vfmadd231sh, Vfmsub132sh, Vfmsub213sh, Vfmsub231sh,
       Vfnmadd132sh, Vfnmadd213sh, Vfnmadd231sh, Vfnmsub132sh, Vfnmsub213sh, Vfnmsub231sh],
       row(O::Fma, Fp16, S)),

    // AVX512_4FMAPS (Knights Mill): four chained FMAs per lane, one from each
    // of the four source registers, so 8 per lane.
    (&[V4fmaddps, V4fnmaddps], with(row(O::Fma, Fp32, P), Lane::Element, split(FlopOp::Fma, 8))),
    (&[V4fmaddss, V4fnmaddss], with(row(O::Fma, Fp32, S), Lane::Element, split(FlopOp::Fma, 8))),

    // AVX512_BF16 dot product: each fp32 result accumulates two bf16
    // products, i.e. two fused multiply-adds = 4 FLOP (flop-rules.md: 2
    // multiplies, 2 adds), booked as fma like every other fused form. A lane
    // is one fp32 result, so `width_bits` is the register width.
    (&[Vdpbf16ps], with(row(O::Dot, Bf16, P), Pair, split(FlopOp::Fma, 4))),

    // AVX512-FP16 complex arithmetic. A lane (and a mask bit) is one complex
    // number of two fp16 values, so `width_bits` is the register width. A
    // complex multiply is 4 multiplies + 2 adds (one of which subtracts);
    // the complex FMA adds the accumulator: 4 multiply-adds = 8 FLOP, booked
    // as fma. Conjugate forms (VFC*) cost the same.
    (&[Vfmulcph, Vfcmulcph], with(row(O::Mul, Fp16, P), Pair,
        PerLane::Uniform(FlopSplit::two((FlopOp::Mul, 4), (FlopOp::Add, 2))))),
    (&[Vfmulcsh, Vfcmulcsh], with(row(O::Mul, Fp16, S), Pair,
        PerLane::Uniform(FlopSplit::two((FlopOp::Mul, 4), (FlopOp::Add, 2))))),
    (&[Vfmaddcph, Vfcmaddcph], with(row(O::Fma, Fp16, P), Pair, split(FlopOp::Fma, 8))),
    (&[Vfmaddcsh, Vfcmaddcsh], with(row(O::Fma, Fp16, S), Pair, split(FlopOp::Fma, 8))),

    // x87 arithmetic: 1 per instruction, precision x87, 80 bits, whatever the
    // memory operand's type (FIADD m32int included).
    (&[Fadd, Faddp, Fiadd], row(O::Add, X87, S)),
    (&[Fsub, Fsubr, Fsubp, Fsubrp, Fisub, Fisubr], row(O::Sub, X87, S)),
    (&[Fmul, Fmulp, Fimul], row(O::Mul, X87, S)),
    (&[Fdiv, Fdivr, Fdivp, Fdivrp, Fidiv, Fidivr], row(O::Div, X87, S)),
    (&[Fsqrt], row(O::Sqrt, X87, S)),
    // x87 transcendentals and partial remainders: flop-rules.md does not
    // list them. Each computes one arithmetic result, so each counts 1 FLOP
    // in class `other` (OpClass::Other names them), where a user who does
    // not want them can subtract them. FSINCOS produces two results: 2.
    // FSCALE and FXTRACT only move exponents and are not FLOP (like VSCALEF
    // and VGETEXP; see NOT_FLOP).
    (&[F2xm1, Fsin, Fcos, Fptan, Fpatan, Fyl2x, Fyl2xp1, Fprem, Fprem1], row(O::Other, X87, S)),
    (&[Fsincos], with(row(O::Other, X87, S), Lane::Element, split(FlopOp::Other, 2))),

    // AMD 3DNow! on 64-bit MMX registers: packed fp32 with 2 lanes.
    // PFACC/PFNACC are horizontal (1 per result), PFPNACC is one sub and one
    // add. PFRCP/PFRSQRT approximate one element (the result is copied to both
    // halves): scalar. The Newton-Raphson steps PFRCPIT1/2 and PFRSQIT1 count
    // 1 per lane in class rcp, as the steps of the approximation they refine.
    (&[Pfadd], row(O::Add, Fp32, P)),
    (&[Pfsub, Pfsubr], row(O::Sub, Fp32, P)),
    (&[Pfmul], row(O::Mul, Fp32, P)),
    (&[Pfmax, Pfmin], row(O::MinMax, Fp32, P)),
    (&[Pfacc], row(O::HAdd, Fp32, P)),
    (&[Pfnacc], row(O::HSub, Fp32, P)),
    (&[Pfpnacc], row(O::AddSub, Fp32, P)),
    (&[Pfrcp, Pfrsqrt], row(O::Rcp, Fp32, S)),
    (&[Pfrcpit1, Pfrcpit2, Pfrsqit1], row(O::Rcp, Fp32, P)),
];

/// The row of `mnemonic`, or `None` when it is not a FLOP instruction.
pub fn flop_row(mnemonic: Mnemonic) -> Option<FlopRow> {
    static INDEX: OnceLock<Vec<Option<FlopRow>>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index = vec![None; Mnemonic::values().len()];
        for (mnemonics, row) in FLOP_ROWS {
            for m in *mnemonics {
                index[*m as usize] = Some(*row);
            }
        }
        index
    });
    index[mnemonic as usize]
}
