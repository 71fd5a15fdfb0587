//! Which instruction-set extensions this processor lacks.
//!
//! The native engine runs the program's instructions on the processor it
//! finds, so an instruction of an extension the processor lacks (AVX-512 on
//! AMD Zen 1 to 3, say) raises SIGILL. The translator asks [`missing`] for
//! every instruction it decodes, so that such an instruction is named, with
//! its address and the feature, where the emulate engine names what QEMU
//! cannot run, instead of the program dying with a bare SIGILL.
//!
//! `FLOPSCOPE_HIDE_CPU_FEATURES=avx512f,avx2` makes the engine treat those
//! features as absent (the instruction then raises SIGILL as on a processor
//! without them): what a program does on a smaller machine can be checked
//! on a bigger one, and so can the tests of this path.

use flopscope_model::vocab::cpu_feature_key;
use iced_x86::{CpuidFeature as F, Instruction};
use std::sync::OnceLock;

/// The variable naming the features the engine treats as absent (read
/// here; exec_env.rs keeps glibc's tunables when it is set).
pub use flopscope_model::vocab::HIDE_CPU_FEATURES_ENV as HIDE_ENV;

/// The first feature `insn` needs that this processor lacks (or that
/// `FLOPSCOPE_HIDE_CPU_FEATURES` hides), as iced-x86 names it.
pub fn missing(insn: &Instruction) -> Option<F> {
    insn.cpuid_features()
        .iter()
        .copied()
        .find(|f| present(*f) == Some(false))
}

/// Whether the processor has `f`: `None` for features this module does not
/// check (older ones every x86-64 has, or ones no compiler emits for
/// floating-point code), which are taken as present.
fn present(f: F) -> Option<bool> {
    let have = detected(f)?;
    Some(
        have && !hidden()
            .iter()
            .any(|h| *h == cpu_feature_key(&format!("{f:?}"))),
    )
}

/// `std::arch` detection (CPUID and the OS's XSAVE support) of the vector
/// extensions that compilers emit.
fn detected(f: F) -> Option<bool> {
    use std::arch::is_x86_feature_detected as has;
    Some(match f {
        F::SSE3 => has!("sse3"),
        F::SSSE3 => has!("ssse3"),
        F::SSE4_1 => has!("sse4.1"),
        F::SSE4_2 => has!("sse4.2"),
        F::AVX => has!("avx"),
        F::AVX2 => has!("avx2"),
        F::FMA => has!("fma"),
        F::F16C => has!("f16c"),
        F::BMI1 => has!("bmi1"),
        F::BMI2 => has!("bmi2"),
        F::AES => has!("aes"),
        F::SHA => has!("sha"),
        F::GFNI => has!("gfni"),
        F::VAES => has!("vaes"),
        F::VPCLMULQDQ => has!("vpclmulqdq"),
        F::AVX512F => has!("avx512f"),
        F::AVX512VL => has!("avx512vl"),
        F::AVX512BW => has!("avx512bw"),
        F::AVX512DQ => has!("avx512dq"),
        F::AVX512CD => has!("avx512cd"),
        F::AVX512_IFMA => has!("avx512ifma"),
        F::AVX512_VBMI => has!("avx512vbmi"),
        F::AVX512_VBMI2 => has!("avx512vbmi2"),
        F::AVX512_VNNI => has!("avx512vnni"),
        F::AVX512_BITALG => has!("avx512bitalg"),
        F::AVX512_VPOPCNTDQ => has!("avx512vpopcntdq"),
        F::AVX512_BF16 => has!("avx512bf16"),
        F::AVX512_FP16 => has!("avx512fp16"),
        _ => return None,
    })
}

/// The features `FLOPSCOPE_HIDE_CPU_FEATURES` names, normalized.
fn hidden() -> &'static [String] {
    static HIDDEN: OnceLock<Vec<String>> = OnceLock::new();
    HIDDEN.get_or_init(|| {
        std::env::var(HIDE_ENV)
            .map(|v| {
                v.split(',')
                    .map(cpu_feature_key)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_instructions_need_nothing_missing() {
        // addsd xmm0, xmm1: SSE2, which every x86-64 processor has.
        let mut d = iced_x86::Decoder::new(64, &[0xf2, 0x0f, 0x58, 0xc1], 0);
        assert_eq!(missing(&d.decode()), None);
    }

    #[test]
    fn an_avx512_instruction_needs_avx512f_where_the_processor_lacks_it() {
        // vaddpd zmm0, zmm0, zmm0
        let mut d = iced_x86::Decoder::new(64, &[0x62, 0xf1, 0xfd, 0x48, 0x58, 0xc0], 0);
        let insn = d.decode();
        let hidden =
            std::env::var(HIDE_ENV).is_ok_and(|v| v.to_ascii_lowercase().contains("avx512f"));
        let lacks = !std::arch::is_x86_feature_detected!("avx512f") || hidden;
        let expected = lacks.then_some(F::AVX512F);
        assert_eq!(missing(&insn), expected);
    }
}
