//! Translation of one basic block of the program into the code cache.
//!
//! A block ends at a control transfer, a `syscall`, a region marker, or
//! after [`MAX_INSNS`] instructions. Its static work (instructions, FLOP by
//! kind, bytes by access size, all from `flopscope-isa`) becomes the
//! descriptor of one counter slot, bumped once per execution where the
//! flags are dead (or by a flag-free sequence). Work only the run time
//! knows gets slots of its own: active lanes of AVX-512 masked operations
//! and masked moves, gathers and scatters (popcount of the mask before the
//! instruction), and REP string iterations (rcx before minus rcx after).

use crate::cache::Arena;
use crate::emit::{self, MaskSource};
use crate::slots::{Desc, Slots};
use flopscope_counter_file::layout::SlotKind;
use flopscope_isa::{Classifier, DynamicMem, InsnInfo};
use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, Decoder, DecoderOptions, FlowControl, Instruction, InstructionBlock,
    Mnemonic, OpKind, Register, RflagsBits,
};

pub const MAX_INSNS: usize = 256;
const ARITH_FLAGS: u32 =
    RflagsBits::OF | RflagsBits::SF | RflagsBits::ZF | RflagsBits::AF | RflagsBits::CF | RflagsBits::PF;

/// Why cache code entered the dispatcher (the descriptor's address is in rax).
#[derive(Debug)]
pub enum Exit {
    /// A direct branch to `target` through the stub at `stub`, not yet linked.
    Direct { target: u64, stub: u64 },
    /// The indirect-branch lookup missed; the target is in gs:[IBL_TARGET].
    IblMiss,
    /// A `syscall` instruction; the program continues at `next`.
    Syscall { next: u64 },
    /// A region marker whose name is at the address `mem` computes; the
    /// marker instruction itself is counted in `slot`, in the state with the
    /// region closed (before a begin, after an end), as the emulate engine does.
    Marker { kind: u8, next: u64, mem: MemRef, slot: u32 },
}

/// A memory operand, evaluated by the dispatcher from saved registers.
#[derive(Debug, Clone, Copy)]
pub struct MemRef {
    pub base: Register,
    pub index: Register,
    pub scale: u32,
    pub disp: u64,
}

/// How the block ends.
enum End {
    /// Execution goes on at this address (block size limit, int3, ...).
    FallTo(u64),
    Cond { taken: u64, fall: u64 },
    Jump(u64),
    Call { target: u64, ret: u64 },
    IndirectJump,
    IndirectCall { ret: u64 },
    Return { pop: u64 },
    Syscall { next: u64 },
    Marker { kind: u8, next: u64, mem: MemRef },
}

/// A decoded block before encoding.
pub struct Decoded {
    pub pc: u64,
    insns: Vec<(Instruction, InsnInfo)>,
    end: End,
    /// Index of the terminating instruction kept in the block (jcc, cmp
    /// marker, int3...), if any.
    last_kept: Option<usize>,
}

/// Reads and decodes the block at `pc`.
pub fn decode(pc: u64, classifier: &mut Classifier) -> Result<Decoded, String> {
    let mut buf = vec![0u8; 4096];
    let n = crate::sys::read_self(pc, &mut buf);
    if n == 0 {
        return Err(format!("cannot read code at {pc:#x}"));
    }
    buf.truncate(n);
    let mut d = Decoder::with_ip(64, &buf, pc, DecoderOptions::NONE);
    let mut insns: Vec<(Instruction, InsnInfo)> = Vec::new();
    loop {
        let at = d.ip();
        if insns.len() == MAX_INSNS || (d.position() + 15 > buf.len() && buf.len() == 4096) {
            return Ok(Decoded { pc, insns, end: End::FallTo(at), last_kept: None });
        }
        if !d.can_decode() {
            return Err(format!("code at {at:#x} runs into memory that cannot be read"));
        }
        let pos = d.position();
        let insn = d.decode();
        if insn.is_invalid() {
            // Keep it: the processor raises #UD there, as it would natively.
            let ud2 = Instruction::with(Code::Ud2);
            insns.push((ud2, InsnInfo::default()));
            let last = insns.len() - 1;
            return Ok(Decoded { pc, insns, end: End::FallTo(at), last_kept: Some(last) });
        }
        let bytes = &buf[pos..pos + insn.len()];
        let next = insn.next_ip();
        let info = classifier.classify(&insn);
        if let Some(kind) = named_marker(bytes, &insn) {
            let mem = MemRef {
                base: insn.memory_base(),
                index: insn.memory_index(),
                scale: insn.memory_index_scale(),
                disp: insn.memory_displacement64(),
            };
            insns.push((insn, info));
            let last = insns.len() - 1;
            return Ok(Decoded { pc, insns, end: End::Marker { kind, next, mem }, last_kept: Some(last) });
        }
        if insn.code() == Code::Syscall {
            insns.push((insn, info));
            return Ok(Decoded { pc, insns, end: End::Syscall { next }, last_kept: None });
        }
        let end = match insn.flow_control() {
            FlowControl::Next => None,
            FlowControl::ConditionalBranch if insn.op0_kind() != OpKind::Memory => {
                Some((End::Cond { taken: insn.near_branch_target(), fall: next }, true))
            }
            FlowControl::UnconditionalBranch if is_near(&insn) => Some((End::Jump(insn.near_branch_target()), false)),
            FlowControl::Call if is_near(&insn) => {
                Some((End::Call { target: insn.near_branch_target(), ret: next }, false))
            }
            FlowControl::IndirectBranch if insn.code() == Code::Jmp_rm64 => Some((End::IndirectJump, false)),
            FlowControl::IndirectCall if insn.code() == Code::Call_rm64 => {
                Some((End::IndirectCall { ret: next }, false))
            }
            FlowControl::Return if matches!(insn.code(), Code::Retnq | Code::Retnq_imm16) => {
                let pop = if insn.code() == Code::Retnq_imm16 { u64::from(insn.immediate16()) } else { 0 };
                Some((End::Return { pop }, false))
            }
            // int3, int n, ud2, far transfers, xbegin...: run as is; if
            // execution comes back, it continues at the next instruction.
            _ => Some((End::FallTo(next), true)),
        };
        insns.push((insn, info));
        if let Some((end, keep)) = end {
            let last = insns.len() - 1;
            return Ok(Decoded { pc, insns, end, last_kept: keep.then_some(last) });
        }
    }
}

