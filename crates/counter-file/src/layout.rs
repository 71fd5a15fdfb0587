//! The counter file shared by the plugin (writer) and the CLI (reader).
//!
//! The CLI creates the file; the plugin maps it `MAP_SHARED` and counts
//! straight into it. Counts therefore survive however QEMU ends (a signal, a
//! kill), and the CLI can read progress while the program runs.
//!
//! ```text
//! 0        header (magic, sizes, used slots/banks, status words, texts,
//!          the process's command line, children's wait statuses)
//! 4096     slot table: what each counter slot counts (16 bytes a slot)
//! 12288    bank table: the vCPU and region state of each bank (16 bytes)
//! 45056    region table: region names (64 bytes each, NUL-terminated)
//! 61440    state table: the stack of open regions of each state (16 bytes)
//! 65536    banks: MAX_BANKS x MAX_SLOTS u64 counters
//! ```
//! A bank holds one vCPU's counters while one set of regions is open (its
//! state; state 0 is "no region open"). Slots are assigned as the plugin
//! meets new kinds of instruction; each slot's kind, region's name and
//! state's stack is written before anything refers to it.

use flopscope_model::{FlopOp, OpClass, Precision};
use std::sync::atomic::{AtomicU64, Ordering};

pub const MAGIC: u64 = u64::from_le_bytes(*b"FLOPSCP1");
/// 3: the process's command line, how it ended, its parent (forked
/// children), when its file started, and the wait statuses of the children
/// it reaped (header words 15..=18, [`COMMAND_TEXT`], [`REAPED_TABLE`]).
pub const LAYOUT_VERSION: u64 = 3;
pub const MAX_SLOTS: usize = 512;
pub const MAX_BANKS: usize = 2048;

pub const SLOT_TABLE: usize = 4096;
pub const BANK_TABLE: usize = SLOT_TABLE + MAX_SLOTS * 16;
pub const REGION_TABLE: usize = BANK_TABLE + MAX_BANKS * 16;
pub const MAX_REGIONS: usize = 256;
pub const REGION_NAME_BYTES: usize = 64;
pub const STATE_TABLE: usize = REGION_TABLE + MAX_REGIONS * REGION_NAME_BYTES;
pub const MAX_STATES: usize = 256;
/// Deepest nesting of regions a state records.
pub const MAX_DEPTH: usize = 8;
pub const BANKS: usize = 65536;
pub const FILE_BYTES: usize = BANKS + MAX_BANKS * MAX_SLOTS * 8;

