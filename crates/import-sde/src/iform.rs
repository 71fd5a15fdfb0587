//! The FMA forms in SDE's instruction names: precision, lanes, encoding.
//!
//! Three spellings reach us:
//! - XED iform names of an `-iform` histogram: `VFMADD231PD_YMMqq_YMMqq_YMMqq`
//!   (VEX), `VFMADD132PD_ZMMf64_MASKmskw_ZMMf64_MEMf64_AVX512` (EVEX);
//! - XED iclass names of the default opcode histogram: `VFMADD231PD`;
//! - the disassembly of the dynamic mask profile: `vfmadd231pd zmm0{k1}, zmm1, zmm2`.
//!
//! FMA forms are the one place where SDE's `*elements_fp_*` counters (one
//! per instruction) fall short of the FLOP (two per lane), per Intel's
//! "Calculating FLOP using Intel SDE" (shared/seeds/000). The other
//! arithmetic forms ([`arithmetic_mnemonic`]) only say which operation the
//! counted elements were, for `flop_by_op`.

use flopscope_model::{OpClass, Precision};

/// How an FMA form was encoded, as far as its name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Encoding {
    /// VEX (FMA3) or FMA4: no opmask, every lane computes.
    Vex,
    /// EVEX (AVX-512): the iform carries an opmask operand (`MASKmskw`) whether
    /// the program used k0 or not, so the active lanes are not in the name.
    Evex,
    /// An iclass name (`-mix` without `-iform`): VEX and EVEX forms share it.
    Unknown,
}

/// One decoded FMA form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmaForm {
    pub precision: Precision,
    /// True for the scalar forms (SD, SS, SH): one lane whatever the register.
    pub scalar: bool,
    /// Register width in bits (128, 256, 512), when the name tells it.
    pub vector_bits: Option<u32>,
    pub encoding: Encoding,
}

impl FmaForm {
    /// Elements computed per execution without a mask; `None` for a packed
    /// form whose width the name does not tell.
    pub fn lanes(&self) -> Option<u32> {
        if self.scalar {
            Some(1)
        } else {
            self.vector_bits.map(|w| w / self.precision.element_bits())
        }
    }

    /// The `width_bits` of a flopscope `fp_instructions` row: the element width
    /// for scalar forms, the register width for packed ones.
    pub fn width_bits(&self) -> Option<u32> {
        if self.scalar {
            Some(self.precision.element_bits())
        } else {
            self.vector_bits
        }
    }
}

/// Decodes an FMA mnemonic (any case): `VF[N]M{ADD,SUB,ADDSUB,SUBADD}[132|213|231]{PD,PS,SD,SS,PH,SH}`.
/// The order digits are absent for AMD's FMA4 forms. Returns the precision and
/// whether the form is scalar; `None` for anything that is not an FMA
/// (VFMADDCPH, a complex multiply-add, is not one of these forms).
pub fn fma_mnemonic(mnemonic: &str) -> Option<(Precision, bool)> {
    let m = mnemonic.to_ascii_uppercase();
    let rest = m.strip_prefix("VF")?;
    let (negated, rest) = match rest.strip_prefix('N') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let rest = rest.strip_prefix('M')?;
    // Longest first: VFMADDSUB must not be read as VFMADD + "SUB...".
    let op = ["ADDSUB", "SUBADD", "ADD", "SUB"]
        .into_iter()
        .find(|op| rest.starts_with(op))?;
    if negated && op.len() > 3 {
        return None; // there is no VFNMADDSUB / VFNMSUBADD
    }
    let rest = &rest[op.len()..];
    let rest = ["132", "213", "231"]
        .into_iter()
        .find_map(|o| rest.strip_prefix(o))
        .unwrap_or(rest);
    match rest {
        "PD" => Some((Precision::Fp64, false)),
        "PS" => Some((Precision::Fp32, false)),
        "PH" => Some((Precision::Fp16, false)),
        "SD" => Some((Precision::Fp64, true)),
        "SS" => Some((Precision::Fp32, true)),
        "SH" => Some((Precision::Fp16, true)),
        _ => None,
    }
}