fn is_near(insn: &Instruction) -> bool {
    matches!(insn.op0_kind(), OpKind::NearBranch64)
}

/// flopscope's named marker: `cmp byte ptr cs:ds:[reg], kind` (2e 3e 80 /7 ib).
fn named_marker(bytes: &[u8], insn: &Instruction) -> Option<u8> {
    (bytes.len() >= 5
        && bytes[0] == 0x2e
        && bytes[1] == 0x3e
        && insn.code() == Code::Cmp_rm8_imm8
        && insn.op0_kind() == OpKind::Memory
        && matches!(insn.immediate8(), 1 | 2))
    .then(|| insn.immediate8())
}

/// Where the block's exits go: a translated block, or a stub.
pub trait Resolver {
    /// The cache address to branch to for program address `target`.
    fn resolve(&mut self, target: u64) -> Result<u64, String>;
    /// The address of an exit to the dispatcher with `exit`.
    fn exit_desc(&mut self, exit: Exit) -> u64;
}

/// Flags live before each instruction (arithmetic flags only); live at the
/// block's end, conservatively.
fn flags_live_before(insns: &[(Instruction, InsnInfo)]) -> Vec<u32> {
    let mut live = ARITH_FLAGS;
    let mut out = vec![0; insns.len()];
    for (i, (insn, _)) in insns.iter().enumerate().rev() {
        live = (live & !insn.rflags_modified()) | insn.rflags_read();
        out[i] = live & ARITH_FLAGS;
    }
    out
}

/// The block's static descriptor and its instrumented instruction list.
pub struct Built {
    pub list: Vec<Instruction>,
    pub block_slot: u32,
    /// StateDependent accesses met (their bytes are not counted).
    pub uncounted_state: bool,
}

