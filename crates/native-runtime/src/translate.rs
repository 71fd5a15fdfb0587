//! Translation of one basic block of the program into the code cache.
//!
//! A block ends at a control transfer, a `syscall`, a region marker, before
//! an SDE SSC mark the CLI asked for, or after [`MAX_INSNS`] instructions.
//! Its static work (instructions, FLOP by kind, bytes by access size, all
//! from `flopscope-isa`) becomes the descriptor of one counter slot, bumped
//! once per execution where the flags are dead (or by a flag-free
//! sequence). Work only the run time knows gets slots of its own: active
//! lanes of AVX-512 masked operations and masked moves, gathers and
//! scatters (popcount of the mask before the instruction), and REP string
//! iterations (rcx before minus rcx after).

use crate::cache::{self, Arena, Routines};
use crate::code::{self, Code, Target};
use crate::emit::{self, MaskSource};
use crate::header;
use crate::slots::{Desc, Slots};
use flopscope_counter_file::layout::SlotKind;
use flopscope_isa::{Classifier, DynamicMem, InsnInfo};
use iced_x86::{
    Code as Op, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register,
    RflagsBits,
};

pub const MAX_INSNS: usize = 256;
const ARITH_FLAGS: u32 = RflagsBits::OF
    | RflagsBits::SF
    | RflagsBits::ZF
    | RflagsBits::AF
    | RflagsBits::CF
    | RflagsBits::PF;

/// Why cache code entered the dispatcher (the descriptor's address is in rax).
#[derive(Debug)]
pub enum Exit {
    /// A direct branch to `target` through the stub at `stub`, not yet linked.
    Direct { target: u64, stub: u64 },
    /// The indirect-branch lookup missed; the target is in gs:[IBL_TARGET].
    IblMiss,
    /// An indirect branch's first execution: its record (cache.rs,
    /// `indirect_site`) at gs:[JUMP], the target at gs:[IBL_TARGET].
    IblFill,
    /// A `syscall` instruction; the program continues at `next`. `native`:
    /// the cache address of the instruction's copy in its block, where a
    /// call the dispatcher only checks runs (kernel_writes.rs); 0 if none.
    Syscall { next: u64, native: u64 },
    /// A system call run in the cache returned EFAULT: the dispatcher checks
    /// whether the memory it was to write holds a page the engine
    /// protected meanwhile (kernel_writes.rs), and runs it again at
    /// `native` (the Syscall exit's) if so; else the program goes on at
    /// `next`. Its number is in `gs:[SYSCALL_NR]`.
    Efault { next: u64, native: u64 },
    /// A `cpuid` the dispatcher answers without the hidden features' bits
    /// (cpu.rs, `answer_cpuid`); the program continues at `next`.
    Cpuid { next: u64 },
    /// A region marker whose name is at the address `mem` computes. The
    /// marker instruction itself is not counted (it is flopscope's work, not
    /// the program's), as under the emulate engine.
    Marker { kind: u8, next: u64, mem: MemRef },
    /// A write that may have rewritten the rest of its block goes on at
    /// its instruction `pc`, translated to run alone (written_code.rs).
    Alone { pc: u64 },
    /// An SDE SSC mark the CLI asked for (`--start-mark`, `--stop-mark`):
    /// `kind` begins or ends the `ssc:START-STOP` region; the program goes on
    /// at `next`, the mark's `64 67 90`, which is counted in the new state
    /// (as the emulate engine counts it).
    Ssc { kind: u8, next: u64 },
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
    Cond {
        taken: u64,
        fall: u64,
    },
    Jump(u64),
    Call {
        target: u64,
        ret: u64,
    },
    IndirectJump,
    IndirectCall {
        ret: u64,
    },
    Return {
        pop: u64,
    },
    Syscall {
        next: u64,
    },
    /// A `cpuid` answered by the dispatcher, counted as executed.
    Cpuid {
        next: u64,
    },
    Marker {
        kind: u8,
        next: u64,
        mem: MemRef,
    },
    /// Before an SSC mark's `64 67 90` (at `next`), the block's instructions
    /// all copied.
    Ssc {
        kind: u8,
        next: u64,
    },
}

/// Where an instruction's bytes are and where its RIP-relative
/// displacement sits in them.
#[derive(Debug, Clone, Copy)]
struct Raw {
    len: usize,
    disp_at: Option<usize>,
    /// A direct jump the block follows: counted, not copied.
    elided: bool,
}

/// A decoded block before encoding.
pub struct Decoded {
    pub pc: u64,
    /// The code lies in a writable mapping (generated at run time).
    pub writable: bool,
    insns: Vec<(Instruction, InsnInfo)>,
    raws: Vec<Raw>,
    end: End,
    /// Index of the terminating instruction kept in the block (jcc, cmp
    /// marker, int3...), if any.
    last_kept: Option<usize>,
    /// The block ends in a direct call whose target writes every
    /// arithmetic flag before it reads one (see [`flags_dead_at`]): the
    /// flags are dead at the block's end. Set by the translator, which
    /// knows whether the target's code may change.
    pub flags_dead_at_end: bool,
    /// The block's not-taken side is counted ([`Decoded::counted_fall`])
    /// and the code it falls to writes every arithmetic flag before it
    /// reads one: the counter there can be a plain `add`. Set by the
    /// translator, as `flags_dead_at_end`.
    pub flags_dead_at_fall: bool,
}

/// The buffers of a [`Decoded`] block, kept between translations so that
/// decoding allocates nothing once they have grown.
#[derive(Default)]
pub struct Buffers {
    insns: Vec<(Instruction, InsnInfo)>,
    raws: Vec<Raw>,
}

impl Decoded {
    /// The target of the direct call that ends the block, if it ends so.
    pub fn call_target(&self) -> Option<u64> {
        match self.end {
            End::Call { target, .. } => Some(target),
            _ => None,
        }
    }

    /// Where the block falls to when its conditional branch is not taken,
    /// if that side is counted: with attribution, for backward branches,
    /// which close loops (taken = executions - not taken gives the loop's
    /// entries). Their not-taken side is the loop's exit, off the hot
    /// path; a forward branch's taken side is no loop's back edge in
    /// compiled code, and hot forward branches (an interpreter's dispatch)
    /// stay uncounted.
    pub fn counted_fall(&self) -> Option<u64> {
        match self.end {
            End::Cond { taken, fall }
                if crate::attribution::enabled()
                    && self.insns.last().is_some_and(|(i, _)| taken <= i.ip()) =>
            {
                Some(fall)
            }
            _ => None,
        }
    }

    /// Bytes of the program's instructions in the block (a followed direct
    /// jump's too).
    pub fn program_bytes(&self) -> u64 {
        self.raws.iter().map(|r| r.len as u64).sum()
    }

