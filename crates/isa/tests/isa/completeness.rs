//! The table is complete: every floating-point `Code` that iced-x86 knows is
//! either a FLOP row or declared in `NOT_FLOP`; no row is dead or doubled.
//!
//! "Floating-point" is decided here, generously, from iced's metadata (string
//! matching is fine in a test, never in the classifier):
//! - x87: the code needs an FPU CPUID feature;
//! - 3DNow!: its encoding;
//! - a memory operand whose element type is a float (fp16/bf16/fp32/fp64/fp80);
//! - an MMX/vector/tile register operand and a mnemonic in a floating-point
//!   family (suffix ps/pd/ss/sd/ph/sh, bf16/fp16, FMA names), integer SIMD
//!   (p*, vp*, AMX int8) excluded.
//!
//! Left out: codes invalid in 64-bit mode (Cyrix extensions, i387SL and
//! i287XL FPU opcodes), which `decode_one` (64-bit) never yields, and
//! Knights Corner's MVEX codes: `decode_one` does not enable them
//! (DecoderOptions::KNC) and no x86-64 host executes them.

use flopscope_isa::table::{flop_row, FLOP_ROWS, NOT_FLOP};
use iced_x86::{Code, CpuidFeature, EncodingKind, MemorySize, Mnemonic};
use std::collections::{BTreeMap, BTreeSet};

fn is_float(m: MemorySize) -> bool {
    format!("{:?}", m.element_type()).contains("Float")
}

fn floating_point_reason(code: Code) -> Option<&'static str> {
    let op = code.op_code();
    if !op.is_instruction() || !op.mode64() || code.encoding() == EncodingKind::MVEX {
        return None;
    }
    let x87 = [
        CpuidFeature::FPU,
        CpuidFeature::FPU287,
        CpuidFeature::FPU287XL_ONLY,
        CpuidFeature::FPU387,
        CpuidFeature::FPU387SL_ONLY,
        CpuidFeature::CYRIX_FPU,
    ];
    if code.cpuid_features().iter().any(|f| x87.contains(f)) {
        return Some("x87");
    }
    if code.encoding() == EncodingKind::D3NOW {
        return Some("3DNow!");
    }
    if is_float(op.memory_size()) || is_float(op.broadcast_memory_size()) {
        return Some("float memory operand");
    }
    let vector_operand = (0..op.op_count()).any(|i| {
        let kind = format!("{:?}", op.op_kind(i));
        ["mm_", "xmm", "ymm", "zmm", "tmm"]
            .iter()
            .any(|p| kind.starts_with(p))
    });
    let name = format!("{:?}", code.mnemonic()).to_lowercase();
    let integer = ["p", "vp", "tdpbs", "tdpbu"]
        .iter()
        .any(|p| name.starts_with(p));
    let fp_name = ["ps", "pd", "ss", "sd", "ph", "sh"]
        .iter()
        .any(|s| name.ends_with(s))
        || ["bf16", "fp16", "2ps", "2pd", "2ph", "fmadd", "fmsub", "fnm"]
            .iter()
            .any(|s| name.contains(s));
    (vector_operand && !integer && fp_name).then_some("floating-point mnemonic")
}

#[test]
fn every_floating_point_code_is_classified_or_declared_not_flop() {
    let not_flop: BTreeSet<Mnemonic> = NOT_FLOP.iter().copied().collect();
    let mut missing = BTreeMap::<String, Vec<String>>::new();
    for code in Code::values() {
        let Some(reason) = floating_point_reason(code) else {
            continue;
        };
        let m = code.mnemonic();
        if flop_row(m).is_none() && !not_flop.contains(&m) {
            missing
                .entry(format!("{m:?}"))
                .or_default()
                .push(format!("{code:?} ({reason})"));
        }
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(m, codes)| format!("{m}: {}", codes.join(", ")))
        .collect();
    assert!(
        list.is_empty(),
        "{} floating-point mnemonics are neither in FLOP_ROWS nor in NOT_FLOP:\n{}",
        list.len(),
        list.join("\n")
    );
}

#[test]
fn every_row_names_a_real_instruction_once() {
    let used: BTreeSet<Mnemonic> = Code::values().map(|c| c.mnemonic()).collect();
    let mut seen = BTreeSet::new();
    for (mnemonics, _) in FLOP_ROWS {
        for m in *mnemonics {
            assert!(used.contains(m), "FLOP row {m:?} names no iced Code");
            assert!(seen.insert(*m), "{m:?} is in FLOP_ROWS twice");
            assert!(
                !NOT_FLOP.contains(m),
                "{m:?} is both a FLOP row and NOT_FLOP"
            );
        }
    }
    let mut seen = BTreeSet::new();
    for m in NOT_FLOP {
        assert!(used.contains(m), "NOT_FLOP entry {m:?} names no iced Code");
        assert!(seen.insert(*m), "{m:?} is in NOT_FLOP twice");
    }
}

#[test]
fn every_not_flop_entry_is_floating_point() {
    // The declared list holds floating-point instructions only, so that it
    // stays a list of decisions rather than of everything.
    let fp: BTreeSet<Mnemonic> = Code::values()
        .filter(|c| floating_point_reason(*c).is_some())
        .map(|c| c.mnemonic())
        .collect();
    let stray: Vec<_> = NOT_FLOP.iter().filter(|m| !fp.contains(m)).collect();
    assert!(
        stray.is_empty(),
        "NOT_FLOP entries that no floating-point Code uses: {stray:?}"
    );
}
