//! Machine code for the cache, written directly as bytes: the program's own
//! instructions copied (RIP-relative displacements re-aimed), and the few
//! instruction forms the runtime adds, hand-encoded (no encoder tables to
//! build at start-up). Translating a block this way costs a microsecond or
//! two.
//!
//! A block is a list of [`Piece`]s laid out in two passes: every branch has
//! a fixed size (rel32, or an indirect jump through a literal when the target
//! is out of reach), so label offsets are known after one pass.
//!
//! A branch to an exit stub ([`Target::Stub`]) is laid out so that linking
//! can re-aim it at the target block in place: its rel32 starts on a 4-byte
//! boundary (nop padding before it), so one aligned 4-byte store replaces
//! it whole while other threads may be fetching it. An aligned dword never
//! straddles a cache line or a fetch block, so a thread sees the old or the
//! new displacement, both good: the old still leads through the stub.
//! DynamoRIO patches its exit branches the same way (its `PAD_JMPS`:
//! the displacement must not cross a cache line).

use crate::header;

/// `bt dword ptr [rsi], SIGSEGV - 1`: the program's new signal set,
/// tested for SIGSEGV before its `rt_sigprocmask` runs in the cache
/// ([`Code::syscall_check`]). Always followed by a rel32 `jc` to the
/// dispatcher's exit.
pub const SIGSET_PROBE: [u8; 4] = [0x0f, 0xba, 0x26, (libc::SIGSEGV - 1) as u8];

/// Where a fault at cache address `pc` goes when it is [`SIGSET_PROBE`]'s:
/// the set's pointer is bad, and the dispatcher's exit (the `jc`'s target)
/// performs the call, for the kernel's EFAULT. `None` for any other fault.
/// Async-signal-safe.
pub fn sigset_probe_fault(pc: u64) -> Option<u64> {
    if !crate::cache::in_cache(pc) || !crate::cache::in_cache(pc + 9) {
        return None;
    }
    // SAFETY: cache code, mapped for the whole run (the 10 bytes read: a
    // fault in the last bytes of an arena is not the probe's).
    let (probe, jc) = unsafe { (*(pc as *const [u8; 4]), *((pc + 4) as *const [u8; 6])) };
    if probe != SIGSET_PROBE || jc[..2] != [0x0f, 0x82] {
        return None;
    }
    let rel = i32::from_le_bytes([jc[2], jc[3], jc[4], jc[5]]);
    let exit = (pc + 10).wrapping_add(rel as i64 as u64);
    // SAFETY: the jc's target in the same block: [`Code::syscall_restore`]'s
    // first instruction, `xchg rcx, rax` (no copied program instruction
    // pair is mistaken for the probe).
    (crate::cache::in_cache(exit) && unsafe { *(exit as *const [u8; 2]) } == [0x48, 0x91])
        .then_some(exit)
}

/// A branch target: an absolute address or a label of the same block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Abs(u64),
    Label(u32),
    /// The exit stub at this address, until the branch is linked in place.
    Stub(u64),
}

impl Target {
    fn abs(&self) -> Option<u64> {
        match *self {
            Target::Abs(a) | Target::Stub(a) => Some(a),
            Target::Label(_) => None,
        }
    }
}