/// Decodes a non-FMA arithmetic mnemonic (any case, VEX `V` prefix or not):
/// add, sub, mul, div, sqrt, min/max, the reciprocal approximations,
/// horizontal add/sub, addsub and dot products, each in its PS/PD/SS/SD/PH/SH
/// forms. Compares, logic, moves, conversions and integer SIMD are `None`:
/// whatever of them SDE counts among its elements (it counts COMISS, for
/// one) is booked as `other`.
pub fn arithmetic_mnemonic(mnemonic: &str) -> Option<(OpClass, Precision, bool)> {
    let m = mnemonic.to_ascii_uppercase();
    let rest = m.strip_prefix('V').unwrap_or(&m);
    // Longest first: ADDSUBPD is not ADD + "SUBPD", RSQRT14PS not RSQRT + "14PS".
    const OPS: [(&str, OpClass); 18] = [
        ("ADDSUB", OpClass::AddSub),
        ("RSQRT14", OpClass::Rcp),
        ("RSQRT28", OpClass::Rcp),
        ("RCP14", OpClass::Rcp),
        ("RCP28", OpClass::Rcp),
        ("RSQRT", OpClass::Rcp),
        ("HADD", OpClass::HAdd),
        ("HSUB", OpClass::HSub),
        ("SQRT", OpClass::Sqrt),
        ("RCP", OpClass::Rcp),
        ("ADD", OpClass::Add),
        ("SUB", OpClass::Sub),
        ("MUL", OpClass::Mul),
        ("DIV", OpClass::Div),
        ("MIN", OpClass::MinMax),
        ("MAX", OpClass::MinMax),
        ("DP", OpClass::Dot),
        ("", OpClass::Other),
    ];
    let (op, suffix) = OPS[..OPS.len() - 1]
        .iter()
        .find_map(|(p, op)| rest.strip_prefix(p).map(|s| (*op, s)))?;
    let (precision, scalar) = match suffix {
        "PD" => (Precision::Fp64, false),
        "PS" => (Precision::Fp32, false),
        "PH" => (Precision::Fp16, false),
        "SD" => (Precision::Fp64, true),
        "SS" => (Precision::Fp32, true),
        "SH" => (Precision::Fp16, true),
        _ => return None,
    };
    // There are no scalar horizontal, addsub or dot forms.
    let packed_only = matches!(
        op,
        OpClass::HAdd | OpClass::HSub | OpClass::AddSub | OpClass::Dot
    );
    (!(scalar && packed_only)).then_some((op, precision, scalar))
}

/// Decodes a histogram row name (iform or iclass) of any FP arithmetic form:
/// the FMA forms ([`fma_histogram_name`], op `Fma`) and those of
/// [`arithmetic_mnemonic`]. The shape is read as for FMA forms.
pub fn fp_histogram_name(name: &str) -> Option<(OpClass, FmaForm)> {
    if let Some(f) = fma_histogram_name(name) {
        return Some((OpClass::Fma, f));
    }
    let (iclass, operands) = match name.split_once('_') {
        Some((c, ops)) => (c, Some(ops)),
        None => (name, None),
    };
    let (op, precision, scalar) = arithmetic_mnemonic(iclass)?;
    Some((op, shape(precision, scalar, operands)))
}

/// The shape of a form from its iform operands (`None`: an iclass name).
fn shape(precision: Precision, scalar: bool, operands: Option<&str>) -> FmaForm {
    let Some(operands) = operands else {
        return FmaForm {
            precision,
            scalar,
            vector_bits: None,
            encoding: Encoding::Unknown,
        };
    };
    let tokens: Vec<&str> = operands.split('_').collect();
    // XED names the destination first: its register class is the vector width.
    let vector_bits = tokens.first().and_then(|t| register_bits(t));
    let evex = tokens.iter().any(|t| t.starts_with("MASK"))
        || tokens.last().is_some_and(|t| t.starts_with("AVX512"));
    let encoding = if evex { Encoding::Evex } else { Encoding::Vex };
    FmaForm {
        precision,
        scalar,
        vector_bits,
        encoding,
    }
}

fn register_bits(operand: &str) -> Option<u32> {
    let o = operand.to_ascii_uppercase();
    if o.starts_with("XMM") {
        Some(128)
    } else if o.starts_with("YMM") {
        Some(256)
    } else if o.starts_with("ZMM") {
        Some(512)
    } else {
        None
    }
}