    /// The pages the block's instructions were read from, each once, into
    /// `out`: a write to any of them changes the block.
    pub fn pages(&self, out: &mut Vec<u64>) {
        out.clear();
        for ((insn, _), raw) in self.insns.iter().zip(&self.raws) {
            if raw.len == 0 {
                continue;
            }
            let first = insn.ip() & !(crate::written_code::PAGE - 1);
            let last = (insn.ip() + raw.len as u64 - 1) & !(crate::written_code::PAGE - 1);
            for p in [first, last] {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }

    /// Gives the block's buffers back for the next one.
    pub fn recycle(self) -> Buffers {
        Buffers {
            insns: self.insns,
            raws: self.raws,
        }
    }
}

/// Reads and decodes the block at `pc` into `bufs`, `max_insns`
/// instructions at most ([`MAX_INSNS`]; 1 for a write's instruction run
/// alone, written_code.rs).
pub fn decode(
    pc: u64,
    classifier: &mut Classifier,
    bufs: Buffers,
    max_insns: usize,
) -> Result<Decoded, String> {
    let Buffers {
        mut insns,
        mut raws,
    } = bufs;
    insns.clear();
    raws.clear();
    let mut writable = false;
    let mut seg = pc;
    // Direct jumps are followed (the block goes on at their target) while
    // the target is new to the block: one block, one counter, for code laid
    // out in pieces.
    'segment: loop {
        let here = readable_from(seg, seg + 4096);
        let runs = matches!(here, Some((_, _, true)));
        if seg == pc && !runs {
            // Natively a fault (the dispatcher lets the processor raise it).
            return Err(match here {
                None => format!("the program jumped to {pc:#x}, where no code is mapped"),
                Some(_) => format!("the program jumped to {pc:#x}, which is not executable"),
            });
        }
        let (buf, any_writable, _) = here.unwrap_or((&[], false, false));
        writable |= any_writable;
        let done = |insns, raws, end, last_kept| {
            Ok(Decoded {
                pc,
                writable,
                insns,
                raws,
                end,
                last_kept,
                flags_dead_at_end: false,
                flags_dead_at_fall: false,
            })
        };
        if !runs {
            // A jump followed into memory that may not run (`seg` leaves
            // `pc` only so): the block ends at the jump instead, whose exit
            // lets the processor raise the program's fault there.
            raws.last_mut().expect("the followed jump's raw").elided = false;
            return done(insns, raws, End::Jump(seg), None);
        }
        let mut d = Decoder::with_ip(64, buf, seg, DecoderOptions::NONE);
        loop {
            let at = d.ip();
            if insns.len() >= max_insns || (d.position() + 15 > buf.len() && buf.len() == 4096) {
                return done(insns, raws, End::FallTo(at), None);
            }
            if !d.can_decode() {
                return Err(format!(
                    "code at {at:#x} runs into memory that cannot be read"
                ));
            }
            let pos = d.position();
            let insn = d.decode();
            if insn.is_invalid() {
                // Keep it: the processor raises #UD there, as it would natively.
                insns.push((Instruction::with(Op::Ud2), InsnInfo::default()));
                raws.push(Raw {
                    len: 0,
                    disp_at: None,
                    elided: false,
                });
                let last = insns.len() - 1;
                return done(insns, raws, End::FallTo(at), Some(last));
            }
            if let Some(feature) = crate::cpu::missing(&insn) {
                // The block ends before it; as the first of its own block it
                // is recorded and becomes a ud2: SIGILL where it stands, as
                // on this processor natively, now with a name.
                if insns.is_empty() {
                    crate::out::note_missing_feature(
                        at,
                        &format!("{feature:?}"),
                        &format_insn(&insn),
                    );
                    insns.push((Instruction::with(Op::Ud2), InsnInfo::default()));
                    raws.push(Raw {
                        len: 0,
                        disp_at: None,
                        elided: false,
                    });
                    return done(insns, raws, End::FallTo(insn.next_ip()), Some(0));
                }
                return done(insns, raws, End::FallTo(at), None);
            }
            let bytes = &buf[pos..pos + insn.len()];
            let prev = insns.last().map(|(i, _)| i);
            if let Some(kind) =
                flopscope_isa::ssc_mark_value(bytes, prev).and_then(crate::regions::ssc_kind)
            {
                // The mark starts the next block, in the state it sets.
                return done(insns, raws, End::Ssc { kind, next: at }, None);
            }
            let next = insn.next_ip();
            let info = classifier.classify(&insn);
            let disp_at = insn
                .is_ip_rel_memory_operand()
                .then(|| d.get_constant_offsets(&insn).displacement_offset());
            raws.push(Raw {
                len: insn.len(),
                disp_at,
                elided: false,
            });
            if let Some(kind) = named_marker(bytes, &insn) {
                let mem = MemRef {
                    base: insn.memory_base(),
                    index: insn.memory_index(),
                    scale: insn.memory_index_scale(),
                    disp: insn.memory_displacement64(),
                };
                insns.push((insn, info));
                let last = insns.len() - 1;
                return done(insns, raws, End::Marker { kind, next, mem }, Some(last));
            }
            if insn.code() == Op::Syscall {
                insns.push((insn, info));
                return done(insns, raws, End::Syscall { next }, None);
            }
            if insn.mnemonic() == Mnemonic::Cpuid && crate::cpu::answers_cpuid() {
                insns.push((insn, info));
                return done(insns, raws, End::Cpuid { next }, None);
            }
            if matches!(insn.mnemonic(), Mnemonic::Rdgsbase | Mnemonic::Wrgsbase) {
                return Err(format!(
                    "the program uses the gs segment register ({} at {at:#x}), which the native engine keeps for itself: count it with --engine emulate",
                    format_insn(&insn)
                ));
            }
            let end = match insn.flow_control() {
                FlowControl::Next => None,
                FlowControl::ConditionalBranch if insn.op0_kind() != OpKind::Memory => Some((
                    End::Cond {
                        taken: insn.near_branch_target(),
                        fall: next,
                    },
                    true,
                )),
                FlowControl::UnconditionalBranch if is_near(&insn) => {
                    let t = insn.near_branch_target();
                    let seen = t == pc || insns.iter().any(|(i, _)| i.ip() == t);
                    if !seen && insns.len() + 16 < max_insns {
                        insns.push((insn, info));
                        raws.last_mut().expect("its raw").elided = true;
                        seg = t;
                        continue 'segment;
                    }
                    Some((End::Jump(t), false))
                }
                FlowControl::Call if is_near(&insn) => Some((
                    End::Call {
                        target: insn.near_branch_target(),
                        ret: next,
                    },
                    false,
                )),
                FlowControl::IndirectBranch if insn.code() == Op::Jmp_rm64 => {
                    Some((End::IndirectJump, false))
                }
                FlowControl::IndirectCall if insn.code() == Op::Call_rm64 => {
                    Some((End::IndirectCall { ret: next }, false))
                }
                FlowControl::Return if matches!(insn.code(), Op::Retnq | Op::Retnq_imm16) => {
                    let pop = if insn.code() == Op::Retnq_imm16 {
                        u64::from(insn.immediate16())
                    } else {
                        0
                    };
                    Some((End::Return { pop }, false))
                }
                // Far transfers and transactions would leave the cache.
                FlowControl::Return
                | FlowControl::IndirectBranch
                | FlowControl::IndirectCall
                | FlowControl::Call
                | FlowControl::UnconditionalBranch
                | FlowControl::XbeginXabortXend
                    if insn.mnemonic() != Mnemonic::Xend =>
                {
                    return Err(unsupported(&insn));
                }
                // int3, int n, ud2, xend...: run as is; if execution comes
                // back, it continues at the next instruction.
                _ => Some((End::FallTo(next), true)),
            };
            insns.push((insn, info));
            if let Some((end, keep)) = end {
                let last = insns.len() - 1;
                return done(insns, raws, end, keep.then_some(last));
            }
        }
    }
}

/// An instruction in Intel syntax, as the emulate engine shows it.
fn format_insn(insn: &Instruction) -> String {
    use iced_x86::Formatter;
    let mut text = String::new();
    iced_x86::IntelFormatter::new().format(insn, &mut text);
    text
}

/// The message for an instruction the engine cannot run from the cache.
fn unsupported(insn: &Instruction) -> String {
    let text = format_insn(insn);
    format!(
        "the program uses `{text}` at {:#x} (a far transfer or a hardware transaction), which the native engine does not handle yet: count it with --engine emulate",
        insn.ip()
    )
}

fn is_near(insn: &Instruction) -> bool {
    matches!(insn.op0_kind(), OpKind::NearBranch64)
}

/// flopscope's named marker: `cmp byte ptr cs:ds:[reg], kind` (2e 3e 80 /7 ib).
fn named_marker(bytes: &[u8], insn: &Instruction) -> Option<u8> {
    (bytes.len() >= 5
        && bytes[0] == 0x2e
        && bytes[1] == 0x3e
        && insn.code() == Op::Cmp_rm8_imm8
        && insn.op0_kind() == OpKind::Memory
        && matches!(
            insn.immediate8(),
            crate::regions::BEGIN | crate::regions::END
        ))
    .then(|| insn.immediate8())
}

/// Where the block's exits go: a translated block, or a stub.
pub trait Resolver {
    /// Where to branch for program address `target`: its block's cache
    /// address, or a stub until the block exists.
    fn resolve(&mut self, target: u64) -> Result<Target, String>;
    /// The address of an exit to the dispatcher with `exit`.
    fn exit_desc(&mut self, exit: Exit) -> u64;
    /// A new indirect branch's record (cache.rs, `indirect_site`).
    fn record(&mut self) -> Result<u64, String>;
    /// The address of an 8-byte literal holding `value`.
    fn literal(&mut self, value: u64) -> Result<u64, String>;
}

/// The process's memory from `at` to the end of its readable mapping, on
/// through adjacent readable mappings up to `limit` at least (pages of
/// code the engine made read-only split a mapping, and an instruction may
/// cross from one piece into the next: cut there, it would decode as an
/// invalid instruction the program does not have); whether any of it is
/// writable; whether `at`'s mapping is executable. None where nothing
/// readable is mapped at `at`.
fn readable_from(at: u64, limit: u64) -> Option<(&'static [u8], bool, bool)> {
    let map = crate::codemap::mapping_of(at)?;
    let (end, writable) = crate::codemap::readable_until(map, limit);
    // SAFETY: [at, end) lies in readable mappings of the process.
    let buf = unsafe { std::slice::from_raw_parts(at as *const u8, (end - at) as usize) };
    Some((buf, writable, map.exec))
}

/// Counts the not-taken side of a block's conditional branch, where the
/// flags may be live (the branch's condition, read again beyond) unless
/// the code there is seen to write them all first.
fn bump_fall(code: &mut Code, slot: u32, flags_dead: bool) {
    if flags_dead {
        code.bump(slot);
    } else {
        code.bump_keep_flags(slot);
    }
}

/// Instructions [`flags_dead_at`] reads at most.
const FLAGS_LOOKAHEAD: usize = 16;

/// Whether the code at `target` writes every arithmetic flag before it
/// reads any, within its first straight-line instructions (up to the first
/// branch): then the flags are dead where a call goes there, and the
/// calling block's counter can be a plain `add` (10 bytes, one memory
/// operation) rather than the flag-preserving sequence (40 bytes, five).
/// Read, not assumed: the psABI gives the flags no role across a call, but
/// hand-written code may pass them, and a call to the next instruction
/// (a position thunk) keeps them. Of gcc's cc1, about half the blocks
/// that end in a call have no flag-writing instruction of their own.
pub fn flags_dead_at(target: u64) -> bool {
    let limit = target + (FLAGS_LOOKAHEAD * 15) as u64;
    let Some((buf, false, _)) = readable_from(target, limit) else {
        return false;
    };
    let buf = &buf[..buf.len().min((limit - target) as usize)];
    let mut d = Decoder::with_ip(64, buf, target, DecoderOptions::NONE);
    let mut unwritten = ARITH_FLAGS;
    for _ in 0..FLAGS_LOOKAHEAD {
        if !d.can_decode() {
            return false;
        }
        let insn = d.decode();
        if insn.is_invalid() || insn.rflags_read() & unwritten != 0 {
            return false;
        }
        if !may_leave_flags(&insn) {
            unwritten &= !insn.rflags_modified();
        }
        if unwritten == 0 {
            return true;
        }
        if insn.flow_control() != FlowControl::Next {
            return false;
        }
    }
    false
}

/// A shift or rotate whose count may be 0 (in CL, or an immediate that is
/// 0 once masked: 0x20 is, for a 32-bit operand): it then leaves the flags
/// as they were, though it is listed as writing them.
fn may_leave_flags(insn: &Instruction) -> bool {
    use Mnemonic::*;
    if !matches!(
        insn.mnemonic(),
        Shl | Shr | Sar | Sal | Rol | Ror | Shld | Shrd
    ) {
        return false;
    }
    let count = insn.op_count() - 1;
    match insn.op_kind(count) {
        OpKind::Register => insn.op_register(count) == Register::CL,
        OpKind::Immediate8 => insn.immediate8() & 0x1f == 0,
        _ => false,
    }
}

/// Flags live before each instruction (arithmetic flags only), from those
/// live at the block's end (all, unless the block's successor is known to
/// write them first).
fn flags_live_before(insns: &[(Instruction, InsnInfo)], at_end: u32) -> Vec<u32> {
    let mut live = at_end;
    let mut out = vec![0; insns.len()];
    for (i, (insn, _)) in insns.iter().enumerate().rev() {
        if !may_leave_flags(insn) {
            live &= !insn.rflags_modified();
        }
        live |= insn.rflags_read();
        out[i] = live & ARITH_FLAGS;
    }
    out
}

/// The block's instrumented code and its counter slot.
pub struct Built {
    pub code: Code,
    pub block_slot: u32,
    /// StateDependent accesses met (their bytes are not counted).
    pub uncounted_state: bool,
    /// What the block holds, for attribution.
    pub profile: BlockProfile,
    /// The exit descriptors (`Syscall`, `Efault`) of a block ending in a
    /// system call, whose `native` address is set once the block is placed.
    pub syscall_exit: Option<(u64, u64)>,
}

/// Copies the program's instruction `i` of the block into `code`.
fn copy(dec: &Decoded, i: usize, code: &mut Code) {
    let (insn, _) = &dec.insns[i];
    let raw = dec.raws[i];
    if raw.elided {
        return;
    }
    mark(dec, i, code);
    if raw.len == 0 {
        return code.bytes(&[0x0f, 0x0b]); // ud2 for undecodable bytes
    }
    // SAFETY: the bytes were decoded from this readable address.
    let bytes = unsafe { std::slice::from_raw_parts(insn.ip() as *const u8, raw.len) };
    match raw.disp_at {
        Some(disp_at) => code.rip(bytes, disp_at, insn.memory_displacement64()),
        None => code.bytes(bytes),
    }
}

/// Marks where instruction `i`'s copy (or what stands for it) starts, for
/// sampling and the program counter signal handlers are shown
/// (crate::cachemap), with the instruction's address as a signed 32-bit
/// offset from the block's start: code a followed jump reached can lie
/// below the start (Go's compiler jumps back to loop heads laid out before
/// the code). An instruction too far for that gets no mark, and one
/// without an address of its own (a decoding failure) stands at the start.
fn mark(dec: &Decoded, i: usize, code: &mut Code) {
    let ip = dec.insns[i].0.ip();
    let off = if ip == 0 {
        0
    } else {
        ip.wrapping_sub(dec.pc) as i64
    };
    if let Ok(off) = i32::try_from(off) {
        code.mark(off as u32);
    }
}

/// `mov rax, <operand of the indirect jmp/call i>`: the same ModRM, SIB and
/// displacement with opcode 8B, REX.W and reg = rax.
fn load_target(dec: &Decoded, i: usize, code: &mut Code) -> Result<(), String> {
    let (insn, _) = &dec.insns[i];
    let raw = dec.raws[i];
    // SAFETY: the bytes were decoded from this readable address.
    let b = unsafe { std::slice::from_raw_parts(insn.ip() as *const u8, raw.len) };
    let mut k = 0;
    let mut out = [0u8; 16];
    let mut n = 0;
    while k < b.len()
        && matches!(
            b[k],
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
        )
    {
        if matches!(b[k], 0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x67) {
            out[n] = b[k]; // segment and address-size prefixes keep their meaning
            n += 1;
        }
        k += 1;
    }
    let mut rex = 0;
    if k < b.len() && (0x40..0x50).contains(&b[k]) {
        rex = b[k];
        k += 1;
    }
    if k + 1 >= b.len() || b[k] != 0xff {
        return Err(format!(
            "unexpected encoding of an indirect branch at {:#x}",
            insn.ip()
        ));
    }
    out[n] = 0x48 | (rex & 0b0011);
    out[n + 1] = 0x8b;
    let modrm_new = n + 2;
    out[modrm_new] = b[k + 1] & 0b1100_0111;
    let rest = &b[k + 2..];
    out[modrm_new + 1..modrm_new + 1 + rest.len()].copy_from_slice(rest);
    let len = modrm_new + 1 + rest.len();
    match raw.disp_at {
        Some(d) => code.rip(
            &out[..len],
            d - (k + 1) + modrm_new,
            insn.memory_displacement64(),
        ),
        None => code.bytes(&out[..len]),
    }
    Ok(())
}

/// Copies of a one-block loop laid out in the cache (a round).
const UNROLL: usize = 8;

/// The instructions of a block before its terminator, with their
/// instrumentation.
struct Body<'a> {
    dec: &'a Decoded,
    live: &'a [u32],
    body_len: usize,
    cond_at: Option<usize>,
}