/// Builds the instrumented block (no encoding yet).
#[allow(clippy::too_many_arguments)]
pub fn build(
    dec: &Decoded,
    slots: &mut Slots,
    classifier: &mut Classifier,
    resolver: &mut dyn Resolver,
    cache_start: u64,
    ibl: u64,
    enter: u64,
) -> Result<Built, String> {
    let live = flags_live_before(&dec.insns);
    let mut stat = Desc::default();
    let mut list: Vec<Instruction> = Vec::new();
    let block_slot = slots.reserve();
    let counter_at = live.iter().position(|l| *l == 0);
    if counter_at.is_none() {
        emit::bump_keep_flags(block_slot, &mut list);
    }
    let mut uncounted_state = false;
    let body_len = if dec.last_kept.is_some() || matches!(dec.end, End::FallTo(_)) {
        dec.insns.len()
    } else {
        dec.insns.len() - 1
    };
    let mut marker_desc = Desc::default();
    let marker_at = matches!(dec.end, End::Marker { .. }).then(|| dec.insns.len() - 1);
    for (i, (insn, info)) in dec.insns.iter().enumerate() {
        if marker_at == Some(i) {
            marker_desc.add_static(info, insn);
        } else {
            stat.add_static(info, insn);
        }
        if counter_at == Some(i) {
            list.push(emit::bump(block_slot));
        }
        if i >= body_len {
            break;
        }
        let flags_live = live[i] != 0;
        let after_live = live.get(i + 1).copied().unwrap_or(ARITH_FLAGS) != 0;
        let mut after = Vec::new();
        dynamic_items(insn, info, slots, classifier, flags_live, after_live, &mut list, &mut after, &mut uncounted_state);
        list.push(*insn);
        list.extend(after);
    }
    let go = |resolver: &mut dyn Resolver, list: &mut Vec<Instruction>, target: u64| -> Result<(), String> {
        let t = if target == dec.pc { cache_start } else { resolver.resolve(target)? };
        list.push(emit::jmp(t));
        Ok(())
    };
    match dec.end {
        End::FallTo(next) => go(resolver, &mut list, next)?,
        End::Cond { taken, fall } => {
            // The jcc itself was pushed above; retarget it.
            let t = if taken == dec.pc { cache_start } else { resolver.resolve(taken)? };
            let j = list.last_mut().expect("the branch");
            j.set_near_branch64(t);
            go(resolver, &mut list, fall)?;
        }
        End::Jump(target) => go(resolver, &mut list, target)?,
        End::Call { target, ret } => {
            emit::push_return(ret, &mut list);
            go(resolver, &mut list, target)?;
        }
        End::IndirectJump => {
            let (insn, _) = dec.insns.last().expect("the branch");
            list.push(emit::store_gs(crate::header::SAVE_RAX, Register::RAX));
            list.push(emit::load_target(insn));
            list.push(emit::jmp(ibl));
        }
        End::IndirectCall { ret } => {
            let (insn, _) = dec.insns.last().expect("the branch");
            list.push(emit::store_gs(crate::header::SAVE_RAX, Register::RAX));
            list.push(emit::load_target(insn));
            emit::push_return(ret, &mut list);
            list.push(emit::jmp(ibl));
        }
        End::Return { pop } => {
            list.push(emit::store_gs(crate::header::SAVE_RAX, Register::RAX));
            list.push(emit::load_rsp_top());
            list.push(emit::lea_rsp(8 + pop as i64));
            list.push(emit::jmp(ibl));
        }
        End::Syscall { next } => {
            // Ordinary system calls run here; those the engine must see
            // (syscalls::SPECIAL) exit to the dispatcher.
            let (insn, _) = dec.insns.last().expect("the syscall");
            let special = emit::syscall_check(&mut list);
            list.push(emit::label(emit::popf(), emit::LABEL_NATIVE));
            list.push(emit::lea_rsp(128));
            list.push(*insn);
            go(resolver, &mut list, next)?;
            list.push(emit::label(emit::popf(), special));
            list.push(emit::lea_rsp(128));
            let d = resolver.exit_desc(Exit::Syscall { next });
            emit::exit(d, enter, &mut list);
        }
        End::Marker { kind, next, mem } => {
            let slot = slots.add(std::mem::take(&mut marker_desc));
            let d = resolver.exit_desc(Exit::Marker { kind, next, mem, slot });
            emit::exit(d, enter, &mut list);
        }
    }
    slots.set(block_slot, stat);
    Ok(Built { list, block_slot, uncounted_state })
}

/// Instrumentation of the run-time-only work of one instruction.
#[allow(clippy::too_many_arguments)]
fn dynamic_items(
    insn: &Instruction,
    info: &InsnInfo,
    slots: &mut Slots,
    classifier: &mut Classifier,
    flags_live: bool,
    after_live: bool,
    before: &mut Vec<Instruction>,
    after: &mut Vec<Instruction>,
    uncounted_state: &mut bool,
) {
    let fp_masked = info.fp.filter(|fp| fp.key.masked && fp.flop_per_lane.total() > 0);
    let mem = info.mem.dynamic;
    if mem == Some(DynamicMem::RepString) {
        let mut one = *insn;
        one.set_has_rep_prefix(false);
        one.set_has_repne_prefix(false);
        let per = classifier.classify(&one);
        let mut d = Desc::default();
        for s in per.mem.reads {
            d.add(SlotKind::MemRead { size: s }, 1);
        }
        for s in per.mem.writes {
            d.add(SlotKind::MemWrite { size: s }, 1);
        }
        let slot = slots.add(d);
        before.push(emit::rep_before());
        emit::rep_after(slot, after_live, after);
    }
    if mem == Some(DynamicMem::StateDependent) {
        *uncounted_state = true;
    }
    let mem_mask = match mem {
        Some(DynamicMem::Masked) | Some(DynamicMem::GatherScatter) => mask_of_access(insn),
        _ => None,
    };
    let fp_src = fp_masked.map(|fp| (MaskSource::Opmask(insn.op_mask()), fp.key.lanes, fp));
    match (fp_src, mem_mask) {
        (Some((src, lanes, fp)), Some(m)) if m.src == src && m.elems == lanes => {
            let mut d = Desc::default();
            d.add_lanes(&fp);
            d.add_access(&m);
            let slot = slots.add(d);
            emit::count_mask(src, lanes, slot, flags_live, before);
        }
        (fp_src, mem_mask) => {
            if let Some((src, lanes, fp)) = fp_src {
                let mut d = Desc::default();
                d.add_lanes(&fp);
                let slot = slots.add(d);
                emit::count_mask(src, lanes, slot, flags_live, before);
            }
            if let Some(m) = mem_mask {
                let mut d = Desc::default();
                d.add_access(&m);
                let slot = slots.add(d);
                emit::count_mask(m.src, m.elems, slot, flags_live, before);
            }
        }
    }
}