/// The width of a register operand of the disassembly (`zmm17`); `None`
/// for anything else (`zmmword ptr [rax]`, `k1`).
fn disassembly_register_bits(operand: &str) -> Option<u32> {
    let o = operand.to_ascii_lowercase();
    let (bits, number) = if let Some(n) = o.strip_prefix("xmm") {
        (128, n)
    } else if let Some(n) = o.strip_prefix("ymm") {
        (256, n)
    } else {
        (512, o.strip_prefix("zmm")?)
    };
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(bits)
}

/// Decodes a histogram row name: an iform (`ICLASS_OPERAND_...`) or an iclass.
pub fn fma_histogram_name(name: &str) -> Option<FmaForm> {
    let (iclass, operands) = match name.split_once('_') {
        Some((c, ops)) => (c, Some(ops)),
        None => (name, None),
    };
    let (precision, scalar) = fma_mnemonic(iclass)?;
    Some(shape(precision, scalar, operands))
}

/// An FMA instruction as the dynamic mask profile disassembles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisassembledFma {
    pub precision: Precision,
    pub scalar: bool,
    pub vector_bits: Option<u32>,
    /// An opmask register k1..k7 selects the lanes (`{k1}`); k0 is never printed.
    pub masked: bool,
}

impl DisassembledFma {
    pub fn lanes(&self) -> Option<u32> {
        FmaForm {
            precision: self.precision,
            scalar: self.scalar,
            vector_bits: self.vector_bits,
            encoding: Encoding::Evex,
        }
        .lanes()
    }
}

/// Decodes `vfmadd231pd zmm0{k1}{z}, zmm1, zmmword ptr [rax]`.
pub fn fma_disassembly(text: &str) -> Option<DisassembledFma> {
    let text = text.trim();
    let (mnemonic, operands) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let (precision, scalar) = fma_mnemonic(mnemonic)?;
    let destination = operands.split(',').next().unwrap_or("").trim();
    let register = destination.split('{').next().unwrap_or("").trim();
    let vector_bits = disassembly_register_bits(register);
    let masked = opmask(operands);
    Some(DisassembledFma {
        precision,
        scalar,
        vector_bits,
        masked,
    })
}

/// A floating-point instruction of the mask profile's details that adds to
/// SDE's `*elements_fp_*` counters: an FMA form (masked or not), or any other
/// masked packed or scalar fp instruction that is not a move or a conversion
/// (SDE counts those under `*dataxfer_*` and `*convert_*`). Which instructions
/// SDE counts is its own decision: the per-function import checks these
/// against each function's `*elements_fp_*_masked` counts rather than trusting
/// this list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisassembledFp {
    pub precision: Precision,
    pub scalar: bool,
    /// Register width of the destination, when it is a vector register.
    pub vector_bits: Option<u32>,
    /// An opmask register k1..k7 selects the lanes.
    pub masked: bool,
    pub fma: bool,
}

impl DisassembledFp {
    /// Elements per execution without a mask; `None` for a packed form whose
    /// destination is not a vector register.
    pub fn lanes(&self) -> Option<u32> {
        self.as_fma().lanes()
    }

    /// The same instruction as the FMA detail the summary arithmetic reads.
    pub fn as_fma(&self) -> DisassembledFma {
        DisassembledFma {
            precision: self.precision,
            scalar: self.scalar,
            vector_bits: self.vector_bits,
            masked: self.masked,
        }
    }
}