impl Body<'_> {
    /// Appends the body, its executions counted in `slot` (a copy of a
    /// one-block loop but the last has none: see `build`).
    fn emit(
        &self,
        code: &mut Code,
        slot: Option<u32>,
        slots: &mut Slots,
        classifier: &mut Classifier,
        uncounted_state: &mut bool,
    ) {
        let counter_at = counter_at(self.live);
        if let (None, Some(slot)) = (counter_at, slot) {
            code.bump_keep_flags(slot);
        }
        for (i, (insn, info)) in self.dec.insns.iter().enumerate() {
            if let (true, Some(slot)) = (counter_at == Some(i), slot) {
                code.bump(slot);
            }
            if i >= self.body_len || self.cond_at == Some(i) {
                break;
            }
            let flags_live = self.live[i] != 0;
            let after_live = self.live.get(i + 1).copied().unwrap_or(ARITH_FLAGS) != 0;
            slots.pc = insn.ip();
            let rep_slot = dynamic_items(
                insn,
                info,
                slots,
                classifier,
                flags_live,
                code,
                uncounted_state,
            );
            copy(self.dec, i, code);
            if let Some(rep) = rep_slot {
                code.rep_after(rep, after_live);
            }
        }
    }
}

/// Where a block's counter is bumped: before the first instruction with
/// the flags dead (`live`), or, if none, before all with a flag-free
/// sequence (None).
fn counter_at(live: &[u32]) -> Option<usize> {
    live.iter().position(|l| *l == 0)
}

