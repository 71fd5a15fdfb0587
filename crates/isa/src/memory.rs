//! Data memory traffic of one instruction, from iced-x86's `used_memory()`:
//! every explicit and implicit data access (memory operands, push/pop,
//! call/ret, string instructions, ...), as flop-rules.md's "Bytes" section
//! counts them.
//!
//! Decisions, per access kind:
//! - `Read`, `Write`: one access of `MemorySize::size()` bytes. For an
//!   embedded broadcast (`[rax]{1to8}`) iced gives the element size, read once.
//! - `ReadWrite` (read-modify-write, `add [m], eax`): one read and one write.
//! - `CondRead`: counted as a read. Outside REP strings (dynamic, below) it
//!   marks CMOVcc with a memory source, which reads whether or not the
//!   condition holds (Intel SDM Vol. 2, CMOVcc).
//! - `CondWrite`, `ReadCondWrite`: counted as a write. CMPXCHG, CMPXCHG8B and
//!   CMPXCHG16B write the destination back even when the comparison fails
//!   (SDM Vol. 2, CMPXCHG: "the destination operand is written back if it is
//!   not changed"). Masked AVX-512 stores are dynamic (below).
//! - `NoMemAccess` (LEA, NOP [m], PREFETCHh, gather prefetches): no access.
//!   Cache-line maintenance (CLFLUSH, CLFLUSHOPT, CLWB, CLDEMOTE), which iced
//!   reports as a 1-byte read, moves no data into the core either and counts
//!   nothing, like the prefetches.
//!
//! Traffic that only the run time knows is marked [`DynamicMem`] and its
//! accesses are left out of `reads`/`writes` (other accesses of the same
//! instruction stay):
//! - REP/REPE/REPNE string instructions ([`DynamicMem::RepString`]): RCX
//!   iterations. Without a REP prefix a string instruction is static: one
//!   access of each of its operands.
//! - Gathers and scatters ([`DynamicMem::GatherScatter`]): the VSIB access,
//!   one element per active lane.
//! - Masked accesses ([`DynamicMem::Masked`]): VMASKMOVPS/PD, VPMASKMOVD/Q,
//!   the byte-masked stores MASKMOVQ/(V)MASKMOVDQU, and every memory operand
//!   of an AVX-512 instruction with an opmask other than k0 (masked-off
//!   elements are neither read nor written; merge and zero masking alike).
//!   None of these instructions has another memory access.
//! - Sizes iced cannot give ([`DynamicMem::StateDependent`]): the XSAVE and
//!   XRSTOR family (the size follows XCR0 and the requested-feature bitmap),
//!   AMX tile loads and stores (the tile configuration), and any other access
//!   of unknown size. FXSAVE/FXRSTOR (512 bytes), FNSAVE/FRSTOR (108) and
//!   FLDENV/FNSTENV (28) have fixed sizes and are static.

use crate::{DynamicMem, MemInfo};
use iced_x86::{InstructionInfo, Mnemonic, OpAccess, OpKind, Register, UsedMemory};

/// Stores and loads whose active elements a mask register or vector selects.
const MASKED_MNEMONICS: &[Mnemonic] = &[
    Mnemonic::Vmaskmovps,
    Mnemonic::Vmaskmovpd,
    Mnemonic::Vpmaskmovd,
    Mnemonic::Vpmaskmovq,
    Mnemonic::Maskmovq,
    Mnemonic::Maskmovdqu,
    Mnemonic::Vmaskmovdqu,
];

/// Cache-line maintenance: no data moved into the core.
const NO_DATA_ACCESS: &[Mnemonic] = &[
    Mnemonic::Clflush,
    Mnemonic::Clflushopt,
    Mnemonic::Clwb,
    Mnemonic::Cldemote,
];