/// Decodes the disassembly of a mask profile detail into a [`DisassembledFp`]
/// (see there for which instructions qualify); `None` for anything else.
pub fn fp_disassembly(text: &str) -> Option<DisassembledFp> {
    if let Some(f) = fma_disassembly(text) {
        return Some(DisassembledFp {
            precision: f.precision,
            scalar: f.scalar,
            vector_bits: f.vector_bits,
            masked: f.masked,
            fma: true,
        });
    }
    let text = text.trim();
    let (mnemonic, operands) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let m = mnemonic.to_ascii_lowercase();
    // `vp...` is integer SIMD (vpaddd, vpabsd) or a permute; the rest are data
    // transfers and conversions.
    const NOT_COMPUTATION: [&str; 7] = [
        "vp",
        "vmov",
        "vbroadcast",
        "vgather",
        "vscatter",
        "vexpand",
        "vcompress",
    ];
    if !m.starts_with('v')
        || m.starts_with("vcvt")
        || NOT_COMPUTATION.iter().any(|p| m.starts_with(p))
    {
        return None;
    }
    let (precision, scalar) = match &m[m.len().saturating_sub(2)..] {
        "pd" => (Precision::Fp64, false),
        "ps" => (Precision::Fp32, false),
        "ph" => (Precision::Fp16, false),
        "sd" => (Precision::Fp64, true),
        "ss" => (Precision::Fp32, true),
        "sh" => (Precision::Fp16, true),
        _ => return None,
    };
    let masked = opmask(operands);
    let destination = operands.split(',').next().unwrap_or("").trim();
    let vector_bits = disassembly_register_bits(destination.split('{').next().unwrap_or("").trim());
    // Only masked ones are needed beside the FMAs; a packed one needs its width.
    (masked && (scalar || vector_bits.is_some())).then_some(DisassembledFp {
        precision,
        scalar,
        vector_bits,
        masked,
        fma: false,
    })
}

