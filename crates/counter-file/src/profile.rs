//! The executed code, for attribution: which blocks ran how often, what each
//! of their instructions counts, and how the blocks end.
//!
//! Two files beside a process's counter file `C`:
//! - `C.code`: records appended at translation time, each written with one
//!   `write` (so a crash leaves at most a truncated last record, which the
//!   reader drops): [`Record::Block`] (a block's pieces with every
//!   instruction's (slot, increment) items, and its end), [`Record::Dynamic`]
//!   (an instruction whose memory accesses are counted as they happen), and
//!   [`Record::Maps`] (a snapshot of the process's mappings, written before
//!   the first block translated from a mapping the last snapshot lacked).
//! - `C.prof`: per bank of the counter file, [`COUNTERS_PER_BANK`] u64
//!   counters (bank `b` at byte `b * BANK_STRIDE`; a sparse file), indexed by
//!   the counter numbers the records carry.
//!
//! A block is counted in pieces: the code before a region marker and the
//! code after it are counted in different banks (region states), so each
//! piece has its own counter. A block ending in a conditional branch has one
//! more counter, of the times the branch was taken, which gives the edge
//! counts that loop entries need.
//!
//! Per instruction, counts = items x executions of its piece, plus its
//! dynamic counters; summed over all instructions they equal the counter
//! file's totals (every slot bump of the engine is attributed to one).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// u64 counters per bank in the `.prof` file.
pub const COUNTERS_PER_BANK: u32 = 1 << 22;
pub const BANK_STRIDE: u64 = COUNTERS_PER_BANK as u64 * 8;
/// Dynamic counters of a [`Record::Dynamic`] instruction: reads of 1, 2, 4,
/// 8, 16 bytes, then writes of the same sizes.
pub const DYNAMIC_COUNTERS: u32 = 10;

/// The code-table file of counter file `counters`.
pub fn code_path(counters: &Path) -> PathBuf {
    with_suffix(counters, CODE_SUFFIX)
}

/// The per-bank counters file of counter file `counters`.
pub fn prof_path(counters: &Path) -> PathBuf {
    with_suffix(counters, PROF_SUFFIX)
}

/// Set in the environment of the counted run (`flopscope count
/// --no-attribution`): the engines write no code table and count no block.
pub const OFF_ENV: &str = "FLOPSCOPE_NO_ATTRIBUTION";

pub const CODE_SUFFIX: &str = ".code";
pub const PROF_SUFFIX: &str = ".prof";

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// How a block ends, for the control-flow graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Execution goes on at `next` (a block cut short, an SSC mark, ...).
    Fall { next: u64 },
    /// A conditional branch: to `taken` or on to `next`.
    Cond { taken: u64, next: u64 },
    /// An unconditional direct jump.
    Jump { target: u64 },
    /// A call; `next` is where it returns.
    Call { target: u64, next: u64 },
    /// A call through a register or memory; `next` is where it returns.
    IndirectCall { next: u64 },
    /// A return, an indirect jump, a system call or anything else whose
    /// successor the code does not say.
    Other,
}

impl End {
    fn encode(self) -> (u32, u64, u64) {
        match self {
            End::Fall { next } => (1, 0, next),
            End::Cond { taken, next } => (2, taken, next),
            End::Jump { target } => (3, target, 0),
            End::Call { target, next } => (4, target, next),
            End::IndirectCall { next } => (5, 0, next),
            End::Other => (6, 0, 0),
        }
    }

    pub(crate) fn decode(kind: u32, a: u64, b: u64) -> Option<End> {
        Some(match kind {
            1 => End::Fall { next: b },
            2 => End::Cond { taken: a, next: b },
            3 => End::Jump { target: a },
            4 => End::Call { target: a, next: b },
            5 => End::IndirectCall { next: b },
            6 => End::Other,
            _ => return None,
        })
    }

    /// Successors within the same function (a call's is its return site).
    pub fn local_successors(self) -> Vec<u64> {
        match self {
            End::Fall { next } => vec![next],
            End::Cond { taken, next } => vec![taken, next],
            End::Jump { target } => vec![target],
            End::Call { next, .. } | End::IndirectCall { next } => vec![next],
            End::Other => Vec::new(),
        }
    }
}

/// One instruction of a piece, with what one execution of it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    pub pc: u64,
    /// Reached from the instruction before it in the block by a jump the
    /// engine followed (the native engine translates on through an
    /// unconditional jump): the control flow's edge, not a fall-through.
    pub jumped: bool,
    /// (counter-file slot, increment) pairs.
    pub items: Vec<(u32, u32)>,
}

/// Instructions counted together by one counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub counter: u32,
    pub kind: PieceKind,
    pub insns: Vec<Insn>,
}