/// Header words (u64 index into the header).
pub mod word {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const SLOTS_USED: usize = 2;
    pub const BANKS_USED: usize = 3;
    /// 1 once the plugin's exit callback ran.
    pub const FINISHED: usize = 4;
    /// Guest address of an instruction QEMU cannot execute that was reached.
    pub const UNSUPPORTED_PC: usize = 5;
    /// Executions of blocks counted while no bank was free (counts lost).
    pub const OVERFLOW: usize = 6;
    /// Process id of the emulated process.
    pub const PID: usize = 7;
    /// Region ids in use (id 0 is unused: ids start at 1).
    pub const REGIONS_USED: usize = 8;
    /// Region states in use (state 0, no region open, always exists).
    pub const STATES_USED: usize = 9;
    /// Region ends that matched no open region, or closed inner ones.
    pub const MISMATCHES: usize = 10;
    /// What the unsupported instruction is: 1 EVEX (AVX-512) that QEMU
    /// cannot run, 2 other (QEMU cannot run it, or the native engine cannot
    /// go on), 3 an instruction of an extension this processor lacks
    /// (native engine; the extension's name at [`super::FEATURE_TEXT`]).
    pub const UNSUPPORTED_KIND: usize = 11;
    /// Native engine: the address of the first block with XSAVE-family
    /// instructions, whose bytes were not counted (0: none ran).
    pub const UNCOUNTED_STATE: usize = 12;
    /// Native engine: the first address of code run from a writable page
    /// the engine could not write-protect (its changes unseen), else 0.
    /// Emulate engine: the first file mapping made shared and executable
    /// (code another mapping of the file may write, unseen by QEMU).
    pub const GENERATED_CODE_PC: usize = 13;
    /// 1 when attribution data was lost (counter numbers ran out, the code
    /// table could not be written): functions and lines are then partial.
    pub const PROFILE_LOST: usize = 14;
    /// How the process ended: a [`super::ProcessEnd`] encoded (0: not seen).
    pub const END: usize = 15;
    /// A forked child's file: the pid of the process it was forked from
    /// (0 for the first process and for programs started with exec).
    pub const PARENT_PID: usize = 16;
    /// CLOCK_REALTIME (ns) when the file was formatted: orders the files of
    /// one pid (a fork, then the programs it exec'd).
    pub const STARTED_NS: usize = 17;
    /// Entries of [`super::REAPED_TABLE`] claimed (may exceed its size: the
    /// rest were not recorded).
    pub const REAPED_USED: usize = 18;
    /// Native engine: the program's writes that hit pages of translated
    /// code (each caught by the engine's write protection).
    pub const CODE_WRITES: usize = 19;
    /// Native engine: translated blocks invalidated (their code written,
    /// unmapped or made writable) and translated anew when run again.
    pub const BLOCKS_INVALIDATED: usize = 20;
    /// Emulate engine: executions of AVX masked loads (VMASKMOVPS/PD,
    /// VPMASKMOVD/Q from memory), whose bytes QEMU 7.2 reads, and the plugin
    /// books, at the whole operand's width, masked-off elements included.
    pub const FULL_WIDTH_MASKED_LOADS: usize = 21;
    /// Native engine: threads whose banks did not get rows of their own (more
    /// (thread, region state) banks than [`super::MAX_BANKS`]) and were summed
    /// per region state into rows of thread [`super::FOLDED_THREADS`].
    pub const THREADS_FOLDED: usize = 22;
    /// Native engine: threads created once the runtime's thread table was
    /// full, each of which took over the state, and the row, of a thread
    /// that had exited.
    pub const THREADS_TAKEN_OVER: usize = 23;
    /// Native engine: forked children that could not create a counter file
    /// of their own (no descriptor left under the program's limit on open
    /// files, say), so ran uncounted; each adds 1 in its parent's file.
    pub const CHILDREN_LOST: usize = 24;
    /// Native engine: 1 when the counts could not be written because the
    /// process ended while the engine held its translator's lock (it ran
    /// out of memory, or crashed, inside the engine); 0 after a flush.
    pub const FLUSH_LOCKED_OUT: usize = 25;
}
/// Threads the native engine keeps a state of (see [`word::THREADS_TAKEN_OVER`]).
pub const MAX_THREADS: usize = 4096;
/// The thread index of the bank rows that hold the summed counts of the
/// threads beyond the file's rows (see [`word::THREADS_FOLDED`]).
pub const FOLDED_THREADS: u32 = u32::MAX;
/// Byte offset of the text describing the unsupported instruction (NUL-terminated).
pub const UNSUPPORTED_TEXT: usize = 512;
pub const TEXT_BYTES: usize = 256;
/// Byte offset of the text describing the first region mismatch.
pub const MISMATCH_TEXT: usize = UNSUPPORTED_TEXT + TEXT_BYTES;
/// Byte offset of the name of the extension an unsupported instruction of
/// kind 3 needs (NUL-terminated, iced-x86's spelling: `AVX512F`).
pub const FEATURE_TEXT: usize = MISMATCH_TEXT + TEXT_BYTES;
pub const FEATURE_TEXT_BYTES: usize = 32;
/// Byte offset of the process's command line: its arguments, each ended by
/// a NUL, cut at [`COMMAND_BYTES`] - 1 bytes (then ending in `...`).
pub const COMMAND_TEXT: usize = 1152;
pub const COMMAND_BYTES: usize = 1024;
/// Byte offset of the wait statuses of children the process reaped (what
/// `wait4` told it; emulate engine): 16 bytes each, the child's pid then its
/// wait status (as `waitpid` gives it), both u64; pid 0: not written yet.
pub const REAPED_TABLE: usize = COMMAND_TEXT + COMMAND_BYTES;
pub const MAX_REAPED: usize = (SLOT_TABLE - REAPED_TABLE) / 16;

/// How a process ended, as its engine saw it (header word [`word::END`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProcessEnd {
    #[default]
    /// Not seen: still running, or ended in a way its engine could not see
    /// (SIGKILL, a signal the native runtime does not catch).
    NotSeen,
    /// `exit_group` (or `exit` of the last thread) with this code.
    Exited(i32),
    /// Killed by this signal.
    Signal(i32),
    /// Ended by a signal whose number the engine cannot tell (QEMU ends an
    /// emulated process killed by a signal without telling its plugins
    /// which: the parent's wait status, when recorded, names it).
    SignalUnknown,
    /// Replaced its program with `execve`: the process goes on in the file
    /// of the program it started (if that one was counted).
    Exec,
}