/// A masked memory access: which mask, how many elements, their size.
#[derive(Debug, Clone, Copy)]
pub struct MaskedAccess {
    pub src: MaskSource,
    pub elems: u32,
    pub elem_bytes: u32,
    pub read: bool,
    pub write: bool,
}

fn reg_bytes(r: Register) -> u32 {
    r.size() as u32
}

fn mask_of_access(insn: &Instruction) -> Option<MaskedAccess> {
    let m = insn.mnemonic();
    let store = insn.op0_kind() == OpKind::Memory;
    let vsib = insn.memory_index().is_vector_register() && insn.op_count() > 0;
    if insn.op_mask() != Register::None {
        let src = MaskSource::Opmask(insn.op_mask());
        let ms = insn.memory_size();
        let elem_bytes = ms.element_size() as u32;
        let elems = if vsib {
            let idx_bytes = if is_dword_index(m) { 4 } else { 8 };
            let data = if store { insn.op1_register() } else { insn.op0_register() };
            (reg_bytes(insn.memory_index()) / idx_bytes).min(reg_bytes(data) / elem_bytes.max(1))
        } else if ms.is_broadcast() {
            1
        } else {
            ms.element_count() as u32
        };
        return Some(MaskedAccess { src, elems, elem_bytes, read: !store, write: store });
    }
    if vsib {
        // AVX2 gather: dest, [base+index*s], mask vector.
        let elem_bytes = insn.memory_size().element_size() as u32;
        let idx_bytes = if is_dword_index(m) { 4 } else { 8 };
        let elems = (reg_bytes(insn.memory_index()) / idx_bytes).min(reg_bytes(insn.op0_register()) / elem_bytes);
        let mask = insn.op2_register();
        return Some(MaskedAccess {
            src: MaskSource::Vector { reg: mask, elem_bytes },
            elems,
            elem_bytes,
            read: true,
            write: false,
        });
    }
    match m {
        Mnemonic::Vmaskmovps | Mnemonic::Vmaskmovpd | Mnemonic::Vpmaskmovd | Mnemonic::Vpmaskmovq => {
            let elem_bytes = if matches!(m, Mnemonic::Vmaskmovps | Mnemonic::Vpmaskmovd) { 4 } else { 8 };
            let elems = insn.memory_size().size() as u32 / elem_bytes;
            Some(MaskedAccess {
                src: MaskSource::Vector { reg: insn.op1_register(), elem_bytes },
                elems,
                elem_bytes,
                read: !store,
                write: store,
            })
        }
        Mnemonic::Maskmovq | Mnemonic::Maskmovdqu | Mnemonic::Vmaskmovdqu => {
            let mask = insn.op1_register();
            Some(MaskedAccess {
                src: MaskSource::Vector { reg: mask, elem_bytes: 1 },
                elems: reg_bytes(mask),
                elem_bytes: 1,
                read: false,
                write: true,
            })
        }
        _ => None,
    }
}

fn is_dword_index(m: Mnemonic) -> bool {
    matches!(
        m,
        Mnemonic::Vgatherdps
            | Mnemonic::Vgatherdpd
            | Mnemonic::Vpgatherdd
            | Mnemonic::Vpgatherdq
            | Mnemonic::Vscatterdps
            | Mnemonic::Vscatterdpd
            | Mnemonic::Vpscatterdd
            | Mnemonic::Vpscatterdq
    )
}

/// Encodes a built block at `at` in `arena`; returns its address.
pub fn place(list: &[Instruction], arena: &mut Arena) -> Result<u64, String> {
    arena.align(16);
    let at = arena.next;
    let r = BlockEncoder::encode(64, InstructionBlock::new(list, at), BlockEncoderOptions::NONE)
        .map_err(|e| format!("re-encoding a block at {at:#x}: {e}"))?;
    arena.put(&r.code_buffer).ok_or_else(|| "the code cache arena is full".to_string())
}
