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
//! features (and those that need them) as absent: their instructions raise
//! SIGILL as on a processor without them, and the program's own `cpuid`
//! answers without their bits ([`answer_cpuid`]), so that software choosing
//! its code by CPUID (numpy, OpenBLAS, JIT compilers) picks what it would
//! pick there. What a program does on a smaller machine can be checked on
//! a bigger one, and so can the tests of this path.

use crate::asm::Context;
use flopscope_model::vocab::{cpu_feature_key, hidden_cpu_features};
use iced_x86::{CpuidFeature as F, Instruction};
use std::sync::OnceLock;

/// The variable naming the features the engine treats as absent (read
/// here; exec_env.rs keeps glibc's tunables when it is set).
pub use flopscope_model::vocab::HIDE_CPU_FEATURES_ENV as HIDE_ENV;

/// The first feature `insn` needs that this processor lacks (or that
/// `FLOPSCOPE_HIDE_CPU_FEATURES` hides), as iced-x86 names it.
pub fn missing(insn: &Instruction) -> Option<F> {
    insn.cpuid_features().iter().copied().find(|f| absent(*f))
}

/// Whether `f` is absent or hidden: worked out the first time an
/// instruction needs it, then read (`present` finds a hidden feature by
/// its name, which every instruction translated would pay for).
fn absent(f: F) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    const UNKNOWN: u8 = 0;
    const PRESENT: u8 = 1;
    const ABSENT: u8 = 2;
    static KNOWN: [AtomicU8; 256] = [const { AtomicU8::new(UNKNOWN) }; 256];
    let known = &KNOWN[f as usize];
    match known.load(Ordering::Relaxed) {
        PRESENT => false,
        ABSENT => true,
        _ => {
            let absent = present(f) == Some(false);
            known.store(if absent { ABSENT } else { PRESENT }, Ordering::Relaxed);
            absent
        }
    }
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

/// The features `FLOPSCOPE_HIDE_CPU_FEATURES` hides, with those that need
/// them, as feature keys.
fn hidden() -> &'static [String] {
    static HIDDEN: OnceLock<Vec<String>> = OnceLock::new();
    HIDDEN.get_or_init(|| {
        std::env::var(HIDE_ENV)
            .map(|v| hidden_cpu_features(&v))
            .unwrap_or_default()
    })
}

/// CPUID's result registers, as indices into `[eax, ebx, ecx, edx]`.
const EAX: usize = 0;
const EBX: usize = 1;
const ECX: usize = 2;
const EDX: usize = 3;

/// Where CPUID reports each feature this module can hide: its key, the
/// leaf, the sub-leaf (leaf 7 only), the register and the bit (Intel SDM
/// vol. 2A, CPUID; AMD APM vol. 3, appendix E).
const CPUID_BITS: &[(&str, u32, u32, usize, u32)] = &[
    ("sse3", 1, 0, ECX, 0),
    ("ssse3", 1, 0, ECX, 9),
    ("fma", 1, 0, ECX, 12),
    ("sse41", 1, 0, ECX, 19),
    ("sse42", 1, 0, ECX, 20),
    ("aes", 1, 0, ECX, 25),
    ("avx", 1, 0, ECX, 28),
    ("f16c", 1, 0, ECX, 29),
    ("bmi1", 7, 0, EBX, 3),
    ("avx2", 7, 0, EBX, 5),
    ("bmi2", 7, 0, EBX, 8),
    ("avx512f", 7, 0, EBX, 16),
    ("avx512dq", 7, 0, EBX, 17),
    ("avx512ifma", 7, 0, EBX, 21),
    ("avx512cd", 7, 0, EBX, 28),
    ("sha", 7, 0, EBX, 29),
    ("avx512bw", 7, 0, EBX, 30),
    ("avx512vl", 7, 0, EBX, 31),
    ("avx512vbmi", 7, 0, ECX, 1),
    ("avx512vbmi2", 7, 0, ECX, 6),
    ("gfni", 7, 0, ECX, 8),
    ("vaes", 7, 0, ECX, 9),
    ("vpclmulqdq", 7, 0, ECX, 10),
    ("avx512vnni", 7, 0, ECX, 11),
    ("avx512bitalg", 7, 0, ECX, 12),
    ("avx512vpopcntdq", 7, 0, ECX, 14),
    ("avx5124vnniw", 7, 0, EDX, 2),
    ("avx5124fmaps", 7, 0, EDX, 3),
    ("avx512vp2intersect", 7, 0, EDX, 8),
    ("avx512fp16", 7, 0, EDX, 23),
    ("avxvnni", 7, 1, EAX, 4),
    ("avx512bf16", 7, 1, EAX, 5),
    ("avx10", 7, 1, EDX, 19),
];