impl ProcessEnd {
    pub fn encode(self) -> u64 {
        match self {
            ProcessEnd::NotSeen => 0,
            ProcessEnd::Exited(c) => 1 << 32 | u64::from(c as u8),
            ProcessEnd::Signal(s) => 2 << 32 | u64::from(s as u32),
            ProcessEnd::SignalUnknown => 3 << 32,
            ProcessEnd::Exec => 4 << 32,
        }
    }

    pub fn decode(w: u64) -> ProcessEnd {
        let low = (w & 0xffff_ffff) as u32;
        match w >> 32 {
            1 => ProcessEnd::Exited(low as i32),
            2 => ProcessEnd::Signal(low as i32),
            3 => ProcessEnd::SignalUnknown,
            4 => ProcessEnd::Exec,
            _ => ProcessEnd::NotSeen,
        }
    }

    /// How a process ended from a wait status (`waitpid`'s).
    pub fn of_wait_status(status: u64) -> ProcessEnd {
        let st = status as u32;
        match st & 0x7f {
            0 => ProcessEnd::Exited(((st >> 8) & 0xff) as i32),
            0x7f => ProcessEnd::NotSeen, // stopped or continued, not ended
            sig => ProcessEnd::Signal(sig as i32),
        }
    }
}

/// `args` (each ended by a NUL, as in /proc/self/cmdline) as the command
/// text: cut at an argument's byte to fit, the cut marked `...`.
pub fn command_text(args: &[u8]) -> [u8; COMMAND_BYTES] {
    let mut b = [0u8; COMMAND_BYTES];
    let room = COMMAND_BYTES - 1;
    if args.len() <= room {
        b[..args.len()].copy_from_slice(args);
    } else {
        b[..room].copy_from_slice(&args[..room]);
        b[room - 4..room].copy_from_slice(b"...\0");
    }
    b
}

/// The command line [`command_text`] wrote, one string per argument.
pub fn command_of(raw: &[u8]) -> Vec<String> {
    // Empty arguments inside stay; the zeros after the last one do not.
    let Some(last) = raw.iter().rposition(|b| *b != 0) else {
        return Vec::new();
    };
    raw[..=last]
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Fixed slots: every file has them, so memory callbacks need no lookup.
pub const SLOT_INSTRUCTIONS: u32 = 0;
/// Reads of 1 << shift bytes seen at run time (shift 0..=4).
pub const SLOT_MEM_READ_SHIFT0: u32 = 1;
/// Writes of 1 << shift bytes seen at run time (shift 0..=4).
pub const SLOT_MEM_WRITE_SHIFT0: u32 = 6;
pub const MAX_MEM_SHIFT: u32 = 4;
/// Entries into the innermost region of the bank's state.
pub const SLOT_REGION_ENTRIES: u32 = 11;
pub const FIXED_SLOTS: u32 = 12;

/// What one counter slot counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKind {
    Instructions,
    /// Executions of one kind of FP instruction, each performing
    /// `flop_per_insn` FLOP (forms that differ only there, such as DPPS with
    /// another imm8, get slots of their own and merge into one row).
    FpInsn {
        precision: Precision,
        op: OpClass,
        lanes: u32,
        width_bits: u32,
        masked: bool,
        flop_per_insn: u32,
    },
    /// FLOP of one kind of FP instruction counted apart from its executions
    /// (the active lanes of masked instructions, seen at run time): adds to
    /// the kind's FLOP, not to its count.
    FpFlop {
        precision: Precision,
        op: OpClass,
        lanes: u32,
        width_bits: u32,
        masked: bool,
    },
    /// FLOP of one precision and category.
    Flop {
        precision: Precision,
        op: FlopOp,
    },
    MemRead {
        size: u32,
    },
    MemWrite {
        size: u32,
    },
    /// Entries into the innermost open region.
    RegionEntries,
}

fn index_of<T: PartialEq>(all: &[T], x: &T) -> u8 {
    all.iter()
        .position(|a| a == x)
        .expect("value is in its ALL list") as u8
}

