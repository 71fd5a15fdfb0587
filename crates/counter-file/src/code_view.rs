//! A code table read in place: its records as views of the file's bytes,
//! found in one pass that checks every length and code, so that reading a
//! view afterwards cannot fail. A compiler's table holds a million
//! instructions: decoded into [`Record`]s, they cost an allocation each
//! (0.1 s to decode cc1's, 0.03 s more to free them) before anything was
//! attributed.

use crate::profile::{Block, End, Insn, Piece, PieceKind, Record, INSN_JUMPED, NO_COUNTER};

/// One record of a code table, borrowed from its bytes.
#[derive(Debug, Clone, Copy)]
pub enum RecordRef<'a> {
    Block(BlockRef<'a>),
    /// See [`Record::Dynamic`].
    Dynamic {
        counter: u32,
        pc: u64,
    },
    /// See [`Record::Maps`]; `text` as written (UTF-8 unless damaged).
    Maps {
        delta: i64,
        text: &'a [u8],
    },
}

/// A block record: its head read, its pieces read on demand.
#[derive(Debug, Clone, Copy)]
pub struct BlockRef<'a> {
    pub start: u64,
    pub end: End,
    pub taken_counter: Option<u32>,
    pub fall_counter: Option<u32>,
    pieces: u32,
    body: &'a [u8],
}

/// A piece of a block record.
#[derive(Debug, Clone, Copy)]
pub struct PieceRef<'a> {
    pub counter: u32,
    pub kind: PieceKind,
    insns: u32,
    body: &'a [u8],
}

/// An instruction of a piece: its address, whether a followed jump led to
/// it ([`Insn::jumped`]) and (slot, increment) pairs.
#[derive(Debug, Clone, Copy)]
pub struct InsnRef<'a> {
    pub pc: u64,
    pub jumped: bool,
    items: &'a [u8],
}

/// Every whole record of `data`, in order; a truncated or unknown last
/// record ends them (a crash leaves at most one).
pub fn records(data: &[u8]) -> Vec<RecordRef<'_>> {
    let mut c = Cursor { data, at: 0 };
    // A block's record takes 48 bytes at the least, and nearly every record
    // is a block's: room for all of them at once rather than grown by
    // copying (a compiler's table holds 220,000).
    let mut out = Vec::with_capacity(data.len() / 48 + 1);
    while let Some(r) = c.record() {
        out.push(r);
    }
    out
}

/// Reads the 4 bytes at `at` of bytes already checked to hold them.
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("a checked length"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("a checked length"))
}

/// Bytes of a piece's head and of an instruction's head.
const PIECE_HEAD: usize = 16;
const INSN_HEAD: usize = 16;

/// The bytes of the instruction at the start of `b` (checked).
fn insn_len(b: &[u8]) -> usize {
    INSN_HEAD + 8 * u32_at(b, 8) as usize
}

impl<'a> BlockRef<'a> {
    pub fn pieces(&self) -> impl Iterator<Item = PieceRef<'a>> + 'a {
        let mut rest = self.body;
        (0..self.pieces).map(move |_| {
            let insns = u32_at(rest, 8);
            let mut len = PIECE_HEAD;
            for _ in 0..insns {
                len += insn_len(&rest[len..]);
            }
            let (piece, after) = rest.split_at(len);
            rest = after;
            PieceRef {
                counter: u32_at(piece, 0),
                kind: PieceKind::from_code(u32_at(piece, 4)).expect("a checked code"),
                insns,
                body: &piece[PIECE_HEAD..],
            }
        })
    }

