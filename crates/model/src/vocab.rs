//! The words every engine uses: precisions, instruction op classes and the FLOP categories.

use serde::{Deserialize, Serialize};

/// Floating-point precision of an instruction's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp64,
    Fp32,
    Fp16,
    Bf16,
    /// x87 stack arithmetic (80-bit internal precision).
    X87,
}

impl Precision {
    pub const ALL: [Precision; 5] = [Self::Fp64, Self::Fp32, Self::Fp16, Self::Bf16, Self::X87];

    /// Bits of one element in memory or a vector register.
    pub fn element_bits(self) -> u32 {
        match self {
            Self::Fp64 => 64,
            Self::Fp32 => 32,
            Self::Fp16 | Self::Bf16 => 16,
            Self::X87 => 80,
        }
    }

    /// Key used in JSON (`fp64`, `fp32`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Self::Fp64 => "fp64",
            Self::Fp32 => "fp32",
            Self::Fp16 => "fp16",
            Self::Bf16 => "bf16",
            Self::X87 => "x87",
        }
    }

    /// The precision word in Intel SDE's `*elements_fp_<word>_<lanes>` counters.
    /// x87 has none: SDE does not count x87 in those counters.
    pub fn sde_word(self) -> Option<&'static str> {
        match self {
            Self::Fp64 => Some("double"),
            Self::Fp32 => Some("single"),
            Self::Fp16 => Some("half"),
            Self::Bf16 => Some("bf16"),
            Self::X87 => None,
        }
    }

    pub fn from_key(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == s)
    }
}

/// What an instruction does, as a whole (the `op` of `fp_instructions` rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpClass {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
    Fma,
    MinMax,
    Rcp,
    /// Horizontal add (HADDPS, ...).
    HAdd,
    /// Horizontal subtract (HSUBPD, ...).
    HSub,
    /// Alternating add/subtract (ADDSUBPD, ...).
    AddSub,
    /// Dot products (DPPS, DPPD, VDPBF16PS, ...).
    Dot,
    /// Other arithmetic (x87 transcendental helpers, scaling, ...).
    Other,
}

impl OpClass {
    pub const ALL: [OpClass; 13] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Sqrt,
        Self::Fma,
        Self::MinMax,
        Self::Rcp,
        Self::HAdd,
        Self::HSub,
        Self::AddSub,
        Self::Dot,
        Self::Other,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Sqrt => "sqrt",
            Self::Fma => "fma",
            Self::MinMax => "minmax",
            Self::Rcp => "rcp",
            Self::HAdd => "hadd",
            Self::HSub => "hsub",
            Self::AddSub => "addsub",
            Self::Dot => "dot",
            Self::Other => "other",
        }
    }
}

/// The categories of `flop_by_op`: where each FLOP is booked.
/// An FMA books 2 FLOP under `fma`; ADDSUBPD books one `add` and one `sub`;
/// DPPS books its multiplies under `mul` and its adds under `add`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlopOp {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
    Fma,
    MinMax,
    Rcp,
    Other,
}

impl FlopOp {
    pub const ALL: [FlopOp; 9] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Sqrt,
        Self::Fma,
        Self::MinMax,
        Self::Rcp,
        Self::Other,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Sqrt => "sqrt",
            Self::Fma => "fma",
            Self::MinMax => "minmax",
            Self::Rcp => "rcp",
            Self::Other => "other",
        }
    }
}

/// The variable naming the CPU features the native engine treats as absent
/// (`FLOPSCOPE_HIDE_CPU_FEATURES=avx512f,...`): read by the engine's
/// runtime, which stops their instructions and clears their CPUID bits,
/// and by flopscope, which tells the C library too, words its warning
/// after it and has QEMU leave them out of the emulate engine's processor.
pub const HIDE_CPU_FEATURES_ENV: &str = "FLOPSCOPE_HIDE_CPU_FEATURES";

/// A CPU feature's name as the [`HIDE_CPU_FEATURES_ENV`] list is compared:
/// lower case, letters and digits only, so that iced's `AVX512_VBMI`,
/// Linux's `avx512_vbmi` and Rust's `avx512vbmi` (`SSE4_1`, `sse4_1`,
/// `sse4.1`) are one name.
pub fn cpu_feature_key(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The AVX-512 family and AVX10, which need AVX512F (feature keys).
const AVX512_FAMILY: &[&str] = &[
    "avx512f",
    "avx512vl",
    "avx512bw",
    "avx512dq",
    "avx512cd",
    "avx512ifma",
    "avx512vbmi",
    "avx512vbmi2",
    "avx512vnni",
    "avx512bitalg",
    "avx512vpopcntdq",
    "avx512bf16",
    "avx512fp16",
    "avx5124vnniw",
    "avx5124fmaps",
    "avx512vp2intersect",
    "avx10",
];

/// The features a [`HIDE_CPU_FEATURES_ENV`] list hides, as feature keys,
/// each once: every feature named and those that need it (`avx` hides
/// AVX2, FMA, F16C, the VEX forms of AES and CLMUL, AVX-VNNI and
/// AVX-512; `avx2` hides AVX-VNNI and AVX-512; `avx512f` the AVX-512
/// family), since no processor has them without it and software that
/// checks one takes the others for granted.
pub fn hidden_cpu_features(list: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut hide = |k: &str| {
        if !out.iter().any(|o| o == k) {
            out.push(k.to_string());
        }
    };
    for name in list.split(',') {
        let key = cpu_feature_key(name);
        let needing: &[&str] = match key.as_str() {
            "" => continue,
            "avx" => &[
                "avx",
                "avx2",
                "fma",
                "f16c",
                "vaes",
                "vpclmulqdq",
                "avxvnni",
            ],
            "avx2" => &["avx2", "avxvnni"],
            "avx512f" => &[],
            _ => {
                hide(&key);
                continue;
            }
        };
        for k in needing.iter().chain(AVX512_FAMILY) {
            hide(k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{cpu_feature_key, hidden_cpu_features};

    #[test]
    fn hiding_a_feature_hides_those_that_need_it_each_once() {
        let keys = |list: &str| hidden_cpu_features(list);
        assert_eq!(keys("SSE4.1, bmi2,"), ["sse41", "bmi2"]);
        let avx512 = keys("avx512f");
        assert_eq!(avx512.len(), 17);
        assert_eq!(
            &avx512[..5],
            ["avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd"]
        );
        let avx2 = keys("AVX2");
        assert_eq!(&avx2[..3], ["avx2", "avxvnni", "avx512f"]);
        assert_eq!(avx2.len(), 2 + 17);
        let avx = keys("avx,avx512f,avx2");
        assert_eq!(&avx[..4], ["avx", "avx2", "fma", "f16c"]);
        assert_eq!(avx.len(), 7 + 17);
        assert!(keys("").is_empty());
    }

    #[test]
    fn the_three_spellings_of_a_feature_are_one_name() {
        for spelling in ["AVX512_VBMI", "avx512_vbmi", "avx512vbmi"] {
            assert_eq!(cpu_feature_key(spelling), "avx512vbmi");
        }
        for spelling in ["SSE4_1", "sse4_1", "sse4.1"] {
            assert_eq!(cpu_feature_key(spelling), "sse41");
        }
    }
}