impl SlotKind {
    /// The kinds of the fixed slots, in slot order.
    pub fn fixed() -> Vec<SlotKind> {
        let mut v = vec![SlotKind::Instructions];
        v.extend((0..=MAX_MEM_SHIFT).map(|s| SlotKind::MemRead { size: 1 << s }));
        v.extend((0..=MAX_MEM_SHIFT).map(|s| SlotKind::MemWrite { size: 1 << s }));
        v.push(SlotKind::RegionEntries);
        v
    }

    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        let mut put = |tag: u8, x: u8, y: u8, z: u8, p: u32, q: u32, r: u32| {
            b[0] = tag;
            b[1] = x;
            b[2] = y;
            b[3] = z;
            b[4..8].copy_from_slice(&p.to_le_bytes());
            b[8..12].copy_from_slice(&q.to_le_bytes());
            b[12..16].copy_from_slice(&r.to_le_bytes());
        };
        match *self {
            SlotKind::Instructions => put(1, 0, 0, 0, 0, 0, 0),
            SlotKind::FpInsn {
                precision,
                op,
                lanes,
                width_bits,
                masked,
                flop_per_insn,
            } => put(
                2,
                index_of(&Precision::ALL, &precision),
                index_of(&OpClass::ALL, &op),
                masked as u8,
                lanes,
                width_bits,
                flop_per_insn,
            ),
            SlotKind::Flop { precision, op } => put(
                3,
                index_of(&Precision::ALL, &precision),
                index_of(&FlopOp::ALL, &op),
                0,
                0,
                0,
                0,
            ),
            SlotKind::FpFlop {
                precision,
                op,
                lanes,
                width_bits,
                masked,
            } => put(
                7,
                index_of(&Precision::ALL, &precision),
                index_of(&OpClass::ALL, &op),
                masked as u8,
                lanes,
                width_bits,
                0,
            ),
            SlotKind::MemRead { size } => put(4, 0, 0, 0, size, 0, 0),
            SlotKind::MemWrite { size } => put(5, 0, 0, 0, size, 0, 0),
            SlotKind::RegionEntries => put(6, 0, 0, 0, 0, 0, 0),
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<SlotKind> {
        let p = u32::from_le_bytes(b[4..8].try_into().ok()?);
        let q = u32::from_le_bytes(b[8..12].try_into().ok()?);
        let r = u32::from_le_bytes(b[12..16].try_into().ok()?);
        Some(match b[0] {
            1 => SlotKind::Instructions,
            2 => SlotKind::FpInsn {
                precision: *Precision::ALL.get(b[1] as usize)?,
                op: *OpClass::ALL.get(b[2] as usize)?,
                masked: b[3] != 0,
                lanes: p,
                width_bits: q,
                flop_per_insn: r,
            },
            3 => SlotKind::Flop {
                precision: *Precision::ALL.get(b[1] as usize)?,
                op: *FlopOp::ALL.get(b[2] as usize)?,
            },
            4 => SlotKind::MemRead { size: p },
            5 => SlotKind::MemWrite { size: p },
            6 => SlotKind::RegionEntries,
            7 => SlotKind::FpFlop {
                precision: *Precision::ALL.get(b[1] as usize)?,
                op: *OpClass::ALL.get(b[2] as usize)?,
                masked: b[3] != 0,
                lanes: p,
                width_bits: q,
            },
            _ => return None,
        })
    }
}

/// A view of a mapped counter file.
#[derive(Clone, Copy)]
pub struct View {
    base: *mut u8,
}

// SAFETY: every shared word is accessed through atomics.
unsafe impl Send for View {}
unsafe impl Sync for View {}

impl View {
    /// # Safety
    /// `base` must point to a mapping of at least [`FILE_BYTES`] bytes that
    /// lives as long as the view.
    pub unsafe fn new(base: *mut u8) -> View {
        View { base }
    }

    pub fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: header words lie within the mapping and are 8-aligned.
        unsafe { &*(self.base.add(i * 8) as *const AtomicU64) }
    }

    /// The counters of bank `b` (MAX_SLOTS of them).
    pub fn bank(&self, b: usize) -> *mut u64 {
        debug_assert!(b < MAX_BANKS);
        // SAFETY: in bounds by the layout.
        unsafe { self.base.add(BANKS + b * MAX_SLOTS * 8) as *mut u64 }
    }

    pub fn counter(&self, bank: usize, slot: usize) -> &AtomicU64 {
        debug_assert!(slot < MAX_SLOTS);
        // SAFETY: in bounds and aligned by the layout.
        unsafe { &*(self.bank(bank).add(slot) as *const AtomicU64) }
    }