/// Builds the instrumented block.
#[allow(clippy::too_many_arguments)]
pub fn build(
    dec: &Decoded,
    slots: &mut Slots,
    classifier: &mut Classifier,
    resolver: &mut dyn Resolver,
    cache_start: u64,
    routines: &Routines,
    code: Code,
    data: &mut ProfileData,
) -> Result<Built, String> {
    let at_end = if dec.flags_dead_at_end {
        0
    } else {
        ARITH_FLAGS
    };
    let live = flags_live_before(&dec.insns, at_end);
    // The flags are live all through a block ending in an indirect branch
    // (one of its own jumps, calls or returns): its counter is bumped in
    // the branch's code (cache::indirect_site), after every instruction of
    // the block (counted from none of them on: a handler shown one of
    // them sees the execution uncounted).
    let ends_indirect = matches!(
        dec.end,
        End::IndirectJump | End::IndirectCall { .. } | End::Return { .. }
    );
    let counter = counter_at(&live);
    let site_counts = ends_indirect && counter.is_none();
    let mut stat = Desc::with_capacity(8);
    let mut code = code.reset();
    // Always: samples map back through the marks, and so does the program
    // counter a signal handler of the program is shown (signals.rs).
    code.marking = true;
    slots.pc = dec.pc;
    let first_slot = slots.descs.len() as u32;
    let block_slot = slots.reserve();
    let mut profile = BlockProfile {
        start: dec.pc,
        end: dec.end.for_profile(),
        block_slot,
        copies: Vec::new(),
        fall_slot: None,
        insns: data.insns.len() as u32..data.insns.len() as u32,
        dynamic: Vec::new(),
        counted_from: match (counter, site_counts) {
            (Some(i), _) => i as u32,
            (None, true) => dec.insns.len() as u32,
            (None, false) => 0,
        },
        partial: Vec::new(),
    };
    let mut uncounted_state = false;
    let mut syscall_exit = None;
    if dec.writable {
        // Code that may be rewritten: its translation may be invalidated
        // while other threads run it, by a 5-byte jump written over its
        // start (written_code.rs). A 5-byte first instruction (this nop)
        // leaves no thread at an instruction boundary the jump cuts.
        code.bytes(&[0x0f, 0x1f, 0x44, 0x00, 0x00]);
    }
    let body_len = if dec.last_kept.is_some() || matches!(dec.end, End::FallTo(_) | End::Ssc { .. })
    {
        dec.insns.len()
    } else {
        dec.insns.len() - 1
    };
    let marker_at = matches!(dec.end, End::Marker { .. }).then(|| dec.insns.len() - 1);
    let cond_at = matches!(dec.end, End::Cond { .. }).then(|| dec.insns.len() - 1);
    let mut own = Desc::with_capacity(8);
    for (i, (insn, info)) in dec.insns.iter().enumerate() {
        if marker_at != Some(i) {
            // Each instruction's own counts, kept flat in the translator's
            // arrays for every block (no allocation a block: translation is
            // on the start-up path of every program), and summed into the
            // block's, in the same order.
            own.items.clear();
            own.add_static(info, insn);
            for &(kind, n) in &own.items {
                stat.add(kind, n);
            }
            let first = data.items.len() as u32;
            data.items.extend_from_slice(&own.items);
            // A decoding failure kept as ud2 has no address of its own.
            let pc = if insn.ip() == 0 { dec.pc } else { insn.ip() };
            let jumped = i > 0 && dec.raws[i - 1].elided;
            data.insns.push((
                pc,
                first,
                own.items.len() as u32 | (ProfileData::JUMPED * u32::from(jumped)),
            ));
        }
    }
    profile.insns.end = data.insns.len() as u32;
    let body = Body {
        dec,
        live: &live,
        body_len,
        cond_at,
    };
    // A loop of one block is laid out UNROLL times, one copy falling into
    // the next, and counted in rounds: only the last copy bumps a counter
    // (the round's, worth UNROLL executions), and leaving from copy k < the
    // last adds its k + 1 executions of the unfinished round to the block's
    // own counter, off the hot path. A tight loop then stores to a counter
    // once a round, not once an iteration: timed stand-alone, an FMA update
    // loop storing once an iteration (about an iteration a cycle) ran 1.8x
    // its native time with a counter bump in every copy, 1.06x in rounds of
    // 4 and at native speed in rounds of 8.
    // Not for code in a writable page: a copy that rewrites the loop would
    // run the old bytes on to the end of the round (only the branch back to
    // the block's start meets the jump invalidation writes there), and the
    // rewrites of a round could cancel out for good.
    let self_loop = !dec.writable
        && match dec.end {
            End::Cond { taken, .. } => {
                taken == dec.pc
                    && dec
                        .insns
                        .last()
                        .is_some_and(|(i, _)| i.condition_code() != iced_x86::ConditionCode::None)
            }
            _ => false,
        };
    if self_loop {
        let End::Cond { fall, .. } = dec.end else {
            unreachable!("a self-loop ends in a jcc")
        };
        let fall = resolver.resolve(fall)?;
        // Condition codes come in pairs: cc ^ 1 is cc's negation.
        let cc = dec.insns.last().expect("the branch").0.condition_code() as u8 - 1;
        let mut round_desc = Desc::with_capacity(stat.items.len());
        for (kind, n) in &stat.items {
            round_desc.add(*kind, n * UNROLL as u64);
        }
        let round = slots.add(round_desc);
        // Every copy ran once in each finished round.
        profile.copies = vec![round; UNROLL];
        let partial: Vec<u32> = (0..UNROLL - 1).map(|_| code.label()).collect();
        // Every way out counts the loop's exits (entries, for attribution).
        let exit = code.label();
        let fall_slot = dec.counted_fall().map(|_| slots.reserve());
        profile.fall_slot = fall_slot;
        for copy in 0..UNROLL {
            let last = copy + 1 == UNROLL;
            body.emit(
                &mut code,
                last.then_some(round),
                slots,
                classifier,
                &mut uncounted_state,
            );
            mark(dec, dec.insns.len() - 1, &mut code);
            match partial.get(copy) {
                Some(out) => code.jcc(cc ^ 1, Target::Label(*out)),
                None => {
                    code.jcc(cc, Target::Abs(cache_start));
                    code.jmp(Target::Label(exit));
                }
            }
        }
        for (copy, label) in partial.iter().enumerate() {
            code.place(*label);
            code.add_keep_flags(block_slot, copy as i8 + 1);
            code.jmp(Target::Label(exit));
        }
        code.place(exit);
        if let Some(f) = fall_slot {
            bump_fall(&mut code, f, dec.flags_dead_at_fall);
        }
        code.jmp(fall);
        slots.set(block_slot, stat);
        profile.dynamic = dynamic_slots(slots, first_slot, &profile);
        return Ok(Built {
            code,
            block_slot,
            uncounted_state,
            profile,
            syscall_exit,
        });
    }
    body.emit(
        &mut code,
        (!site_counts).then_some(block_slot),
        slots,
        classifier,
        &mut uncounted_state,
    );
    let site_slot = site_counts.then_some(block_slot);
    let target = |resolver: &mut dyn Resolver, t: u64| -> Result<Target, String> {
        if t == dec.pc {
            Ok(Target::Abs(cache_start))
        } else {
            resolver.resolve(t)
        }
    };
    if !matches!(
        dec.end,
        End::FallTo(_)
            | End::Syscall { .. }
            | End::Cpuid { .. }
            | End::Marker { .. }
            | End::Ssc { .. }
    ) {
        // The terminator (branch, call, return) and what stands for it.
        mark(dec, dec.insns.len() - 1, &mut code);
    }
    match dec.end {
        End::FallTo(next) => code.jmp(target(resolver, next)?),
        End::Cond { taken, fall } => {
            let (insn, _) = dec.insns.last().expect("the branch");
            let t = target(resolver, taken)?;
            match insn.condition_code() {
                iced_x86::ConditionCode::None => {
                    // JRCXZ, LOOP, LOOPcc: their opcode bytes without the rel8.
                    let raw = dec.raws[dec.insns.len() - 1];
                    // SAFETY: the bytes were decoded from this readable address.
                    let b = unsafe { std::slice::from_raw_parts(insn.ip() as *const u8, raw.len) };
                    code.short_only(&b[..b.len() - 1], t);
                }
                cc => code.jcc(cc as u8 - 1, t),
            }
            if dec.counted_fall().is_some() {
                let fall_slot = slots.reserve();
                profile.fall_slot = Some(fall_slot);
                bump_fall(&mut code, fall_slot, dec.flags_dead_at_fall);
            }
            code.jmp(target(resolver, fall)?);
        }
        End::Jump(t) => code.jmp(target(resolver, t)?),
        End::Call { target: t, ret } => {
            code.push_return(resolver.literal(ret)?);
            code.jmp(target(resolver, t)?);
        }
        End::IndirectJump => {
            code.store_gs(header::SAVE_RAX, code::RAX);
            load_target(dec, dec.insns.len() - 1, &mut code)?;
            cache::indirect_site(&mut code, resolver.record()?, routines, site_slot);
        }
        End::IndirectCall { ret } => {
            code.store_gs(header::SAVE_RAX, code::RAX);
            load_target(dec, dec.insns.len() - 1, &mut code)?;
            code.push_return(resolver.literal(ret)?);
            cache::indirect_site(&mut code, resolver.record()?, routines, site_slot);
        }
        End::Return { pop } => {
            code.store_gs(header::SAVE_RAX, code::RAX);
            code.load_rsp_top();
            code.lea_rsp(8 + pop as i32);
            cache::indirect_site(&mut code, resolver.record()?, routines, site_slot);
        }
        End::Syscall { next } => {
            // Ordinary system calls run here; those the engine must see
            // (syscalls::SPECIAL) exit to the dispatcher.
            let special = code.syscall_check(routines.specials);
            let native = code.label();
            code.place(native);
            code.resume = Some(native);
            code.store_gs(header::SYSCALL_NR, code::RAX);
            copy(dec, dec.insns.len() - 1, &mut code);
            let efault = code.label();
            code.on_efault(efault);
            code.jmp(target(resolver, next)?);
            code.place(efault);
            let e = resolver.exit_desc(Exit::Efault { next, native: 0 });
            code.exit(e, routines.enter);
            code.place(special);
            code.syscall_restore();
            let d = resolver.exit_desc(Exit::Syscall { next, native: 0 });
            syscall_exit = Some((d, e));
            code.exit(d, routines.enter);
        }
        End::Cpuid { next } => {
            let d = resolver.exit_desc(Exit::Cpuid { next });
            code.exit(d, routines.enter);
        }
        End::Marker { kind, next, mem } => {
            let d = resolver.exit_desc(Exit::Marker { kind, next, mem });
            code.exit(d, routines.enter);
        }
        End::Ssc { kind, next } => {
            let d = resolver.exit_desc(Exit::Ssc { kind, next });
            code.exit(d, routines.enter);
        }
    }
    slots.set(block_slot, stat);
    profile.dynamic = dynamic_slots(slots, first_slot, &profile);
    Ok(Built {
        code,
        block_slot,
        uncounted_state,
        profile,
        syscall_exit,
    })
}