/// What a piece's counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// Executions of its own instructions (a block's head; the code after a
    /// region marker, counted in the new region's bank).
    Own,
    /// Executions of another copy of the first piece's instructions (the
    /// native engine lays a one-block loop out several times): they add to
    /// the block's executions. Its `insns` are empty.
    Copy,
    /// Units of run-time work of one instruction (active lanes, elements,
    /// REP iterations): each adds the items of its one instruction, not an
    /// execution of the block.
    Extra,
}

impl PieceKind {
    fn code(self) -> u32 {
        match self {
            PieceKind::Own => 0,
            PieceKind::Copy => 1,
            PieceKind::Extra => 2,
        }
    }
    pub(crate) fn from_code(c: u32) -> Option<PieceKind> {
        Some(match c {
            0 => PieceKind::Own,
            1 => PieceKind::Copy,
            2 => PieceKind::Extra,
            _ => return None,
        })
    }
}

/// A translated block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: u64,
    pub end: End,
    /// The counter of taken conditional branches ([`End::Cond`] only).
    pub taken_counter: Option<u32>,
    /// Or the counter of conditional branches not taken.
    pub fall_counter: Option<u32>,
    pub pieces: Vec<Piece>,
}

/// One record of the code table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Block(Block),
    /// The instruction at `pc` counts its accesses in the
    /// [`DYNAMIC_COUNTERS`] counters from `counter`.
    Dynamic {
        counter: u32,
        pc: u64,
    },
    /// The process's mappings (a /proc/PID/maps text) in the addresses the
    /// records use; `delta` is what the engine added to read them (QEMU's
    /// guest base: host address - guest address).
    Maps {
        delta: i64,
        text: String,
    },
}

pub(crate) const NO_COUNTER: u32 = u32::MAX;
/// Bit of an instruction head's flags word (its last 4 bytes):
/// [`Insn::jumped`].
pub(crate) const INSN_JUMPED: u32 = 1;

impl Record {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        self.encode_into(&mut b);
        b
    }

    /// Appends the record's bytes to `b`.
    pub fn encode_into(&self, b: &mut Vec<u8>) {
        let u32s = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        let u64s = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
        match self {
            Record::Block(blk) => {
                let mut e = BlockBytes::new(
                    b,
                    blk.start,
                    blk.end,
                    blk.taken_counter,
                    blk.fall_counter,
                    blk.pieces.len(),
                );
                for p in &blk.pieces {
                    e.piece(p.counter, p.kind, p.insns.len());
                    for i in &p.insns {
                        e.insn(i.pc, i.jumped, i.items.iter().copied());
                    }
                }
            }
            Record::Dynamic { counter, pc } => {
                u32s(b, 2);
                u32s(b, *counter);
                u64s(b, *pc);
            }
            Record::Maps { delta, text } => {
                u32s(b, 3);
                u32s(b, text.len() as u32);
                u64s(b, *delta as u64);
                b.extend_from_slice(text.as_bytes());
                b.resize(b.len().next_multiple_of(8), 0);
            }
        }
    }
}

/// A block record encoded as it is told, straight into a buffer: the bytes
/// of [`Record::Block`], without the record's vectors (a writer with
/// 250,000 blocks to write at a process's exit made one a piece and one an
/// instruction). Pieces and instructions follow in the numbers announced.
pub struct BlockBytes<'a> {
    b: &'a mut Vec<u8>,
}

impl<'a> BlockBytes<'a> {
    /// The block's head, `pieces` pieces to follow.
    pub fn new(
        b: &'a mut Vec<u8>,
        start: u64,
        end: End,
        taken_counter: Option<u32>,
        fall_counter: Option<u32>,
        pieces: usize,
    ) -> BlockBytes<'a> {
        let (kind, a, c) = end.encode();
        let mut e = BlockBytes { b };
        e.u32(1);
        e.u32(pieces as u32);
        e.u64(start);
        e.u32(kind);
        e.u32(taken_counter.unwrap_or(NO_COUNTER));
        e.u32(fall_counter.unwrap_or(NO_COUNTER));
        e.u32(0);
        e.u64(a);
        e.u64(c);
        e
    }

    /// A piece's head, `insns` instructions to follow.
    pub fn piece(&mut self, counter: u32, kind: PieceKind, insns: usize) {
        self.u32(counter);
        self.u32(kind.code());
        self.u32(insns as u32);
        self.u32(0);
    }

    /// An instruction, whether it was reached by a followed jump
    /// ([`Insn::jumped`]), and its (counter-file slot, increment) pairs.
    pub fn insn(&mut self, pc: u64, jumped: bool, items: impl IntoIterator<Item = (u32, u32)>) {
        self.u64(pc);
        let count_at = self.b.len();
        self.u32(0);
        self.u32(u32::from(jumped) * INSN_JUMPED);
        let mut n = 0u32;
        for (slot, inc) in items {
            self.u32(slot);
            self.u32(inc);
            n += 1;
        }
        self.b[count_at..count_at + 4].copy_from_slice(&n.to_le_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.b.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.b.extend_from_slice(&v.to_le_bytes());
    }
}