    /// The owned record.
    pub fn to_block(&self) -> Block {
        Block {
            start: self.start,
            end: self.end,
            taken_counter: self.taken_counter,
            fall_counter: self.fall_counter,
            pieces: self
                .pieces()
                .map(|p| Piece {
                    counter: p.counter,
                    kind: p.kind,
                    insns: p
                        .insns()
                        .map(|i| Insn {
                            pc: i.pc,
                            jumped: i.jumped,
                            items: i.items().collect(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

impl<'a> PieceRef<'a> {
    /// Its number of instructions.
    pub fn len(&self) -> usize {
        self.insns as usize
    }

    pub fn is_empty(&self) -> bool {
        self.insns == 0
    }

    pub fn insns(&self) -> impl Iterator<Item = InsnRef<'a>> + 'a {
        let mut rest = self.body;
        (0..self.insns).map(move |_| {
            let (insn, after) = rest.split_at(insn_len(rest));
            rest = after;
            InsnRef {
                pc: u64_at(insn, 0),
                jumped: u32_at(insn, 12) & INSN_JUMPED != 0,
                items: &insn[INSN_HEAD..],
            }
        })
    }
}

impl<'a> InsnRef<'a> {
    pub fn items(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        self.items
            .chunks_exact(8)
            .map(|p| (u32_at(p, 0), u32_at(p, 4)))
    }
}

impl RecordRef<'_> {
    /// The owned record.
    pub fn to_record(&self) -> Record {
        match *self {
            RecordRef::Block(b) => Record::Block(b.to_block()),
            RecordRef::Dynamic { counter, pc } => Record::Dynamic { counter, pc },
            RecordRef::Maps { delta, text } => Record::Maps {
                delta,
                text: String::from_utf8_lossy(text).into_owned(),
            },
        }
    }
}

/// Reads little-endian words; `None` at the end of the data.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let v = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(v)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32_at(self.bytes(4)?, 0))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64_at(self.bytes(8)?, 0))
    }

    fn record(&mut self) -> Option<RecordRef<'a>> {
        Some(match self.u32()? {
            1 => {
                let pieces = self.u32()?;
                let start = self.u64()?;
                let kind = self.u32()?;
                let taken = self.u32()?;
                let fall = self.u32()?;
                self.u32()?;
                let (a, c) = (self.u64()?, self.u64()?);
                let end = End::decode(kind, a, c)?;
                let from = self.at;
                // Every length checked here, once: the views read without checks.
                for _ in 0..pieces {
                    let head = self.bytes(PIECE_HEAD)?;
                    PieceKind::from_code(u32_at(head, 4))?;
                    for _ in 0..u32_at(head, 8) {
                        let k = u32_at(self.bytes(INSN_HEAD)?, 8);
                        self.bytes(8 * k as usize)?;
                    }
                }
                RecordRef::Block(BlockRef {
                    start,
                    end,
                    taken_counter: (taken != NO_COUNTER).then_some(taken),
                    fall_counter: (fall != NO_COUNTER).then_some(fall),
                    pieces,
                    body: &self.data[from..self.at],
                })
            }
            2 => RecordRef::Dynamic {
                counter: self.u32()?,
                pc: self.u64()?,
            },
            3 => {
                let len = self.u32()? as usize;
                let delta = self.u64()? as i64;
                let text = self.bytes(len)?;
                self.bytes(len.next_multiple_of(8) - len)?;
                RecordRef::Maps { delta, text }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(start: u64, pieces: Vec<Piece>) -> Record {
        Record::Block(Block {
            start,
            end: End::Cond {
                taken: start - 0x20,
                next: start + 0x10,
            },
            taken_counter: None,
            fall_counter: Some(9),
            pieces,
        })
    }

    fn piece(counter: u32, kind: PieceKind, insns: &[(u64, &[(u32, u32)])]) -> Piece {
        Piece {
            counter,
            kind,
            insns: insns
                .iter()
                .map(|&(pc, items)| Insn {
                    pc,
                    jumped: pc % 2 == 1,
                    items: items.to_vec(),
                })
                .collect(),
        }
    }

    #[test]
    fn views_read_what_was_written() {
        let b = block(
            0x1000,
            vec![
                piece(4, PieceKind::Own, &[(0x1000, &[(0, 1)]), (0x1004, &[])]),
                piece(5, PieceKind::Extra, &[(0x1004, &[(3, 8), (7, 2)])]),
                piece(6, PieceKind::Copy, &[]),
            ],
        );
        let bytes = b.encode();
        let [RecordRef::Block(view)] = records(&bytes)[..] else {
            panic!("one block record");
        };
        assert_eq!(
            (view.start, view.fall_counter, view.taken_counter),
            (0x1000, Some(9), None)
        );
        let pieces: Vec<PieceRef> = view.pieces().collect();
        assert_eq!(pieces.len(), 3);
        assert_eq!(
            (pieces[1].counter, pieces[1].kind, pieces[1].len()),
            (5, PieceKind::Extra, 1)
        );
        assert!(pieces[2].is_empty());
        let extra: Vec<InsnRef> = pieces[1].insns().collect();
        assert_eq!(extra[0].pc, 0x1004);
        assert_eq!(extra[0].items().collect::<Vec<_>>(), [(3, 8), (7, 2)]);
        assert_eq!(Record::Block(view.to_block()), b);
    }

    #[test]
    fn an_unknown_piece_kind_ends_the_records() {
        let good = block(
            0x1000,
            vec![piece(1, PieceKind::Own, &[(0x1000, &[(0, 1)])])],
        );
        let mut bad = block(
            0x2000,
            vec![piece(2, PieceKind::Own, &[(0x2000, &[(0, 1)])])],
        )
        .encode();
        // The piece's kind follows the block's head (48 bytes) and its counter.
        bad[52..56].copy_from_slice(&7u32.to_le_bytes());
        let mut bytes = good.encode();
        bytes.extend_from_slice(&bad);
        bytes.extend_from_slice(&good.encode());
        let read = records(&bytes);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].to_record(), good);
        // A count of instructions past the data's end: no record, no panic.
        let mut long = good.encode();
        long[56..60].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(records(&long).is_empty());
    }
}