/// The slots of run-time work made for the block (from `first` on, but the
/// block's own, its copies' and its not-taken counter).
fn dynamic_slots(slots: &Slots, first: u32, p: &BlockProfile) -> Vec<u32> {
    (first..slots.descs.len() as u32)
        .filter(|s| *s != p.block_slot && Some(*s) != p.fall_slot && !p.copies.contains(s))
        .collect()
}

/// Every translated block's instructions and their static counts, one
/// block after the other: two arrays for a run instead of two vectors a
/// block (Numba's start-up translates 250,000 blocks; at exit each block's
/// vectors, apart in memory, were a cache miss or two each to write out).
#[derive(Debug, Default)]
pub struct ProfileData {
    /// Each instruction's address and its items: `items[first..first + n]`,
    /// n with [`ProfileData::JUMPED`] set for an instruction a followed jump
    /// led to from the one before (the code table's `Insn::jumped`).
    pub insns: Vec<(u64, u32, u32)>,
    /// What one execution of an instruction counts.
    pub items: Vec<(SlotKind, u64)>,
}

impl ProfileData {
    /// The instructions of `p`.
    pub fn insns(&self, p: &BlockProfile) -> &[(u64, u32, u32)] {
        &self.insns[p.insns.start as usize..p.insns.end as usize]
    }