/// An opmask k1..k7 among the operands (`{k1}`); k0 is never printed.
fn opmask(operands: &str) -> bool {
    operands
        .match_indices("{k")
        .any(|(i, _)| operands[i + 2..].starts_with(|c: char| ('1'..='7').contains(&c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fma_family_order_and_type_decodes() {
        for neg in ["", "N"] {
            for op in ["ADD", "SUB", "ADDSUB", "SUBADD"] {
                for order in ["132", "213", "231", ""] {
                    for (ty, p, scalar) in [
                        ("PD", Precision::Fp64, false),
                        ("PS", Precision::Fp32, false),
                        ("SD", Precision::Fp64, true),
                        ("SS", Precision::Fp32, true),
                        ("PH", Precision::Fp16, false),
                        ("SH", Precision::Fp16, true),
                    ] {
                        let name = format!("VF{neg}M{op}{order}{ty}");
                        let want = (neg.is_empty() || op.len() == 3).then_some((p, scalar));
                        assert_eq!(fma_mnemonic(&name), want, "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn look_alikes_are_not_fma() {
        for name in [
            "VFMADDCPH",
            "VFCMADDCPH",
            "VFMULCPH",
            "VFPCLASSPD",
            "VFIXUPIMMPS",
            "VFRCZPD",
            "VFMADD231",
            "FMUL",
            "VPMADD52LUQ",
        ] {
            assert_eq!(fma_mnemonic(name), None, "{name}");
        }
    }

    #[test]
    fn iform_operands_give_width_and_encoding() {
        let f = fma_histogram_name("VFMADD231PD_YMMqq_YMMqq_YMMqq").unwrap();
        assert_eq!(
            (f.precision, f.lanes(), f.encoding),
            (Precision::Fp64, Some(4), Encoding::Vex)
        );
        let f = fma_histogram_name("VFMADD231PS_YMMqq_YMMqq_MEMqq").unwrap();
        assert_eq!(
            (f.precision, f.lanes(), f.width_bits()),
            (Precision::Fp32, Some(8), Some(256))
        );
        let f = fma_histogram_name("VFMADD132PD_ZMMf64_MASKmskw_ZMMf64_MEMf64_AVX512").unwrap();
        assert_eq!((f.lanes(), f.encoding), (Some(8), Encoding::Evex));
        let f = fma_histogram_name("VFNMSUB213SD_XMMdq_XMMq_XMMq").unwrap();
        assert_eq!(
            (f.lanes(), f.width_bits(), f.encoding),
            (Some(1), Some(64), Encoding::Vex)
        );
        let f = fma_histogram_name("VFMADD231PS").unwrap();
        assert_eq!((f.lanes(), f.encoding), (None, Encoding::Unknown));
        let f = fma_histogram_name("VFMADD231SS").unwrap();
        assert_eq!(f.lanes(), Some(1));
        assert_eq!(fma_histogram_name("VADDPD_YMMqq_YMMqq_YMMqq"), None);
    }

    #[test]
    fn arithmetic_forms_give_their_operation() {
        let (op, f) = fp_histogram_name("VADDPD_YMMqq_YMMqq_YMMqq").unwrap();
        assert_eq!(
            (op, f.precision, f.lanes()),
            (OpClass::Add, Precision::Fp64, Some(4))
        );
        let (op, f) = fp_histogram_name("ADDSUBPS_XMMps_XMMps").unwrap();
        assert_eq!((op, f.lanes()), (OpClass::AddSub, Some(4)));
        let (op, f) = fp_histogram_name("VRSQRT14PS_ZMMf32_MASKmskw_ZMMf32_AVX512").unwrap();
        assert_eq!(
            (op, f.lanes(), f.encoding),
            (OpClass::Rcp, Some(16), Encoding::Evex)
        );
        let (op, f) = fp_histogram_name("MULSS").unwrap();
        assert_eq!((op, f.lanes()), (OpClass::Mul, Some(1)));
        let (op, f) = fp_histogram_name("VMAXPS").unwrap();
        assert_eq!((op, f.lanes()), (OpClass::MinMax, None));
        assert_eq!(
            fp_histogram_name("VFMADD231PD").map(|x| x.0),
            Some(OpClass::Fma)
        );
        for not in [
            "COMISS",
            "UCOMISD",
            "VCMPPD",
            "ANDPD",
            "MOVAPS",
            "PADDD",
            "VPADDD",
            "MULX",
            "DIV",
            "FADD",
            "FMUL",
            "CVTSI2SD",
            "HADDSD",
            "VDPBF16PS",
            "ADD",
            "SUB_LOCK",
            "ROUNDPD",
        ] {
            assert_eq!(fp_histogram_name(not), None, "{not}");
        }
    }

    #[test]
    fn disassembly_gives_width_and_mask() {
        let d = fma_disassembly("vfmadd231pd zmm0{k1}{z}, zmm1, zmmword ptr [rax+0x40]").unwrap();
        assert_eq!(
            (d.precision, d.lanes(), d.masked),
            (Precision::Fp64, Some(8), true)
        );
        let d = fma_disassembly("  vfmadd213ps ymm3, ymm2, ymm1 ").unwrap();
        assert_eq!(
            (d.precision, d.lanes(), d.masked),
            (Precision::Fp32, Some(8), false)
        );
        let d = fma_disassembly("vfnmadd231sd xmm1{k7}, xmm2, qword ptr [rdi]").unwrap();
        assert_eq!((d.lanes(), d.masked), (Some(1), true));
        assert_eq!(fma_disassembly("vaddpd zmm0{k1}, zmm1, zmm2"), None);
        assert_eq!(fma_disassembly(""), None);
    }

    #[test]
    fn masked_fp_computations_but_not_moves_conversions_or_integers() {
        let d = fp_disassembly("vaddpd zmm0{k1}, zmm1, zmm2").unwrap();
        assert_eq!(
            (d.precision, d.lanes(), d.masked, d.fma),
            (Precision::Fp64, Some(8), true, false)
        );
        let d = fp_disassembly("vmulss xmm3{k2}{z}, xmm4, dword ptr [rax]").unwrap();
        assert_eq!(
            (d.precision, d.lanes(), d.scalar),
            (Precision::Fp32, Some(1), true)
        );
        let d = fp_disassembly("vfmadd231ps ymm1, ymm2, ymm3").unwrap();
        assert_eq!((d.lanes(), d.masked, d.fma), (Some(8), false, true));
        for not in [
            "vaddpd zmm0, zmm1, zmm2",
            "vmovupd zmmword ptr [rdi]{k1}, zmm0",
            "vcvtpd2ps ymm0{k1}, zmm1",
            "vpaddd zmm0{k1}, zmm1, zmm2",
            "vpabsd zmm0{k1}, zmm1",
            "vbroadcastsd zmm0{k1}, xmm1",
            "vgatherdpd zmm0{k1}, qword ptr [rax+ymm1*8]",
            "addpd xmm0, xmm1",
            "vaddpd zmmword ptr [rax]{k1}, zmm1, zmm2",
        ] {
            assert_eq!(fp_disassembly(not), None, "{not}");
        }
    }
}
