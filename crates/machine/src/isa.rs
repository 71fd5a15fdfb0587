//! The vector-width classes a peak is given for.

use serde::{Deserialize, Serialize};

/// A class of FP instructions by vector width: what a peak row and a
/// benchmark kernel are "for".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// One element per instruction (SSE2 scalar, or VEX scalar FMA).
    Scalar,
    /// 128-bit vectors (SSE, or VEX-encoded 128-bit FMA where the core has FMA).
    Sse,
    /// 256-bit vectors (AVX; AVX2-generation FMA where the core has it).
    Avx,
    /// 512-bit vectors (AVX-512).
    Avx512,
}

impl Isa {
    /// Narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Sse, Isa::Avx, Isa::Avx512];

    /// Key in JSON and in the data files.
    pub fn key(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse => "sse",
            Isa::Avx => "avx",
            Isa::Avx512 => "avx512",
        }
    }

    /// Name for people.
    pub fn label(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse => "SSE",
            Isa::Avx => "AVX/AVX2",
            Isa::Avx512 => "AVX-512",
        }
    }

    /// Register width in bits (64 for scalar: one fp64 element).
    pub fn vector_bits(self) -> u32 {
        match self {
            Isa::Scalar => 64,
            Isa::Sse => 128,
            Isa::Avx => 256,
            Isa::Avx512 => 512,
        }
    }

    /// The `/proc/cpuinfo` flag the CPU (and OS) must report for this class.
    pub fn required_flag(self) -> &'static str {
        match self {
            Isa::Scalar | Isa::Sse => "sse2",
            Isa::Avx => "avx",
            Isa::Avx512 => "avx512f",
        }
    }

    pub fn from_key(s: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.key() == s)
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}
