//! x86-64 instruction -> FLOP class and memory traffic, on iced-x86. No I/O.
//!
//! [`classify`] maps one decoded [`iced_x86::Instruction`] to an [`InsnInfo`]:
//! its floating-point work ([`FpOp`]: precision, lanes, op class, FLOP by
//! category) and the bytes it reads and writes ([`MemInfo`]). Every engine
//! (the QEMU plugin, the native engine) and every test uses this one table,
//! implementing shared/reference/flop-rules.md.
//!
//! ```
//! use flopscope_isa::{classify, decode_one};
//! use flopscope_model::{FlopOp, OpClass, Precision};
//! // vfmadd231pd ymm0, ymm1, ymm2
//! let insn = decode_one(&[0xc4, 0xe2, 0xf5, 0xb8, 0xc2], 0x1000).unwrap();
//! let info = classify(&insn);
//! let fp = info.fp.unwrap();
//! assert_eq!((fp.key.precision, fp.key.lanes, fp.key.op), (Precision::Fp64, 4, OpClass::Fma));
//! assert_eq!(fp.flop.total(), 8);
//! assert_eq!(fp.flop.get(FlopOp::Fma), 8);
//! ```

use flopscope_model::{FlopOp, FpKey};

/// FLOP split by category, for one execution (at most two categories are ever
/// involved: ADDSUBPD books add and sub, DPPS books mul and add).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlopSplit {
    pub parts: [(FlopOp, u32); 2],
}

impl Default for FlopSplit {
    fn default() -> Self {
        FlopSplit { parts: [(FlopOp::Other, 0); 2] }
    }
}

impl FlopSplit {
    pub fn one(op: FlopOp, n: u32) -> FlopSplit {
        FlopSplit { parts: [(op, n), (FlopOp::Other, 0)] }
    }
    pub fn two(a: (FlopOp, u32), b: (FlopOp, u32)) -> FlopSplit {
        FlopSplit { parts: [a, b] }
    }
    pub fn total(&self) -> u32 {
        self.parts[0].1 + self.parts[1].1
    }
    pub fn get(&self, op: FlopOp) -> u32 {
        self.parts.iter().filter(|(o, _)| *o == op).map(|(_, n)| n).sum()
    }
    /// The non-zero parts.
    pub fn iter(&self) -> impl Iterator<Item = (FlopOp, u32)> + '_ {
        self.parts.iter().copied().filter(|(_, n)| *n > 0)
    }
}

/// The floating-point work of one instruction form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpOp {
    /// Precision, width, lanes, op class, masked: the `fp_instructions` key.
    pub key: FpKey,
    /// FLOP of one execution with every lane active (FMA = 2 per lane; DPPS
    /// per its imm8).
    pub flop: FlopSplit,
    /// FLOP per active lane, used when `key.masked`: an engine that sees the
    /// mask multiplies this by the popcount of the mask restricted to the
    /// vector's lanes.
    pub flop_per_lane: FlopSplit,
}

/// Why an instruction's memory traffic can only be known at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynamicMem {
    /// REP/REPE/REPNE string instruction: RCX iterations.
    RepString,
    /// AVX/AVX2 VMASKMOV/VPMASKMOV, or an AVX-512 opmask on a memory operand.
    Masked,
    /// Gathers and scatters (VSIB): one access per active element.
    GatherScatter,
    /// Size set by processor state (XSAVE family, ...).
    StateDependent,
}

/// The data memory traffic of one execution.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemInfo {
    /// Size in bytes of each read every execution performs (explicit
    /// operands and implicit ones: pop, ret, string sources, ...).
    pub reads: Vec<u32>,
    /// Size in bytes of each write every execution performs (push, call, ...).
    pub writes: Vec<u32>,
    /// Set when the traffic depends on run-time state; `reads`/`writes` then
    /// hold nothing for the dynamic operand and the engine must observe it.
    pub dynamic: Option<DynamicMem>,
}

/// Everything the engines need to know about one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InsnInfo {
    /// `None`: not floating-point arithmetic (moves, compares, integer, ...).
    pub fp: Option<FpOp>,
    pub mem: MemInfo,
}

/// Decodes one 64-bit instruction at `ip`; `None` for invalid or truncated bytes.
pub fn decode_one(bytes: &[u8], ip: u64) -> Option<iced_x86::Instruction> {
    let mut d = iced_x86::Decoder::with_ip(64, bytes, ip, iced_x86::DecoderOptions::NONE);
    let insn = d.decode();
    (!insn.is_invalid()).then_some(insn)
}

/// Classifies one decoded instruction.
pub fn classify(insn: &iced_x86::Instruction) -> InsnInfo {
    let _ = insn;
    todo!("the classifier table")
}