/// Instructions with neither a memory operand nor a stack access that still
/// touch memory, as iced's `used_memory()` lists them: the classifier asks
/// iced for these. Complete for every register form of every encoding
/// (tests/isa/memory.rs decodes them all and holds [`touches_no_memory`]
/// to iced). A `match`, not a list searched: every instruction without a
/// memory operand is looked up.
fn implicit_memory(m: Mnemonic) -> bool {
    matches!(
        m,
        // LEAVE pops rbp (mov rsp, rbp first: no stack increment of its own).
        Mnemonic::Leave
            | Mnemonic::Umonitor
        // VIA PadLock and Zhaoxin GMI: buffers at rsi, rdi, rdx...
            | Mnemonic::Xcryptcbc
            | Mnemonic::Xcryptcfb
            | Mnemonic::Xcryptctr
            | Mnemonic::Xcryptecb
            | Mnemonic::Xcryptofb
            | Mnemonic::Xsha1
            | Mnemonic::Xsha256
            | Mnemonic::Xsha512
            | Mnemonic::Xsha512_alt
            | Mnemonic::Xstore
            | Mnemonic::Xstore_alt
            | Mnemonic::Ccs_encrypt
            | Mnemonic::Ccs_hash
        // System instructions with tables in memory.
            | Mnemonic::Rdmsrlist
            | Mnemonic::Wrmsrlist
            | Mnemonic::Rmpupdate
            | Mnemonic::Pbndkb
    )
}

/// Whether `insn` surely touches no memory: no memory operand, no push or
/// pop, none of [`implicit_memory`]. Then [`mem_info`] has nothing to find,
/// and the engines skip iced's instruction-info factory, a seventh of the
/// native engine's translation (callgrind, the first blocks of libLLVM's
/// functions, a third of whose instructions are skipped so).
pub fn touches_no_memory(insn: &iced_x86::Instruction) -> bool {
    insn.stack_pointer_increment() == 0
        && (0..insn.op_count()).all(|i| !is_memory_kind(insn.op_kind(i)))
        && !implicit_memory(insn.mnemonic())
}

fn is_memory_kind(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Memory
            | OpKind::MemorySegSI
            | OpKind::MemorySegESI
            | OpKind::MemorySegRSI
            | OpKind::MemorySegDI
            | OpKind::MemorySegEDI
            | OpKind::MemorySegRDI
            | OpKind::MemoryESDI
            | OpKind::MemoryESEDI
            | OpKind::MemoryESRDI
    )
}

pub fn mem_info(insn: &iced_x86::Instruction, info: &InstructionInfo) -> MemInfo {
    let mut mem = MemInfo::default();
    if NO_DATA_ACCESS.contains(&insn.mnemonic()) {
        return mem;
    }
    let rep_string =
        insn.is_string_instruction() && (insn.has_rep_prefix() || insn.has_repne_prefix());
    let masked = MASKED_MNEMONICS.contains(&insn.mnemonic())
        || (insn.op_mask() != Register::None
            && (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory));
    for access in info.used_memory() {
        let (read, write) = match access.access() {
            OpAccess::Read | OpAccess::CondRead => (true, false),
            OpAccess::Write | OpAccess::CondWrite => (false, true),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => (true, true),
            OpAccess::None | OpAccess::NoMemAccess => continue,
        };
        if let Some(kind) = dynamic_kind(access, rep_string, masked) {
            mem.dynamic.get_or_insert(kind);
            continue;
        }
        let size = access.memory_size().size() as u32;
        if read {
            mem.reads.push(size);
        }
        if write {
            mem.writes.push(size);
        }
    }
    mem
}

/// Why `access` can only be known at run time, if it cannot be known now.
fn dynamic_kind(access: &UsedMemory, rep_string: bool, masked: bool) -> Option<DynamicMem> {
    if rep_string {
        Some(DynamicMem::RepString)
    } else if access.index().is_vector_register() {
        Some(DynamicMem::GatherScatter)
    } else if masked {
        Some(DynamicMem::Masked)
    } else if access.memory_size().size() == 0 {
        Some(DynamicMem::StateDependent)
    } else {
        None
    }
}
