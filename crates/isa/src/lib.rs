//! x86-64 instruction -> FLOP class and memory traffic, on iced-x86. No I/O.
//!
//! [`classify`] maps one decoded [`iced_x86::Instruction`] to an [`InsnInfo`]:
//! its floating-point work ([`FpOp`]: precision, lanes, op class, FLOP by
//! category) and the bytes it reads and writes ([`MemInfo`]). Every engine
//! (the QEMU plugin, the native engine) and every test uses this one table,
//! implementing shared/reference/flop-rules.md.
//!
//! Where things are:
//! - [`table`]: the one FLOP table ([`table::FLOP_ROWS`], keyed by iced's
//!   `Mnemonic`: op class, precision, scalar/packed, FLOP per lane) and the
//!   declared [`table::NOT_FLOP`] list; the completeness test holds every
//!   floating-point `iced_x86::Code` to one or the other.
//! - `lanes.rs`: lanes from the operand registers (xmm 128, ymm 256, zmm 512,
//!   mm 64 bits) and the row's lane width.
//! - `flop.rs`: a row applied to one instruction (masks, DPPS/DPPD imm8).
//! - `memory.rs`: bytes read and written, from iced's `used_memory()`, and
//!   the [`DynamicMem`] cases only the run time can count; `sizes.rs`: the
//!   accesses of one instruction by size, inline ([`Sizes`]); `ssc.rs`:
//!   SDE's SSC marks ([`ssc_mark_value`]).
//!
//! The classifier takes 64-bit code as [`decode_one`] decodes it; Knights
//! Corner (MVEX) forms, which need `DecoderOptions::KNC`, share rows with
//! their EVEX mnemonics but KNC-only mnemonics are not classified.
//! [`Classifier`] reuses iced's info buffers; [`classify`] keeps one per thread.
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

mod flop;
mod lanes;
mod memory;
pub use memory::touches_no_memory;
mod not_flop;
mod sizes;
mod ssc;
pub mod table;

pub use sizes::Sizes;
pub use ssc::ssc_mark_value;

use flopscope_model::{FlopOp, FpKey};

/// FLOP split by category, for one execution (at most two categories are ever
/// involved: ADDSUBPD books add and sub, DPPS books mul and add).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlopSplit {
    pub parts: [(FlopOp, u32); 2],
}

impl Default for FlopSplit {
    fn default() -> Self {
        FlopSplit {
            parts: [(FlopOp::Other, 0); 2],
        }
    }
}

impl FlopSplit {
    pub const fn one(op: FlopOp, n: u32) -> FlopSplit {
        FlopSplit {
            parts: [(op, n), (FlopOp::Other, 0)],
        }
    }
    pub const fn two(a: (FlopOp, u32), b: (FlopOp, u32)) -> FlopSplit {
        FlopSplit { parts: [a, b] }
    }
    pub fn total(&self) -> u32 {
        self.parts[0].1 + self.parts[1].1
    }
    pub fn get(&self, op: FlopOp) -> u32 {
        self.parts
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, n)| n)
            .sum()
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
    pub reads: Sizes,
    /// Size in bytes of each write every execution performs (push, call, ...).
    pub writes: Sizes,
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

/// Classifies decoded instructions, reusing one iced-x86
/// `InstructionInfoFactory` (its buffers) across calls.
pub struct Classifier {
    factory: iced_x86::InstructionInfoFactory,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier {
            factory: iced_x86::InstructionInfoFactory::new(),
        }
    }
}

impl Classifier {
    pub fn new() -> Classifier {
        Classifier::default()
    }

    /// Classifies one decoded instruction.
    pub fn classify(&mut self, insn: &iced_x86::Instruction) -> InsnInfo {
        let fp = flop::fp_op(insn);
        if memory::touches_no_memory(insn) {
            return InsnInfo {
                fp,
                mem: MemInfo::default(),
            };
        }
        // Only the memory accesses are used: no register usage to build.
        let info = self
            .factory
            .info_options(insn, iced_x86::InstructionInfoOptions::NO_REGISTER_USAGE);
        InsnInfo {
            fp,
            mem: memory::mem_info(insn, info),
        }
    }
}

/// Classifies one decoded instruction, with a [`Classifier`] kept per thread
/// (scratch buffers only: the result depends on `insn` alone).
pub fn classify(insn: &iced_x86::Instruction) -> InsnInfo {
    thread_local! {
        static CLASSIFIER: std::cell::RefCell<Classifier> = std::cell::RefCell::new(Classifier::new());
    }
    CLASSIFIER.with(|c| c.borrow_mut().classify(insn))
}