    /// The bit of an instruction's item count saying a followed jump led to
    /// it (a block's instructions have a few items each).
    pub const JUMPED: u32 = 1 << 31;

    /// The items of instruction `(_, first, n)`.
    pub fn items(&self, (_, first, n): (u64, u32, u32)) -> &[(SlotKind, u64)] {
        let n = n & !Self::JUMPED;
        &self.items[first as usize..(first + n) as usize]
    }

    /// Whether a followed jump led to instruction `(_, _, n)`.
    pub fn jumped((_, _, n): (u64, u32, u32)) -> bool {
        n & Self::JUMPED != 0
    }

    /// Back to `len` (instructions, items): a translation that failed.
    pub fn truncate(&mut self, (insns, items): (usize, usize)) {
        self.insns.truncate(insns);
        self.items.truncate(items);
    }

    pub fn len(&self) -> (usize, usize) {
        (self.insns.len(), self.items.len())
    }
}

/// What a translated block holds, for attribution: its instructions' static
/// counts, how it ends, and its counter slots.
#[derive(Debug, Clone)]
pub struct BlockProfile {
    pub start: u64,
    pub end: flopscope_counter_file::profile::End,
    pub block_slot: u32,
    /// Slots of the other copies of a one-block loop (same instructions).
    pub copies: Vec<u32>,
    /// The not-taken counter of a block ending in a conditional branch.
    pub fall_slot: Option<u32>,
    /// Its instructions in [`ProfileData::insns`].
    pub insns: std::ops::Range<u32>,
    /// Slots of run-time work (their instruction: `Slots::owners`).
    pub dynamic: Vec<u32>,
    /// The first instruction whose copy follows the counter bump (the bump
    /// stands before the copy of `insns[counted_from]`; in a one-block
    /// loop, only in the last copy).
    pub counted_from: u32,
    /// Executions of the first n instructions only, each counted in its
    /// slot: (n, slot), made when a signal handler left the block half-way
    /// (settle.rs).
    pub partial: Vec<(u32, u32)>,
}

impl End {
    /// The end as the code table records it.
    fn for_profile(&self) -> flopscope_counter_file::profile::End {
        use flopscope_counter_file::profile::End as P;
        match *self {
            End::FallTo(next) => P::Fall { next },
            End::Cond { taken, fall } => P::Cond { taken, next: fall },
            End::Jump(target) => P::Jump { target },
            End::Call { target, ret } => P::Call { target, next: ret },
            End::IndirectCall { ret } => P::IndirectCall { next: ret },
            End::IndirectJump | End::Return { .. } => P::Other,
            End::Syscall { next }
            | End::Cpuid { next }
            | End::Marker { next, .. }
            | End::Ssc { next, .. } => P::Fall { next },
        }
    }
}