    pub fn bytes(&self, offset: usize, len: usize) -> &[u8] {
        // SAFETY: callers pass ranges inside the layout.
        unsafe { std::slice::from_raw_parts(self.base.add(offset), len) }
    }

    /// # Safety
    /// Only the single writer of this range may call it.
    pub unsafe fn write_bytes(&self, offset: usize, data: &[u8]) {
        // SAFETY: per the contract, in bounds and not written concurrently.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.add(offset), data.len()) }
    }

    pub fn slot_kind(&self, slot: usize) -> Option<SlotKind> {
        SlotKind::decode(self.bytes(SLOT_TABLE + slot * 16, 16))
    }

    fn u32_at(&self, offset: usize) -> u32 {
        u32::from_le_bytes(self.bytes(offset, 4).try_into().expect("4 bytes"))
    }

    /// vCPU index owning bank `b`.
    pub fn bank_vcpu(&self, b: usize) -> u32 {
        self.u32_at(BANK_TABLE + b * 16)
    }

    /// Region state of bank `b`.
    pub fn bank_state(&self, b: usize) -> u32 {
        self.u32_at(BANK_TABLE + b * 16 + 4)
    }

    /// Name of region `id` (ids start at 1).
    pub fn region_name(&self, id: usize) -> String {
        let raw = self.bytes(REGION_TABLE + id * REGION_NAME_BYTES, REGION_NAME_BYTES);
        let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
        String::from_utf8_lossy(&raw[..end]).into_owned()
    }

    /// The open regions of `state`, outermost first.
    pub fn state_stack(&self, state: usize) -> Vec<u16> {
        let raw = self.bytes(STATE_TABLE + state * 16, 16);
        raw.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .take_while(|id| *id != 0)
            .collect()
    }

    /// A NUL-terminated text field.
    pub fn text(&self, offset: usize) -> String {
        let raw = self.bytes(offset, TEXT_BYTES);
        let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
        String::from_utf8_lossy(&raw[..end]).into_owned()
    }
}