/// Decodes a code table; a truncated or unknown last record ends it.
/// Owned records: see [`crate::code_view::records`], which reads them in
/// place.
pub fn decode_records(data: &[u8]) -> Vec<Record> {
    crate::code_view::records(data)
        .iter()
        .map(|r| r.to_record())
        .collect()
}

/// The first `n` counters of bank `bank` in a `.prof` file (zeros past its
/// end).
pub fn read_bank(path: &Path, bank: usize, n: u32) -> std::io::Result<Vec<u64>> {
    use std::io::Seek;
    let mut out = vec![0u64; n as usize];
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    f.seek(std::io::SeekFrom::Start(bank as u64 * BANK_STRIDE))?;
    let mut raw = Vec::with_capacity(n as usize * 8);
    f.take(u64::from(n) * 8).read_to_end(&mut raw)?;
    for (o, c) in out.iter_mut().zip(raw.chunks_exact(8)) {
        *o = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
    Ok(out)
}

/// Appends records to a code table (the engine's side). One `write` per
/// record, on a file opened for appending.
pub struct CodeWriter {
    file: std::fs::File,
    /// Records [`CodeWriter::push`]ed and not yet written.
    buf: Vec<u8>,
}

/// [`CodeWriter::push`] writes once this many bytes are waiting.
const CHUNK: usize = 1 << 20;

impl CodeWriter {
    /// Creates (or, `append`, continues) the code table at `path`.
    pub fn open(path: &Path, append: bool) -> std::io::Result<CodeWriter> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .truncate(false)
            .open(path)?;
        if !append {
            file.set_len(0)?;
        }
        Ok(CodeWriter {
            file,
            buf: Vec::new(),
        })
    }

    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        self.write_bytes(&r.encode())
    }

    /// Appends an encoded record.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)
    }

    /// Appends a record through a buffer, written a megabyte at a time
    /// (a table of 250,000 blocks written record by record took as many
    /// system calls); [`CodeWriter::finish`] writes the rest. Not to be
    /// mixed with [`CodeWriter::write`], which writes at once.
    pub fn push(&mut self, r: &Record) -> std::io::Result<()> {
        r.encode_into(&mut self.buf);
        if self.buf.len() >= CHUNK {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// A block record to encode through the buffer ([`BlockBytes`]), as
    /// [`CodeWriter::push`] would write it.
    pub fn push_block(
        &mut self,
        start: u64,
        end: End,
        taken_counter: Option<u32>,
        fall_counter: Option<u32>,
        pieces: usize,
    ) -> std::io::Result<BlockBytes<'_>> {
        if self.buf.len() >= CHUNK {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(BlockBytes::new(
            &mut self.buf,
            start,
            end,
            taken_counter,
            fall_counter,
            pieces,
        ))
    }

    /// Writes what [`CodeWriter::push`] left in the buffer.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.file.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Record> {
        vec![
            Record::Maps {
                delta: -4096,
                text: "400000-401000 r-xp 00000000 08:01 12 /bin/x\n".into(),
            },
            Record::Block(Block {
                start: 0x401000,
                end: End::Cond {
                    taken: 0x401000,
                    next: 0x401010,
                },
                taken_counter: Some(1),
                fall_counter: None,
                pieces: vec![
                    Piece {
                        counter: 0,
                        kind: PieceKind::Own,
                        insns: vec![
                            Insn {
                                pc: 0x401000,
                                jumped: false,
                                items: vec![(0, 1), (14, 2)],
                            },
                            Insn {
                                pc: 0x401004,
                                jumped: true,
                                items: vec![(0, 1)],
                            },
                        ],
                    },
                    Piece {
                        counter: 2,
                        kind: PieceKind::Copy,
                        insns: vec![],
                    },
                ],
            }),
            Record::Dynamic {
                counter: 3,
                pc: 0x401008,
            },
        ]
    }

    #[test]
    fn records_read_back_as_written() {
        let recs = sample();
        let bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
        assert_eq!(decode_records(&bytes), recs);
    }

    #[test]
    fn a_truncated_last_record_is_dropped() {
        let recs = sample();
        let mut bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
        bytes.truncate(bytes.len() - 3);
        assert_eq!(decode_records(&bytes), recs[..2].to_vec());
    }

    #[test]
    fn bank_counters_read_from_their_stride() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.prof");
        let f = std::fs::File::create(&p).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(&7u64.to_le_bytes(), BANK_STRIDE + 16)
            .unwrap();
        assert_eq!(read_bank(&p, 1, 4).unwrap(), vec![0, 0, 7, 0]);
        assert_eq!(read_bank(&p, 0, 2).unwrap(), vec![0, 0]);
        assert_eq!(read_bank(&p, 5, 2).unwrap(), vec![0, 0]);
    }
}