/// Whether the program's `cpuid` must be answered by [`answer_cpuid`]
/// (some hidden feature has a CPUID bit) rather than run as it is.
pub fn answers_cpuid() -> bool {
    static ANSWERS: OnceLock<bool> = OnceLock::new();
    *ANSWERS.get_or_init(|| {
        CPUID_BITS
            .iter()
            .any(|(key, ..)| hidden().iter().any(|h| h == key))
    })
}

/// Runs the program's `cpuid` (leaf in `ctx.rax`, sub-leaf in `ctx.rcx`)
/// and clears the bits of the hidden features in its answer, as a
/// processor without them answers.
pub fn answer_cpuid(ctx: &mut Context) {
    let (leaf, sub) = (ctx.rax as u32, ctx.rcx as u32);
    // (CPUID is a safe intrinsic in recent Rust, an unsafe one before.)
    #[allow(unused_unsafe)]
    // SAFETY: CPUID has no side effects; an unknown leaf answers zeros or
    // the highest basic leaf's values, as it would to the program.
    let r = unsafe { std::arch::x86_64::__cpuid_count(leaf, sub) };
    let regs = hide_bits(leaf, sub, [r.eax, r.ebx, r.ecx, r.edx], hidden());
    // A 32-bit result clears the registers' upper halves.
    [ctx.rax, ctx.rbx, ctx.rcx, ctx.rdx] = regs.map(u64::from);
}

/// `regs`, CPUID's answer to `leaf` and `sub`, without the bits of the
/// features in `hidden` (feature keys).
fn hide_bits(leaf: u32, sub: u32, mut regs: [u32; 4], hidden: &[String]) -> [u32; 4] {
    for (key, l, s, reg, bit) in CPUID_BITS {
        let here = *l == leaf && (leaf != 7 || *s == sub);
        if here && hidden.iter().any(|h| h == key) {
            regs[*reg] &= !(1 << bit);
        }
    }
    regs
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
    fn hidden_features_leave_cpuid_without_their_bits_and_others_alone() {
        let hidden = hidden_cpu_features("avx2");
        let all = [u32::MAX; 4];
        // Leaf 1 reports none of AVX2's family; leaf 7.0 loses AVX2
        // (EBX 5) and the AVX-512 bits, keeps BMI1/2 and SHA.
        assert_eq!(hide_bits(1, 0, all, &hidden), all);
        let ebx_avx512 = 1 << 16 | 1 << 17 | 1 << 21 | 1 << 28 | 1 << 30 | 1 << 31;
        let ecx_avx512 = 1 << 1 | 1 << 6 | 1 << 11 | 1 << 12 | 1 << 14;
        let edx_avx512 = 1 << 2 | 1 << 3 | 1 << 8 | 1 << 23;
        assert_eq!(
            hide_bits(7, 0, all, &hidden),
            [u32::MAX, !(1 << 5 | ebx_avx512), !ecx_avx512, !edx_avx512]
        );
        // Leaf 7.1: AVX-VNNI, AVX512_BF16 and AVX10; other sub-leaves and
        // leaves as they are.
        assert_eq!(
            hide_bits(7, 1, all, &hidden),
            [!(1 << 4 | 1 << 5), u32::MAX, u32::MAX, !(1 << 19)]
        );
        assert_eq!(hide_bits(7, 2, all, &hidden), all);
        assert_eq!(hide_bits(0xd, 0, all, &hidden), all);
        let avx = hidden_cpu_features("avx");
        assert_eq!(
            hide_bits(1, 3, all, &avx)[ECX],
            !(1 << 28 | 1 << 12 | 1 << 29),
            "leaf 1 whatever the sub-leaf"
        );
        assert_eq!(hide_bits(1, 0, all, &[]), all);
    }

    #[test]
    fn an_avx512_instruction_needs_avx512f_where_the_processor_lacks_it() {
        // vaddpd zmm0, zmm0, zmm0
        let mut d = iced_x86::Decoder::new(64, &[0x62, 0xf1, 0xfd, 0x48, 0x58, 0xc0], 0);
        let insn = d.decode();
        let hidden = std::env::var(HIDE_ENV)
            .is_ok_and(|v| hidden_cpu_features(&v).iter().any(|h| h == "avx512f"));
        let lacks = !std::arch::is_x86_feature_detected!("avx512f") || hidden;
        let expected = lacks.then_some(F::AVX512F);
        assert_eq!(missing(&insn), expected);
    }
}