/// Reads a counter word that another process may be updating.
pub fn load(a: &AtomicU64) -> u64 {
    a.load(Ordering::Acquire)
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes ts.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Records the command line (`args` as [`command_text`] takes them).
///
/// # Safety
/// Only the process owning the file may call it, from one thread at a time.
pub unsafe fn write_command(view: &View, args: &[u8]) {
    // SAFETY: per the contract.
    unsafe { view.write_bytes(COMMAND_TEXT, &command_text(args)) };
}

/// Records how the process ended.
pub fn record_end(view: &View, end: ProcessEnd) {
    view.word(word::END).store(end.encode(), Ordering::Release);
}

/// Records a child's wait status (dropped when the table is full).
pub fn record_reaped(view: &View, pid: u64, status: u64) {
    let i = view.word(word::REAPED_USED).fetch_add(1, Ordering::AcqRel) as usize;
    if i >= MAX_REAPED || pid == 0 {
        return;
    }
    let at = REAPED_TABLE + i * 16;
    // SAFETY: entry i belongs to this caller alone (fetch_add above), inside
    // the header; both words are 8-aligned.
    let (p, s) = unsafe {
        (
            &*(view.base.add(at) as *const AtomicU64),
            &*(view.base.add(at + 8) as *const AtomicU64),
        )
    };
    s.store(status, Ordering::Relaxed);
    p.store(pid, Ordering::Release);
}

/// The children's wait statuses recorded, in the order they were reaped.
pub fn reaped(view: &View) -> Vec<(u64, u64)> {
    let n = (load(view.word(word::REAPED_USED)) as usize).min(MAX_REAPED);
    (0..n)
        .map(|i| {
            let w = |o: usize| {
                u64::from_le_bytes(
                    view.bytes(REAPED_TABLE + i * 16 + o, 8)
                        .try_into()
                        .expect("8 bytes"),
                )
            };
            (w(0), w(8))
        })
        .filter(|(pid, _)| *pid != 0)
        .collect()
}

/// Writes a fresh header and the fixed slot kinds into a zeroed mapping.
///
/// # Safety
/// No other thread or process may use the mapping yet.
pub unsafe fn format_new(view: &View, pid: u64) {
    view.word(word::MAGIC).store(MAGIC, Ordering::Relaxed);
    view.word(word::VERSION)
        .store(LAYOUT_VERSION, Ordering::Relaxed);
    for (i, kind) in SlotKind::fixed().iter().enumerate() {
        // SAFETY: the caller is the only user of the mapping.
        unsafe { view.write_bytes(SLOT_TABLE + i * 16, &kind.encode()) };
    }
    view.word(word::PID).store(pid, Ordering::Relaxed);
    view.word(word::STARTED_NS)
        .store(realtime_ns(), Ordering::Relaxed);
    view.word(word::REGIONS_USED).store(1, Ordering::Relaxed);
    view.word(word::STATES_USED).store(1, Ordering::Relaxed);
    view.word(word::SLOTS_USED)
        .store(u64::from(FIXED_SLOTS), Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_kinds_round_trip() {
        let kinds = [
            SlotKind::Instructions,
            SlotKind::FpInsn {
                precision: Precision::Bf16,
                op: OpClass::Dot,
                lanes: 16,
                width_bits: 512,
                masked: true,
                flop_per_insn: 64,
            },
            SlotKind::FpInsn {
                precision: Precision::X87,
                op: OpClass::Other,
                lanes: 1,
                width_bits: 80,
                masked: false,
                flop_per_insn: 1,
            },
            SlotKind::Flop {
                precision: Precision::Fp16,
                op: FlopOp::Rcp,
            },
            SlotKind::FpFlop {
                precision: Precision::Fp32,
                op: OpClass::Fma,
                lanes: 16,
                width_bits: 512,
                masked: true,
            },
            SlotKind::MemRead { size: 512 },
            SlotKind::MemWrite { size: 10 },
            SlotKind::RegionEntries,
        ];
        for k in kinds {
            assert_eq!(SlotKind::decode(&k.encode()), Some(k));
        }
        assert_eq!(SlotKind::decode(&[0; 16]), None);
    }

    #[test]
    fn process_ends_and_commands_round_trip() {
        for e in [
            ProcessEnd::NotSeen,
            ProcessEnd::Exited(0),
            ProcessEnd::Exited(255),
            ProcessEnd::Signal(11),
            ProcessEnd::SignalUnknown,
            ProcessEnd::Exec,
        ] {
            assert_eq!(ProcessEnd::decode(e.encode()), e);
        }
        assert_eq!(ProcessEnd::of_wait_status(3 << 8), ProcessEnd::Exited(3));
        assert_eq!(ProcessEnd::of_wait_status(9), ProcessEnd::Signal(9));
        assert_eq!(
            ProcessEnd::of_wait_status(0x80 | 11),
            ProcessEnd::Signal(11)
        );
        assert_eq!(
            command_of(&command_text(b"./scale\0\0n\0")),
            vec!["./scale", "", "n"]
        );
        let long: Vec<u8> = [b"./x\0".as_slice(), &[b'a'; 2000], b"\0"].concat();
        let cut = command_of(&command_text(&long));
        assert_eq!(cut[0], "./x");
        assert!(cut[1].ends_with("...") && cut[1].len() == COMMAND_BYTES - 5 - 1);
    }

    #[test]
    fn fixed_slots_match_their_constants() {
        let f = SlotKind::fixed();
        assert_eq!(f.len() as u32, FIXED_SLOTS);
        assert_eq!(f[SLOT_INSTRUCTIONS as usize], SlotKind::Instructions);
        assert_eq!(
            f[(SLOT_MEM_READ_SHIFT0 + 3) as usize],
            SlotKind::MemRead { size: 8 }
        );
        assert_eq!(
            f[(SLOT_MEM_WRITE_SHIFT0 + 4) as usize],
            SlotKind::MemWrite { size: 16 }
        );
    }

    // The regions of the file do not overlap (checked when compiling).
    const _: () = {
        assert!(UNSUPPORTED_TEXT + TEXT_BYTES <= SLOT_TABLE);
        assert!(MISMATCH_TEXT + TEXT_BYTES <= SLOT_TABLE);
        assert!(FEATURE_TEXT + FEATURE_TEXT_BYTES <= COMMAND_TEXT);
        assert!(REAPED_TABLE + MAX_REAPED * 16 <= SLOT_TABLE);
        assert!(REAPED_TABLE.is_multiple_of(8));
        assert!(STATE_TABLE + MAX_STATES * 16 <= BANKS);
        assert!(MAX_DEPTH * 2 == 16);
        assert!(BANKS.is_multiple_of(4096));
    };
}