/// Instrumentation of the run-time-only work of one instruction, placed
/// before it; returns the slot of a REP string's iterations (counted after).
fn dynamic_items(
    insn: &Instruction,
    info: &InsnInfo,
    slots: &mut Slots,
    classifier: &mut Classifier,
    flags_live: bool,
    code: &mut Code,
    uncounted_state: &mut bool,
) -> Option<u32> {
    let fp_masked = info
        .fp
        .filter(|fp| fp.key.masked && fp.flop_per_lane.total() > 0);
    let mem = info.mem.dynamic;
    let mut rep_slot = None;
    if mem == Some(DynamicMem::RepString) {
        let mut one = *insn;
        one.set_has_rep_prefix(false);
        one.set_has_repne_prefix(false);
        let per = classifier.classify(&one);
        let mut d = Desc::default();
        for (size, n) in per.mem.reads.counts() {
            d.add(SlotKind::MemRead { size }, u64::from(n));
        }
        for (size, n) in per.mem.writes.counts() {
            d.add(SlotKind::MemWrite { size }, u64::from(n));
        }
        // An instruction executed an iteration, beside the block's one: as
        // QEMU runs a REP string instruction (n iterations, then the check
        // that ends them: n + 1) and the emulate engine counts it.
        d.add(SlotKind::Instructions, 1);
        rep_slot = Some(slots.add(d));
        code.rep_before();
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
        (Some((src, lanes, fp)), Some(m)) if m.src == src && m.elems == lanes && !m.any => {
            let mut d = Desc::default();
            d.add_lanes(&fp);
            d.add_access(&m);
            let slot = slots.add(d);
            emit::count_mask(src, lanes, slot, flags_live, code);
        }
        (fp_src, mem_mask) => {
            if let Some((src, lanes, fp)) = fp_src {
                let mut d = Desc::default();
                d.add_lanes(&fp);
                let slot = slots.add(d);
                emit::count_mask(src, lanes, slot, flags_live, code);
            }
            if let Some(m) = mem_mask {
                let mut d = Desc::default();
                d.add_access(&m);
                let slot = slots.add(d);
                if m.any {
                    emit::count_any(m.src, m.elems, slot, flags_live, code);
                } else {
                    emit::count_mask(m.src, m.elems, slot, flags_live, code);
                }
            }
        }
    }
    rep_slot
}

