//! Region markers in the instruction stream, recognised at translation time.
//!
//! - SDE's SSC marks: `mov ebx, imm32` followed by `64 67 90` (fs addr32
//!   nop), as emitted by `__SSC_MARK(imm32)`; the CLI names the start and stop
//!   values (`--start-mark`, `--stop-mark`).
//! - flopscope's named markers (include/flopscope.h, the Fortran module, the
//!   Rust crate): `2e 3e 80 /7 ib`, i.e. `cmp byte ptr cs:ds:[reg], kind`
//!   with two segment prefixes no compiler emits. The byte compared is the
//!   first of the region's NUL-terminated name, so the run-time memory
//!   callback sees the name's address; `kind` 1 begins, 2 ends a region.
//!   Natively it is one load and compare: about a nanosecond.

use super::regions::{region_id, transition, Event};
use std::sync::atomic::{AtomicU64, Ordering};

pub const KIND_BEGIN: u8 = 1;
pub const KIND_END: u8 = 2;

/// SSC mark values to act on (0: not set).
pub static SSC_START: AtomicU64 = AtomicU64::new(0);
pub static SSC_STOP: AtomicU64 = AtomicU64::new(0);

/// The SSC region's id, registered when the marks are configured.
pub static SSC_REGION: AtomicU64 = AtomicU64::new(0);

/// What a marker instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// An SSC mark with this value (the `64 67 90` instruction of the pair).
    Ssc(u32),
    /// A named marker of this kind; the name is read at run time.
    Named(u8),
}

/// Recognises a marker at `bytes`, given the previous instruction of the block.
pub fn recognise(
    bytes: &[u8],
    insn: &iced_x86::Instruction,
    prev: Option<&iced_x86::Instruction>,
) -> Option<Marker> {
    if let Some(value) = flopscope_isa::ssc_mark_value(bytes, prev) {
        return Some(Marker::Ssc(value));
    }
    if bytes.len() >= 5
        && bytes[0] == 0x2e
        && bytes[1] == 0x3e
        && insn.code() == iced_x86::Code::Cmp_rm8_imm8
        && insn.op0_kind() == iced_x86::OpKind::Memory
        && insn.memory_displacement64() == 0
        && insn.memory_index() == iced_x86::Register::None
        && matches!(insn.immediate8(), KIND_BEGIN | KIND_END)
    {
        return Some(Marker::Named(insn.immediate8()));
    }
    None
}

/// The event an SSC mark value stands for, if the CLI asked for it.
pub fn ssc_event(value: u32) -> Option<Event> {
    let id = SSC_REGION.load(Ordering::Relaxed) as u16;
    if id == 0 {
        return None;
    }
    if u64::from(value) == SSC_START.load(Ordering::Relaxed) {
        Some(Event::Begin(id))
    } else if u64::from(value) == SSC_STOP.load(Ordering::Relaxed) {
        Some(Event::End(id))
    } else {
        None
    }
}

/// [`ssc_event`] for a mark that runs now: `None` past the first pair
/// unless the CLI said `:repeat` (translation asks `ssc_event`, which does
/// not count the mark).
pub fn ssc_event_now(value: u32) -> Option<Event> {
    ssc_event(value).filter(|e| SSC_GATE.admit(matches!(e, Event::End(_))))
}

/// Only the first start..stop pair, unless the CLI said `:repeat`.
pub static SSC_GATE: flopscope_counter_file::regions::SscGate =
    flopscope_counter_file::regions::SscGate::new();

/// Reads a NUL-terminated region name at a host address (at most 63 bytes).
///
/// # Safety
/// `host` must point to a NUL-terminated string: the program just loaded its
/// first byte through the marker, and passed a C string.
pub unsafe fn read_name(host: *const u8) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..63 {
        // SAFETY: per the contract, bytes up to the NUL are readable.
        let b = unsafe { *host.add(i) };
        if b == 0 {
            break;
        }
        out.push(b);
    }
    out
}

/// Applies a named marker met at run time; `None` when the region table is
/// full (the boundary is then ignored and the report says so).
pub fn named(vcpu: u32, kind: u8, name: &[u8]) -> Option<*mut u64> {
    let id = region_id(name)?;
    Some(transition(
        vcpu,
        if kind == KIND_BEGIN {
            Event::Begin(id)
        } else {
            Event::End(id)
        },
    ))
}