/// Multi-byte nops of 0 to 7 bytes (Intel SDM vol. 2B, NOP: the
/// recommended sequences): one instruction each.
const NOPS: [&[u8]; 8] = [
    &[],
    &[0x90],
    &[0x66, 0x90],
    &[0x0f, 0x1f, 0x00],
    &[0x0f, 0x1f, 0x40, 0x00],
    &[0x0f, 0x1f, 0x44, 0x00, 0x00],
    &[0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
    &[0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
];

/// The nop bytes before a branch to a stub whose opcode takes `opcode`
/// bytes, `off` bytes into a block laid out at `at`: its rel32 then starts
/// 4-byte aligned, and at least 8 bytes into the block, whose first aligned
/// word invalidation rewrites (written_code.rs); a link never stores there.
/// At the block's start the nop is one instruction of at least 5 bytes, as
/// invalidation's jump needs.
fn link_pad(at: u64, off: u64, opcode: u64) -> u64 {
    let mut pad = (at + off + opcode).wrapping_neg() % 4;
    while off + pad + opcode < 8 {
        pad += 4;
    }
    pad
}

/// Nops before a [`Piece::Key`] at `at`: its immediate (2 bytes in) then
/// starts on an 8-byte boundary.
fn key_pad(at: u64) -> u64 {
    (at + 2).wrapping_neg() % 8
}

/// A piece of a block. Bytes live in the block's one buffer ([`Code`]);
/// pieces name ranges of it, so building a block allocates two vectors.
#[derive(Debug, Clone, Copy)]
pub enum Piece {
    /// Position-independent bytes: `buf[start..end]`.
    Bytes {
        start: u32,
        end: u32,
    },
    /// An instruction (`buf[start..end]`) with a RIP-relative rel32 at
    /// `disp_at` (from `start`) meaning `target`.
    Rip {
        start: u32,
        end: u32,
        disp_at: u32,
        target: u64,
    },
    /// `jmp` (cc None) or `jcc` to a target.
    Branch {
        cc: Option<u8>,
        target: Target,
    },
    /// A JRCXZ/LOOPcc (its opcode bytes, prefixes included, in
    /// `buf[start..end]`): taken goes to `target`, else execution falls
    /// through.
    ShortOnly {
        start: u32,
        end: u32,
        target: Target,
    },
    Label(u32),
    /// `mov rcx, imm64`, the immediate 8-byte aligned (nop padding before
    /// it) and [`KEY_UNSET`] until the dispatcher sets it in place, once:
    /// the negated target of the indirect branch whose record this is
    /// (cache.rs, `indirect_site`). One aligned 8-byte store replaces it
    /// whole, as linking replaces a rel32.
    Key {
        record: u64,
    },
    /// Where the copy of the program's instruction at this offset from the
    /// block's start begins (no bytes): [`layout_marked`] reports it, for
    /// mapping a sampled cache address back (crate::cachemap).
    Mark(u32),
}

/// Pieces of one block, with helpers for every form the runtime adds.
#[derive(Default)]
pub struct Code {
    buf: Vec<u8>,
    pub pieces: Vec<Piece>,
    next_label: u32,
    /// [`Code::mark`] records marks (the counted run is sampled).
    pub marking: bool,
    /// A label whose address [`layout_marked`] reports
    /// ([`Patches::resume`]): a system call's copy, where the dispatcher
    /// may send the program back.
    pub resume: Option<u32>,
}

/// A [`Piece::Key`]'s immediate until its branch's first execution: no
/// target plus it is zero but `u64::MAX`, which is no canonical address.
pub const KEY_UNSET: u64 = 1;

/// Register numbers of the hand-encoded forms.
pub const RAX: u8 = 0;
pub const RCX: u8 = 1;

impl Code {
    /// Room for about `bytes` bytes of code.
    pub fn with_capacity(bytes: usize) -> Code {
        Code {
            buf: Vec::with_capacity(bytes),
            pieces: Vec::with_capacity(8),
            next_label: 0,
            marking: false,
            resume: None,
        }
    }

    /// Empty again, its buffers kept: a translator building block after
    /// block reuses one `Code` (grown once to the largest block's size,
    /// rather than grown anew, copy by copy, for every block).
    pub fn reset(mut self) -> Code {
        self.buf.clear();
        self.pieces.clear();
        self.next_label = 0;
        self.marking = false;
        self.resume = None;
        self
    }

    pub fn label(&mut self) -> u32 {
        self.next_label += 1;
        self.next_label
    }

    /// Appends `b` to the buffer; returns its range.
    fn append(&mut self, b: &[u8]) -> (u32, u32) {
        let start = self.buf.len() as u32;
        self.buf.extend_from_slice(b);
        (start, self.buf.len() as u32)
    }

    pub fn bytes(&mut self, b: &[u8]) {
        let (start, end) = self.append(b);
        match self.pieces.last_mut() {
            Some(Piece::Bytes { end: e, .. }) if *e == start => *e = end,
            _ => self.pieces.push(Piece::Bytes { start, end }),
        }
    }

    /// An instruction whose rel32 at `disp_at` is RIP-relative to `target`.
    pub fn rip(&mut self, b: &[u8], disp_at: usize, target: u64) {
        let (start, end) = self.append(b);
        self.pieces.push(Piece::Rip {
            start,
            end,
            disp_at: disp_at as u32,
            target,
        });
    }

    /// A JRCXZ/LOOPcc given by its `opcode` bytes (no rel8).
    pub fn short_only(&mut self, opcode: &[u8], target: Target) {
        let (start, end) = self.append(opcode);
        self.pieces.push(Piece::ShortOnly { start, end, target });
    }

    /// `op` with ModRM `reg`, `gs:[off]` (absolute disp32), REX.W, and an
    /// optional imm8.
    fn gs(&mut self, op: u8, reg: u8, off: i32, imm8: Option<u8>) {
        // 65 REX.W op ModRM(mod 00, reg, rm 100) SIB(none, base 101) disp32
        let d = off.to_le_bytes();
        let b = [
            0x65,
            0x48,
            op,
            (reg & 7) << 3 | 0b100,
            0x25,
            d[0],
            d[1],
            d[2],
            d[3],
            imm8.unwrap_or(0),
        ];
        self.bytes(&b[..if imm8.is_some() { 10 } else { 9 }]);
    }

    pub fn place(&mut self, label: u32) {
        self.pieces.push(Piece::Label(label));
    }
    /// Marks where the copy of the program's instruction `offset` bytes
    /// into the block starts (when `marking`).
    pub fn mark(&mut self, offset: u32) {
        if self.marking {
            self.pieces.push(Piece::Mark(offset));
        }
    }
    /// `mov gs:[off], reg` (rax or rcx).
    pub fn store_gs(&mut self, off: i32, reg: u8) {
        self.gs(0x89, reg, off, None);
    }
    /// `mov reg, gs:[off]`.
    pub fn load_gs(&mut self, reg: u8, off: i32) {
        self.gs(0x8b, reg, off, None);
    }
    /// `add qword ptr gs:[counter], 1` (writes the flags).
    pub fn bump(&mut self, slot: u32) {
        self.gs(0x83, 0, header::counter(slot), Some(1));
    }
    /// `add gs:[counter], rax` (writes the flags).
    pub fn add_rax(&mut self, slot: u32) {
        self.gs(0x01, RAX, header::counter(slot), None);
    }
    /// A counter increment that leaves the flags alone.
    pub fn bump_keep_flags(&mut self, slot: u32) {
        self.add_keep_flags(slot, 1);
    }
    /// Adds `n` to a counter, leaving the flags alone.
    pub fn add_keep_flags(&mut self, slot: u32, n: i8) {
        self.store_gs(header::SAVE_RAX, RAX);
        self.add_through(RAX, slot, n);
        self.load_gs(RAX, header::SAVE_RAX);
    }
    /// Adds `n` to a counter through `reg` (rax to rdi), whose value the
    /// caller has saved, leaving the flags alone: load, `lea reg,
    /// [reg+n]`, store.
    pub fn add_through(&mut self, reg: u8, slot: u32, n: i8) {
        debug_assert!(reg < 8, "a register without a REX extension");
        self.load_gs(reg, header::counter(slot));
        self.bytes(&[0x48, 0x8d, 0x40 | reg << 3 | reg, n as u8]);
        self.store_gs(header::counter(slot), reg);
    }
    /// `lahf; seto al; mov gs:[SAVE_FLAGS], rax` (rax saved before).
    pub fn save_flags(&mut self) {
        self.flags_to_ax();
        self.store_gs(header::SAVE_FLAGS, RAX);
    }
    /// `mov rax, gs:[SAVE_FLAGS]; add al, 0x7f; sahf`.
    pub fn restore_flags(&mut self) {
        self.load_gs(RAX, header::SAVE_FLAGS);
        self.flags_from_ax();
    }
    /// `lahf; seto al`: the arithmetic flags into ah, the overflow flag
    /// into al.
    fn flags_to_ax(&mut self) {
        self.bytes(&[0x9f, 0x0f, 0x90, 0xc0]);
    }
    /// `add al, 0x7f; sahf`: the flags back from what
    /// [`Code::flags_to_ax`] left in ax (0x7f + 1 overflows, + 0 does not).
    fn flags_from_ax(&mut self) {
        self.bytes(&[0x04, 0x7f, 0x9e]);
    }
    /// Pushes the program's return address, read from the 8-byte literal at
    /// `literal` (no register, no flags): one 8-byte store, which the return's
    /// 8-byte load of it can take straight from the store buffer. Two 4-byte
    /// stores (`push imm32`, then the upper half) cannot be forwarded to one
    /// load: every return soon after its call stalled until both had reached
    /// the cache (16% of the cache code's samples in CPython).
    pub fn push_return(&mut self, literal: u64) {
        self.rip(&[0xff, 0x35, 0, 0, 0, 0], 2, literal);
    }
    /// `mov rax, [rsp]`.
    pub fn load_rsp_top(&mut self) {
        self.bytes(&[0x48, 0x8b, 0x04, 0x24]);
    }
    /// `lea rsp, [rsp + add]`.
    pub fn lea_rsp(&mut self, add: i32) {
        if (-128..128).contains(&add) {
            self.bytes(&[0x48, 0x8d, 0x64, 0x24, add as i8 as u8]);
        } else {
            let a = add.to_le_bytes();
            self.bytes(&[0x48, 0x8d, 0xa4, 0x24, a[0], a[1], a[2], a[3]]);
        }
    }
    /// `mov rcx, imm64`, the key of the indirect branch `record` belongs to
    /// ([`Piece::Key`]).
    pub fn key(&mut self, record: u64) {
        self.pieces.push(Piece::Key { record });
    }
    /// `mov rax, imm64`.
    pub fn mov_rax(&mut self, v: u64) {
        self.bytes(&[0x48, 0xb8]);
        self.bytes(&v.to_le_bytes());
    }
    pub fn jmp(&mut self, target: Target) {
        self.pieces.push(Piece::Branch { cc: None, target });
    }
    pub fn jcc(&mut self, cc: u8, target: Target) {
        self.pieces.push(Piece::Branch {
            cc: Some(cc),
            target,
        });
    }
    /// Exit to the dispatcher with descriptor `desc`.
    pub fn exit(&mut self, desc: u64, enter: u64) {
        self.store_gs(header::SAVE_RAX, RAX);
        self.mov_rax(desc);
        self.jmp(Target::Abs(enter));
    }
    /// Before a `syscall` (rax: its number): jumps to the returned label
    /// when the dispatcher handles that number (its bit set in the 512-bit
    /// map at `specials`), falls through otherwise; both ways must then
    /// [`Code::syscall_restore`]. Meanwhile rcx, which the `syscall`
    /// clobbers, holds the flags (as `lahf; seto al` leave them). Nothing
    /// is written to memory: not below the program's stack pointer, where
    /// its stack may end (a Go goroutine's), and not to the thread's words,
    /// which a signal handler running meanwhile would reuse.
    ///
    /// An `rt_sigprocmask` whose new mask cannot block SIGSEGV (no new set,
    /// SIG_UNBLOCK, or a set without SIGSEGV) runs here too; only the
    /// others go to the dispatcher, which keeps SIGSEGV out of the mask
    /// (a pair of calls took 2.0 us through it, 0.26 us here). The set is
    /// read with [`SIGSET_PROBE`], whose fault at a bad pointer (the
    /// kernel would return EFAULT) [`sigset_probe_fault`] sends to the
    /// dispatcher.
    pub fn syscall_check(&mut self, specials: u64) -> u32 {
        let native = self.label();
        let special = self.label();
        self.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
        self.flags_to_ax();
        self.bytes(&[0x48, 0x91]); // xchg rcx, rax
        self.bytes(&[0x48, 0x3d, 0xff, 0x01, 0x00, 0x00]); // cmp rax, 511
        self.jcc(0x7, Target::Label(native)); // ja
        self.rip(&[0x48, 0x0f, 0xa3, 0x05, 0, 0, 0, 0], 4, specials); // bt [specials], rax
        self.jcc(0x3, Target::Label(native)); // jnc
        self.bytes(&[0x48, 0x83, 0xf8, libc::SYS_rt_sigprocmask as u8]); // cmp rax, 14
        self.jcc(0x5, Target::Label(special)); // jne
        self.bytes(&[0x49, 0x83, 0xfa, 0x08]); // cmp r10, 8 (the set's size)
        self.jcc(0x5, Target::Label(special)); // jne
        self.bytes(&[0x48, 0x85, 0xf6]); // test rsi, rsi
        self.jcc(0x4, Target::Label(native)); // je: no new set
        self.bytes(&[0x48, 0x83, 0xff, libc::SIG_UNBLOCK as u8]); // cmp rdi, SIG_UNBLOCK
        self.jcc(0x4, Target::Label(native)); // je
        self.bytes(&SIGSET_PROBE);
        self.jcc(0x2, Target::Label(special)); // jc: SIGSEGV in the set
        self.place(native);
        self.syscall_restore();
        special
    }
    /// After a `syscall` in the cache: to `label` when it returned EFAULT
    /// (`lea rcx, [rax + 14]; jrcxz`: the flags stay the program's; rcx,
    /// which the call clobbered, is free).
    pub fn on_efault(&mut self, label: u32) {
        self.bytes(&[0x48, 0x8d, 0x48, libc::EFAULT as u8]); // lea rcx, [rax + EFAULT]
        self.short_only(&[0xe3], Target::Label(label)); // jrcxz
    }
    /// The program's flags, and its rax (the system call's number), from
    /// rcx after [`Code::syscall_check`].
    pub fn syscall_restore(&mut self) {
        self.bytes(&[0x48, 0x91]); // xchg rcx, rax
        self.flags_from_ax();
        self.bytes(&[0x48, 0x89, 0xc8]); // mov rax, rcx
    }
    /// Before a REP string instruction: `mov gs:[REP_RCX], rcx`.
    pub fn rep_before(&mut self) {
        self.store_gs(header::REP_RCX, RCX);
    }
    /// After it: adds rcx before - rcx after to `slot`.
    pub fn rep_after(&mut self, slot: u32, flags_live: bool) {
        self.store_gs(header::SAVE_RAX, RAX);
        if flags_live {
            self.save_flags();
        }
        self.load_gs(RAX, header::REP_RCX);
        self.bytes(&[0x48, 0x29, 0xc8]); // sub rax, rcx
        self.add_rax(slot);
        if flags_live {
            self.restore_flags();
        }
        self.load_gs(RAX, header::SAVE_RAX);
    }
}

/// Lays the block out at `at`; an error if an instruction cannot be placed
/// there (a RIP-relative operand beyond +-2 GiB).
pub fn layout(code: &Code, at: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    layout_into(code, at, &mut out)?;
    Ok(out)
}

/// [`layout`] into `out` (cleared first), whose allocation a caller reuses.
pub fn layout_into(code: &Code, at: u64, out: &mut Vec<u8>) -> Result<(), String> {
    layout_marked(code, at, out, &mut Patches::default())
}

/// What [`layout_marked`] reports besides the bytes, in buffers the caller
/// keeps (cleared first).
#[derive(Default)]
pub struct Patches {
    /// Each [`Piece::Mark`]: (offset in the code, its program offset).
    pub marks: Vec<(u32, u32)>,
    /// Each branch to a stub that linking can re-aim in place: (the stub,
    /// the offset of its rel32 in the code).
    pub links: Vec<(u64, u32)>,
    /// Each [`Piece::Key`]: (its record, the offset of its immediate).
    pub keys: Vec<(u64, u32)>,
    /// The offset of [`Code::resume`]'s label.
    pub resume: Option<u32>,
}

/// [`layout_into`], and the marks, links and keys in `patches`, in order.
pub fn layout_marked(
    code: &Code,
    at: u64,
    out: &mut Vec<u8>,
    patches: &mut Patches,
) -> Result<(), String> {
    let Patches {
        marks,
        links,
        keys,
        resume,
    } = patches;
    marks.clear();
    links.clear();
    keys.clear();
    let Code { buf, pieces, .. } = code;
    let range = |start: &u32, end: &u32| &buf[*start as usize..*end as usize];
    // Pass 1: offsets (far absolute branches take the long forms). Labels
    // are numbered from 1 by `Code::label`.
    let mut labels = [0u64; 8];
    let mut more_labels: Vec<u64> = Vec::new();
    let mut off = 0u64;
    let mut far = 0u64; // bit i: branch piece i takes the far form (i < 64)
    let mut far_more: Vec<usize> = Vec::new();
    let mut is_far = |i: usize, far: &mut u64| {
        if i < 64 {
            *far |= 1 << i;
        } else {
            far_more.push(i);
        }
    };
    for (i, p) in pieces.iter().enumerate() {
        let size = match p {
            Piece::Bytes { start, end } | Piece::Rip { start, end, .. } => (end - start) as usize,
            Piece::Label(l) => {
                let l = *l as usize;
                if l < labels.len() {
                    labels[l] = off;
                } else {
                    if more_labels.len() <= l {
                        more_labels.resize(l + 1, 0);
                    }
                    more_labels[l] = off;
                }
                0
            }
            Piece::Mark(_) => 0,
            Piece::Key { .. } => (key_pad(at + off) + 10) as usize,
            Piece::Branch { cc, target } => {
                let far_form = target.abs().is_some_and(|t| !near(at + off, t));
                if far_form {
                    is_far(i, &mut far);
                }
                let opcode = if cc.is_some() { 2 } else { 1 };
                match (far_form, target) {
                    (true, _) if cc.is_none() => 14,
                    (true, _) => 20,
                    (false, Target::Stub(_)) => (link_pad(at, off, opcode) + opcode + 4) as usize,
                    (false, _) => (opcode + 4) as usize,
                }
            }
            Piece::ShortOnly { start, end, target } => {
                let far_form = target.abs().is_some_and(|t| !near(at + off, t));
                if far_form {
                    is_far(i, &mut far);
                }
                (end - start) as usize + 1 + 2 + if far_form { 14 } else { 5 }
            }
        };
        off += size as u64;
    }
    let far_at = |i: usize| {
        if i < 64 {
            far & (1 << i) != 0
        } else {
            far_more.contains(&i)
        }
    };
    let label_at = |l: u32| {
        let l = l as usize;
        if l < labels.len() {
            labels[l]
        } else {
            more_labels[l]
        }
    };
    *resume = code.resume.map(|l| label_at(l) as u32);
    let resolve = |t: &Target| -> u64 {
        match t {
            Target::Abs(a) | Target::Stub(a) => *a,
            Target::Label(l) => at + label_at(*l),
        }
    };
    out.clear();
    out.reserve(off as usize);
    for (i, p) in pieces.iter().enumerate() {
        let here = at + out.len() as u64;
        match p {
            Piece::Bytes { start, end } => out.extend_from_slice(range(start, end)),
            Piece::Label(_) => {}
            Piece::Mark(offset) => marks.push((out.len() as u32, *offset)),
            Piece::Key { record } => {
                out.extend_from_slice(NOPS[key_pad(here) as usize]);
                out.extend_from_slice(&[0x48, 0xb9]);
                keys.push((*record, out.len() as u32));
                out.extend_from_slice(&KEY_UNSET.to_le_bytes());
            }
            Piece::Rip {
                start,
                end,
                disp_at,
                target,
            } => {
                let bytes = range(start, end);
                let rel = target.wrapping_sub(here + bytes.len() as u64) as i64;
                let Ok(rel) = i32::try_from(rel) else {
                    return Err(format!(
                        "a RIP-relative operand at {here:#x} cannot reach {target:#x}"
                    ));
                };
                let d = out.len() + *disp_at as usize;
                out.extend_from_slice(bytes);
                out[d..d + 4].copy_from_slice(&rel.to_le_bytes());
            }
            Piece::Branch { cc, target } => {
                let t = resolve(target);
                if matches!(target, Target::Stub(_)) && !far_at(i) {
                    let opcode = if cc.is_some() { 2 } else { 1 };
                    let pad = link_pad(at, out.len() as u64, opcode);
                    out.extend_from_slice(NOPS[pad as usize]);
                    links.push((t, (out.len() as u64 + opcode) as u32));
                }
                let here = at + out.len() as u64;
                match (cc, far_at(i)) {
                    (None, true) => far_jmp(out, t),
                    (Some(c), true) => {
                        // j!cc over the far jump.
                        out.extend_from_slice(&[0x0f, 0x80 | (c ^ 1)]);
                        out.extend_from_slice(&14i32.to_le_bytes());
                        far_jmp(out, t);
                    }
                    (None, false) => {
                        out.push(0xe9);
                        out.extend_from_slice(&rel32(here + 5, t).to_le_bytes());
                    }
                    (Some(c), false) => {
                        out.extend_from_slice(&[0x0f, 0x80 | c]);
                        out.extend_from_slice(&rel32(here + 6, t).to_le_bytes());
                    }
                }
            }
            Piece::ShortOnly { start, end, target } => {
                // jrcxz/loop +2; jmp short over; jmp target
                let t = resolve(target);
                let far = far_at(i);
                out.extend_from_slice(range(start, end));
                out.push(2);
                out.extend_from_slice(&[0xeb, if far { 14 } else { 5 }]);
                if far {
                    far_jmp(out, t);
                } else {
                    let from = at + out.len() as u64 + 5;
                    out.push(0xe9);
                    out.extend_from_slice(&rel32(from, t).to_le_bytes());
                }
            }
        }
    }
    debug_assert_eq!(out.len() as u64, off, "both passes agree on the size");
    Ok(())
}

fn near(from: u64, to: u64) -> bool {
    // Blocks are far smaller than the margin.
    from.abs_diff(to) < (1u64 << 31) - (1 << 20)
}

fn rel32(end: u64, target: u64) -> i32 {
    target.wrapping_sub(end) as i64 as i32
}

/// `jmp qword ptr [rip+0]; dq target`.
fn far_jmp(out: &mut Vec<u8>, target: u64) {
    out.extend_from_slice(&[0xff, 0x25, 0, 0, 0, 0]);
    out.extend_from_slice(&target.to_le_bytes());
}

/// Intel-syntax text of the instructions in `code` placed at `at` (tests).
#[cfg(test)]
pub fn disassemble(code: &[u8], at: u64) -> Vec<String> {
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let mut d = Decoder::with_ip(64, code, at, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    d.iter()
        .map(|i| {
            let mut s = String::new();
            f.format(&i, &mut s);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(code: &[u8], at: u64) -> Vec<String> {
        disassemble(code, at)
    }

    #[test]
    fn hand_encoded_forms_decode_as_meant() {
        let mut c = Code::default();
        c.bump(3);
        c.bump_keep_flags(1);
        c.save_flags();
        c.restore_flags();
        c.push_return(0x7000_1000);
        c.load_rsp_top();
        c.lea_rsp(8);
        c.lea_rsp(-128);
        c.lea_rsp(128);
        c.rep_before();
        c.rep_after(2, false);
        let code = layout(&c, 0x7000_0000).unwrap();
        assert_eq!(
            text(&code, 0x7000_0000),
            [
                "add qword ptr gs:[1018h],1",
                "mov gs:[8],rax",
                "mov rax,gs:[1008h]",
                "lea rax,[rax+1]",
                "mov gs:[1008h],rax",
                "mov rax,gs:[8]",
                "lahf",
                "seto al",
                "mov gs:[18h],rax",
                "mov rax,gs:[18h]",
                "add al,7Fh",
                "sahf",
                "push qword ptr [70001000h]",
                "mov rax,[rsp]",
                "lea rsp,[rsp+8]",
                "lea rsp,[rsp-80h]",
                "lea rsp,[rsp+80h]",
                "mov gs:[28h],rcx",
                "mov gs:[8],rax",
                "mov rax,gs:[28h]",
                "sub rax,rcx",
                "add gs:[1010h],rax",
                "mov rax,gs:[8]",
            ]
        );
    }

    /// The system call check keeps the flags in rcx (lahf; seto al), tests
    /// the number's bit in the map rip-relatively (and an `rt_sigprocmask`'s
    /// new set for SIGSEGV), and gives the flags and rax back on both ways
    /// out: no stack, no memory written.
    #[test]
    fn the_system_call_check_writes_no_memory_and_gives_flags_and_rax_back() {
        let mut c = Code::default();
        let special = c.syscall_check(0x7000_1000);
        c.bytes(&[0x0f, 0x05]); // syscall
        c.place(special);
        c.syscall_restore();
        let code = layout(&c, 0x7000_0000).unwrap();
        assert_eq!(
            text(&code, 0x7000_0000),
            [
                "mov rcx,rax",
                "lahf",
                "seto al",
                "xchg rcx,rax",
                "cmp rax,1FFh",
                "ja 0000000070000054h",
                "bt [70001000h],rax",
                "jae 0000000070000054h",
                "cmp rax,0Eh",
                "jne 000000007000005Eh",
                "cmp r10,8",
                "jne 000000007000005Eh",
                "test rsi,rsi",
                "je 0000000070000054h",
                "cmp rdi,1",
                "je 0000000070000054h",
                "bt dword ptr [rsi],0Ah",
                "jb 000000007000005Eh",
                "xchg rcx,rax",
                "add al,7Fh",
                "sahf",
                "mov rax,rcx",
                "syscall",
                "xchg rcx,rax",
                "add al,7Fh",
                "sahf",
                "mov rax,rcx",
            ]
        );
    }

    #[test]
    fn branches_reach_labels_near_and_far_targets() {
        let mut c = Code::default();
        let l = c.label();
        c.jcc(0x4, Target::Label(l)); // je l: 6 bytes
        c.jmp(Target::Abs(0x7000_1000)); // near: 5 bytes
        c.jmp(Target::Abs(0x1_0000_0000_0000)); // far: 14 bytes, through a literal
        c.place(l); // at 25
        c.jcc(0x5, Target::Abs(0x2_0000_0000_0000)); // far jne: je +14, then a far jmp
        c.short_only(&[0xe3], Target::Abs(0x7000_2000));
        let at = 0x7000_0000;
        let code = layout(&c, at).unwrap();
        // The literals decode as `add` bytes: leave them out.
        let t: Vec<String> = text(&code, at)
            .into_iter()
            .filter(|s| !s.starts_with("add "))
            .collect();
        assert_eq!(
            t,
            [
                "je 0000000070000019h",
                "jmp 0000000070001000h",
                "jmp qword ptr [70000011h]",
                "je 000000007000002Dh",
                "jmp qword ptr [70000025h]",
                "jrcxz 0000000070000031h",
                "jmp short 0000000070000036h",
                "jmp 0000000070002000h",
            ]
        );
        assert_eq!(
            u64::from_le_bytes(code[17..25].try_into().unwrap()),
            0x1_0000_0000_0000
        );
        assert_eq!(
            u64::from_le_bytes(code[37..45].try_into().unwrap()),
            0x2_0000_0000_0000
        );
    }

    #[test]
    fn a_key_s_immediate_is_aligned_whatever_precedes_it() {
        for before in 0..8 {
            let mut c = Code::default();
            c.bytes(&vec![0x90; before]);
            c.key(0x7000_8000);
            c.bytes(&[0xc3]);
            let at = 0x7000_0000 + 3;
            let (mut code, mut patches) = (Vec::new(), Patches::default());
            layout_marked(&c, at, &mut code, &mut patches).unwrap();
            let [(record, imm)] = patches.keys[..] else {
                panic!("one key: {:?}", patches.keys)
            };
            assert_eq!(record, 0x7000_8000);
            assert_eq!((at + u64::from(imm)) % 8, 0, "{before} bytes before");
            let i = imm as usize;
            assert_eq!(code[i - 2..i], [0x48, 0xb9]);
            assert_eq!(code[i..i + 8], KEY_UNSET.to_le_bytes());
            let text = text(&code, at);
            assert_eq!(text[text.len() - 2..], ["mov rcx,1", "ret"]);
        }
    }

    #[test]
    fn branches_to_stubs_have_aligned_displacements_past_the_first_word() {
        let at = 0x7000_0000;
        let mut c = Code::default();
        c.jmp(Target::Stub(0x7000_1000)); // at the start: a 7-byte nop first
        c.bytes(&[0x90]);
        c.jcc(0x4, Target::Stub(0x7000_2000)); // at 13: je at 14, rel32 at 16
        c.jmp(Target::Abs(0x7000_3000)); // not a stub: no padding
        let (mut code, mut patches) = (Vec::new(), Patches::default());
        layout_marked(&c, at, &mut code, &mut patches).unwrap();
        assert_eq!(patches.links, [(0x7000_1000, 8), (0x7000_2000, 16)]);
        assert_eq!(
            text(&code, at),
            [
                "nop [rax]",
                "jmp 0000000070001000h",
                "nop",
                "nop",
                "je 0000000070002000h",
                "jmp 0000000070003000h",
            ]
        );
        // Every padding, every start: one nop, then the rel32 aligned.
        for off in 0..16u64 {
            for opcode in [1, 2] {
                let pad = link_pad(at, off, opcode);
                assert!(pad < 8 && (at + off + pad + opcode).is_multiple_of(4));
                assert!(off + pad + opcode >= 8);
                assert!(off > 0 || pad >= 5);
                let one = disassemble(NOPS[pad as usize], 0);
                assert_eq!(one.len(), usize::from(pad > 0), "{pad}: {one:?}");
            }
        }
    }

    #[test]
    fn rip_relative_displacements_are_re_aimed() {
        // mov rax, [rip+disp]: 48 8b 05 disp32, meant for 0x7000_5000.
        let mut c = Code::default();
        c.rip(&[0x48, 0x8b, 0x05, 0, 0, 0, 0], 3, 0x7000_5000);
        let code = layout(&c, 0x7000_0000).unwrap();
        assert_eq!(text(&code, 0x7000_0000), ["mov rax,[70005000h]"]);
        assert!(layout(&c, 0x7_0000_0000).is_err());
    }
}
