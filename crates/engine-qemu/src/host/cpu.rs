//! The processor QEMU shows the program: `-cpu max` (every extension its
//! TCG emulates, up to AVX2, FMA and F16C), less the features
//! `FLOPSCOPE_HIDE_CPU_FEATURES` hides and those that need them, as the
//! native engine hides them: a program choosing its code by CPUID takes
//! the same path under both engines.

use flopscope_model::vocab::{hidden_cpu_features, HIDE_CPU_FEATURES_ENV};

/// The variable carrying the model to the exec shim, which starts QEMU
/// anew for every program the counted one execs.
pub const CPU_ENV: &str = "FLOPSCOPE_QEMU_CPU";

/// QEMU's `-cpu` argument under the `FLOPSCOPE_HIDE_CPU_FEATURES` in force.
pub fn model() -> String {
    model_hiding(&std::env::var(HIDE_CPU_FEATURES_ENV).unwrap_or_default())
}

/// `max` less the features `hidden` names (a comma-separated list).
fn model_hiding(hidden: &str) -> String {
    let mut model = String::from("max");
    for key in hidden_cpu_features(hidden) {
        if let Some(name) = qemu_name(&key) {
            model.push_str(",-");
            model.push_str(name);
        }
    }
    model
}

/// QEMU 7.2's name of a feature (`qemu-x86_64 -cpu help`), for the
/// features it knows: a name it does not know stops it.
fn qemu_name(key: &str) -> Option<&'static str> {
    Some(match key {
        "sse3" => "pni",
        "ssse3" => "ssse3",
        "sse41" => "sse4.1",
        "sse42" => "sse4.2",
        "aes" => "aes",
        "avx" => "avx",
        "avx2" => "avx2",
        "fma" => "fma",
        "f16c" => "f16c",
        "bmi1" => "bmi1",
        "bmi2" => "bmi2",
        "sha" => "sha-ni",
        "gfni" => "gfni",
        "vaes" => "vaes",
        "vpclmulqdq" => "vpclmulqdq",
        "avxvnni" => "avx-vnni",
        "avx512f" => "avx512f",
        "avx512vl" => "avx512vl",
        "avx512bw" => "avx512bw",
        "avx512dq" => "avx512dq",
        "avx512cd" => "avx512cd",
        "avx512ifma" => "avx512ifma",
        "avx512vbmi" => "avx512vbmi",
        "avx512vbmi2" => "avx512vbmi2",
        "avx512vnni" => "avx512vnni",
        "avx512bitalg" => "avx512bitalg",
        "avx512vpopcntdq" => "avx512-vpopcntdq",
        "avx512bf16" => "avx512-bf16",
        "avx512fp16" => "avx512-fp16",
        "avx5124vnniw" => "avx512-4vnniw",
        "avx5124fmaps" => "avx512-4fmaps",
        "avx512vp2intersect" => "avx512-vp2intersect",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_features_leave_max_with_qemu_s_names() {
        assert_eq!(model_hiding(""), "max");
        assert_eq!(model_hiding("sse4.1,SHA"), "max,-sse4.1,-sha-ni");
        let avx2 = model_hiding("avx2");
        assert!(avx2.starts_with("max,-avx2,-avx-vnni,-avx512f,-avx512vl,"));
        // AVX10 (no name in QEMU 7.2) is left out.
        assert_eq!(avx2.matches(",-").count(), 2 + 16, "{avx2}");
        assert!(!avx2.contains("avx10"));
    }
}