/// A masked memory access: which mask, how many elements, their size.
#[derive(Debug, Clone, Copy)]
pub struct MaskedAccess {
    pub src: MaskSource,
    pub elems: u32,
    pub elem_bytes: u32,
    pub read: bool,
    pub write: bool,
    /// An embedded broadcast (`{1to16}`): its one element is read once when
    /// any of the `elems` lanes is active, not once a lane.
    pub any: bool,
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
        let broadcast = !vsib && ms.is_broadcast();
        let elems = if vsib {
            let idx_bytes = if is_dword_index(m) { 4 } else { 8 };
            let data = if store {
                insn.op1_register()
            } else {
                insn.op0_register()
            };
            (reg_bytes(insn.memory_index()) / idx_bytes).min(reg_bytes(data) / elem_bytes.max(1))
        } else if broadcast {
            // The operation's lanes: its widest vector register's.
            let widest = (0..insn.op_count())
                .filter(|&i| insn.op_kind(i) == OpKind::Register)
                .map(|i| insn.op_register(i))
                .filter(|r| r.is_xmm() || r.is_ymm() || r.is_zmm())
                .map(reg_bytes)
                .max()
                .unwrap_or(elem_bytes);
            widest / elem_bytes.max(1)
        } else {
            ms.element_count() as u32
        };
        return Some(MaskedAccess {
            src,
            elems,
            elem_bytes,
            read: !store,
            write: store,
            any: broadcast,
        });
    }
    if vsib {
        // AVX2 gather: dest, [base+index*s], mask vector.
        let elem_bytes = insn.memory_size().element_size() as u32;
        let idx_bytes = if is_dword_index(m) { 4 } else { 8 };
        let elems = (reg_bytes(insn.memory_index()) / idx_bytes)
            .min(reg_bytes(insn.op0_register()) / elem_bytes);
        let mask = insn.op2_register();
        return Some(MaskedAccess {
            src: MaskSource::Vector {
                reg: mask,
                elem_bytes,
            },
            elems,
            elem_bytes,
            read: true,
            write: false,
            any: false,
        });
    }
    match m {
        Mnemonic::Vmaskmovps
        | Mnemonic::Vmaskmovpd
        | Mnemonic::Vpmaskmovd
        | Mnemonic::Vpmaskmovq => {
            let elem_bytes = if matches!(m, Mnemonic::Vmaskmovps | Mnemonic::Vpmaskmovd) {
                4
            } else {
                8
            };
            let elems = insn.memory_size().size() as u32 / elem_bytes;
            Some(MaskedAccess {
                src: MaskSource::Vector {
                    reg: insn.op1_register(),
                    elem_bytes,
                },
                elems,
                elem_bytes,
                read: !store,
                write: store,
                any: false,
            })
        }
        Mnemonic::Maskmovq | Mnemonic::Maskmovdqu | Mnemonic::Vmaskmovdqu => {
            let mask = insn.op1_register();
            Some(MaskedAccess {
                src: MaskSource::Vector {
                    reg: mask,
                    elem_bytes: 1,
                },
                elems: reg_bytes(mask),
                elem_bytes: 1,
                read: false,
                write: true,
                any: false,
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

/// Lays a built block out at the arena's next address (through `scratch`
/// and `patches`, buffers the caller keeps; its marks go to
/// `patches.marks`), tells each of its stubs the branch that linking
/// re-aims in place, and each of its indirect branches' records where
/// its key is; returns the block's address.
pub fn place(
    code: &Code,
    arena: &mut Arena,
    scratch: &mut Vec<u8>,
    patches: &mut crate::code::Patches,
) -> Result<u64, String> {
    arena.align(16);
    let at = arena.next;
    crate::code::layout_marked(code, at, scratch, patches)?;
    arena
        .put(scratch)
        .ok_or_else(|| "the code cache arena is full".to_string())?;
    for &(stub, rel32_at) in &patches.links {
        crate::cache::set_site(stub, at + u64::from(rel32_at));
    }
    for &(record, imm_at) in &patches.keys {
        crate::cache::set_key(record, at + u64::from(imm_at));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flopscope_model::{FlopOp, OpClass, Precision};

    fn one(bytes: &[u8]) -> Instruction {
        flopscope_isa::decode_one(bytes, 0x1000).expect("decodes")
    }

    #[test]
    fn masked_fma_books_executions_statically_and_lanes_at_run_time() {
        // vfmadd231pd zmm0{k1}, zmm1, zmm2
        let insn = one(&[0x62, 0xf2, 0xf5, 0x49, 0xb8, 0xc2]);
        let info = Classifier::new().classify(&insn);
        let mut d = Desc::default();
        d.add_static(&info, &insn);
        let key = |masked| (Precision::Fp64, OpClass::Fma, 8, 512, masked);
        assert!(d.items.contains(&(
            SlotKind::FpInsn {
                precision: key(true).0,
                op: key(true).1,
                lanes: 8,
                width_bits: 512,
                masked: true,
                flop_per_insn: 0
            },
            1
        )));
        assert!(!d
            .items
            .iter()
            .any(|(k, _)| matches!(k, SlotKind::Flop { .. })));
        let mut lanes = Desc::default();
        lanes.add_lanes(&info.fp.unwrap());
        assert_eq!(
            lanes.items,
            vec![
                (
                    SlotKind::FpFlop {
                        precision: Precision::Fp64,
                        op: OpClass::Fma,
                        lanes: 8,
                        width_bits: 512,
                        masked: true
                    },
                    2
                ),
                (
                    SlotKind::Flop {
                        precision: Precision::Fp64,
                        op: FlopOp::Fma
                    },
                    2
                ),
            ]
        );
    }

    #[test]
    fn masked_accesses_name_their_mask_and_elements() {
        // vgatherdpd zmm1{k1}, [rax+ymm2*8]
        let g = mask_of_access(&one(&[0x62, 0xf2, 0xfd, 0x49, 0x92, 0x0c, 0xd0])).unwrap();
        assert_eq!(
            (g.src, g.elems, g.elem_bytes, g.read, g.write),
            (MaskSource::Opmask(Register::K1), 8, 8, true, false)
        );
        // vscatterqps [rax+zmm2*4]{k1}, ymm1
        let s = mask_of_access(&one(&[0x62, 0xf2, 0x7d, 0x49, 0xa3, 0x0c, 0x90])).unwrap();
        assert_eq!(
            (s.elems, s.elem_bytes, s.read, s.write),
            (8, 4, false, true)
        );
        // vmaskmovpd ymm1, ymm2, [rax]
        let m = mask_of_access(&one(&[0xc4, 0xe2, 0x6d, 0x2d, 0x08])).unwrap();
        assert_eq!(
            (m.src, m.elems, m.elem_bytes, m.read),
            (
                MaskSource::Vector {
                    reg: Register::YMM2,
                    elem_bytes: 8
                },
                4,
                8,
                true
            )
        );
        // vgatherdps ymm1, [rax+ymm2*4], ymm3 (AVX2: the mask is ymm3)
        let a = mask_of_access(&one(&[0xc4, 0xe2, 0x65, 0x92, 0x0c, 0x90])).unwrap();
        assert_eq!(
            (a.src, a.elems, a.elem_bytes),
            (
                MaskSource::Vector {
                    reg: Register::YMM3,
                    elem_bytes: 4
                },
                8,
                4
            )
        );
        // vmovupd zmm1{k2}, [rax]: 8 elements of 8 bytes
        let l = mask_of_access(&one(&[0x62, 0xf1, 0xfd, 0x4a, 0x10, 0x08])).unwrap();
        assert_eq!(
            (l.src, l.elems, l.elem_bytes),
            (MaskSource::Opmask(Register::K2), 8, 8)
        );
    }

    /// Code to look at, in the test binary's read-only data.
    static ENTRY_SUB: [u8; 9] = [
        0x55, // push rbp
        0x48, 0x89, 0xe5, // mov rbp, rsp
        0x48, 0x83, 0xec, 0x10, // sub rsp, 16: writes every flag
        0xc3,
    ];
    static ENTRY_ADC: [u8; 9] = [
        0xb8, 0, 0, 0, 0, // mov eax, 0
        0x83, 0xd0, 0x00, // adc eax, 0: reads the carry
        0xc3,
    ];
    static ENTRY_INC_RET: [u8; 4] = [
        0x48, 0xff, 0xc0, // inc rax: the carry stays unwritten
        0xc3, // ret: where the flags go is not known
    ];
    static ENTRY_JC: [u8; 3] = [0x72, 0x00, 0xc3]; // jc: reads the carry
    static ENTRY_SHL_CL: [u8; 7] = [
        0xd3, 0xe0, // shl eax, cl: with cl = 0, the flags stay
        0x48, 0x83, 0xec, 0x10, // sub rsp, 16
        0xc3,
    ];
    static ENTRY_SHL_CL_JC: [u8; 5] = [
        0xd3, 0xe0, // shl eax, cl
        0x72, 0x00, // jc: may read the caller's carry
        0xc3,
    ];
    static ENTRY_NOPS: [u8; 24] = [0x90; 24]; // longer than the look-ahead

    #[test]
    fn a_call_target_kills_the_flags_only_if_it_writes_them_all_before_any_read() {
        let at = |b: &[u8]| b.as_ptr() as u64;
        assert!(flags_dead_at(at(&ENTRY_SUB)));
        assert!(!flags_dead_at(at(&ENTRY_ADC)));
        assert!(!flags_dead_at(at(&ENTRY_INC_RET)));
        assert!(!flags_dead_at(at(&ENTRY_JC)));
        assert!(flags_dead_at(at(&ENTRY_SHL_CL)));
        assert!(!flags_dead_at(at(&ENTRY_SHL_CL_JC)));
        assert!(!flags_dead_at(at(&ENTRY_NOPS)));
        // Writable memory: its code may change after the look.
        let mut writable = ENTRY_SUB.to_vec();
        assert!(!flags_dead_at(writable.as_mut_ptr() as u64));
    }

    /// The instructions of `code`, one encoding each, classified.
    fn block(code: &[&[u8]]) -> Vec<(Instruction, InsnInfo)> {
        let mut c = Classifier::new();
        code.iter()
            .map(|b| {
                let i = one(b);
                let info = c.classify(&i);
                (i, info)
            })
            .collect()
    }

    #[test]
    fn flags_are_dead_before_an_instruction_that_writes_them_all() {
        let block = block(&[
            &[0x48, 0x8b, 0x07],       // mov rax, [rdi]
            &[0x48, 0x83, 0xf8, 0x05], // cmp rax, 5
            &[0x75, 0x10],             // jne
        ]);
        let live = flags_live_before(&block, ARITH_FLAGS);
        // Live at the end (conservative), so before jne; cmp writes all six
        // without reading any: dead before cmp and before the mov.
        assert_eq!(live[2], ARITH_FLAGS);
        assert_eq!(live[1], 0);
        assert_eq!(live[0], 0);
    }

    #[test]
    fn a_shift_by_cl_does_not_end_the_flags_life() {
        let block = block(&[
            &[0x48, 0x85, 0xc0], // test rax, rax
            &[0xd3, 0xe3],       // shl ebx, cl: cl = 0 leaves ZF from test
            &[0x74, 0x10],       // je
        ]);
        let live = flags_live_before(&block, 0);
        assert_ne!(live[2] & RflagsBits::ZF, 0, "je reads ZF");
        assert_ne!(live[1] & RflagsBits::ZF, 0, "the shift may leave it");
        assert_eq!(live[0], 0, "test writes them all");
        // A count that is not 0 writes them.
        let by_3 = one(&[0xc1, 0xe3, 0x03]); // shl ebx, 3
        assert!(!may_leave_flags(&by_3));
        assert!(may_leave_flags(&one(&[0xc1, 0xe3, 0x20]))); // shl ebx, 32
    }
}
