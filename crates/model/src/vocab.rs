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
/// runtime, which stops their instructions, and by flopscope, which tells
/// the C library too and words its warning after it.
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

#[cfg(test)]
mod tests {
    use super::cpu_feature_key;

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
