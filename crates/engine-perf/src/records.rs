//! The records of a perf ring buffer, parsed from bytes: what sampling reads.
//!
//! Layouts are those of `include/uapi/linux/perf_event.h` for the one sample
//! format this engine opens ([`SAMPLE_TYPE`]: identifier, IP, pid/tid, time),
//! with `sample_id_all`, so every other record ends with the same
//! `{pid, tid}, time, identifier` trailer. The ring is a power-of-two byte
//! array the kernel writes from `data_head` on; records are 8-byte aligned
//! and a record may wrap past the end: [`unwrap_range`] copies the unread
//! range out in order, [`parse_records`] splits it. Both are pure, so the
//! tests drive them with buffers they build.

use crate::sys;

/// The sample format every sampled event (and the side-band event) is opened with.
pub const SAMPLE_TYPE: u64 = sys::PERF_SAMPLE_IDENTIFIER
    | sys::PERF_SAMPLE_IP
    | sys::PERF_SAMPLE_TID
    | sys::PERF_SAMPLE_TIME;

/// Bytes of the `sample_id` trailer of non-sample records for [`SAMPLE_TYPE`]:
/// `{u32 pid, tid}`, `u64 time`, `u64 identifier`.
pub const SAMPLE_ID_BYTES: usize = 24;

const HEADER_BYTES: usize = 8;

/// One record, reduced to what attribution needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// An event overflowed: `period` events of event `id` happened, the last near `ip`.
    Sample {
        id: u64,
        ip: u64,
        pid: u32,
        tid: u32,
        time: u64,
    },
    /// A mapping was made (`prot` as in mmap(2); `path` is `[vdso]` and the like for pseudo files).
    Mmap2 {
        pid: u32,
        time: u64,
        addr: u64,
        len: u64,
        pgoff: u64,
        prot: u32,
        path: String,
    },
    /// Process `pid` called exec: its old mappings are gone.
    Exec { pid: u32, time: u64 },
    /// Process `pid` was forked from `ppid` (threads have `pid == ppid`).
    Fork { pid: u32, ppid: u32, time: u64 },
    /// The ring was full: `lost` records of the event `id` were dropped.
    Lost { id: u64, lost: u64 },
    /// Samples the kernel could not write (PERF_RECORD_LOST_SAMPLES).
    LostSamples { lost: u64 },
    /// The kernel stopped sampling an event for a while (too many interrupts).
    Throttle { id: u64 },
    /// Anything else (EXIT, UNTHROTTLE, plain COMM, ...).
    Other { kind: u32 },
}

/// Bytes `[tail, head)` of the ring `ring` (a power-of-two length), in order,
/// appended to `out`: the part up to the end of the ring, then the part from
/// its start. Positions are the kernel's free-running byte counters.
pub fn unwrap_range(ring: &[u8], tail: u64, head: u64, out: &mut Vec<u8>) {
    // SAFETY: `ring` is a valid slice of `ring.len()` bytes.
    unsafe { copy_range(ring.as_ptr(), ring.len(), tail, head, out) }
}

/// [`unwrap_range`] on a raw ring (the mapped buffer, which the kernel writes
/// outside `[tail, head)` meanwhile, so no slice of all of it is made).
///
/// # Safety
/// `base` must be valid for reads of `size` bytes, `size` a power of two, and
/// the bytes `[tail, head)` (modulo `size`) must not change during the call.
pub unsafe fn copy_range(base: *const u8, size: usize, tail: u64, head: u64, out: &mut Vec<u8>) {
    if size == 0 || head <= tail {
        return;
    }
    let len = ((head - tail) as usize).min(size);
    let start = (tail % size as u64) as usize;
    let first = len.min(size - start);
    out.reserve(len);
    // SAFETY: (caller) both ranges lie inside the ring; `out` has room for `len` more bytes.
    unsafe {
        let dst = out.as_mut_ptr().add(out.len());
        std::ptr::copy_nonoverlapping(base.add(start), dst, first);
        std::ptr::copy_nonoverlapping(base, dst.add(first), len - first);
        out.set_len(out.len() + len);
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The time field of a record's `sample_id` trailer.
fn trailer_time(rec: &[u8]) -> Option<u64> {
    u64_at(rec, rec.len().checked_sub(SAMPLE_ID_BYTES)? + 8)
}

/// Parses one whole record (header included); `None` if it is too short for its type.
pub fn parse_record(rec: &[u8]) -> Option<Record> {
    let kind = u32_at(rec, 0)?;
    let misc = u16_at(rec, 4)?;
    let body = HEADER_BYTES;
    Some(match kind {
        sys::PERF_RECORD_SAMPLE => Record::Sample {
            id: u64_at(rec, body)?,
            ip: u64_at(rec, body + 8)?,
            pid: u32_at(rec, body + 16)?,
            tid: u32_at(rec, body + 20)?,
            time: u64_at(rec, body + 24)?,
        },
        sys::PERF_RECORD_MMAP2 => {
            // pid, tid, addr, len, pgoff, 24 bytes of device/inode or build id, prot, flags, filename.
            let name_at = body + 8 + 24 + 24 + 8;
            let name_end = rec.len().checked_sub(SAMPLE_ID_BYTES)?;
            let name = rec.get(name_at..name_end)?;
            let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
            Record::Mmap2 {
                pid: u32_at(rec, body)?,
                addr: u64_at(rec, body + 8)?,
                len: u64_at(rec, body + 16)?,
                pgoff: u64_at(rec, body + 24)?,
                prot: u32_at(rec, body + 56)?,
                path: String::from_utf8_lossy(name).into_owned(),
                time: trailer_time(rec)?,
            }
        }
        sys::PERF_RECORD_COMM if misc & sys::PERF_RECORD_MISC_COMM_EXEC != 0 => Record::Exec {
            pid: u32_at(rec, body)?,
            time: trailer_time(rec)?,
        },
        sys::PERF_RECORD_FORK => Record::Fork {
            pid: u32_at(rec, body)?,
            ppid: u32_at(rec, body + 4)?,
            time: u64_at(rec, body + 16)?,
        },
        sys::PERF_RECORD_LOST => Record::Lost {
            id: u64_at(rec, body)?,
            lost: u64_at(rec, body + 8)?,
        },
        sys::PERF_RECORD_LOST_SAMPLES => Record::LostSamples {
            lost: u64_at(rec, body)?,
        },
        sys::PERF_RECORD_THROTTLE => Record::Throttle {
            id: u64_at(rec, body + 8)?,
        },
        kind => Record::Other { kind },
    })
}

/// Calls `f` with every record of `bytes` (whole records, back to back, as
/// [`unwrap_range`] gives them). Returns how many bytes were malformed
/// (a header whose size is impossible, or a record too short for its type):
/// parsing stops at a bad size, as nothing after it can be trusted.
pub fn parse_records(bytes: &[u8], mut f: impl FnMut(Record)) -> usize {
    let mut at = 0;
    let mut malformed = 0;
    while at + HEADER_BYTES <= bytes.len() {
        let size = usize::from(u16_at(bytes, at + 6).unwrap_or(0));
        if size < HEADER_BYTES || at + size > bytes.len() {
            return malformed + bytes.len() - at;
        }
        match parse_record(&bytes[at..at + size]) {
            Some(r) => f(r),
            None => malformed += size,
        }
        at += size;
    }
    malformed + bytes.len() - at
}

/// Record builders for tests: the bytes the kernel writes for each type.
#[cfg(test)]
pub(crate) mod build {
    use super::*;

    fn record(kind: u32, misc: u16, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(8) {
            body.push(0);
        }
        let mut r = Vec::new();
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&misc.to_ne_bytes());
        r.extend_from_slice(&((HEADER_BYTES + body.len()) as u16).to_ne_bytes());
        r.extend_from_slice(&body);
        r
    }

    fn trailer(pid: u32, time: u64, id: u64) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(&pid.to_ne_bytes());
        t.extend_from_slice(&pid.to_ne_bytes());
        t.extend_from_slice(&time.to_ne_bytes());
        t.extend_from_slice(&id.to_ne_bytes());
        t
    }

    pub fn sample(id: u64, ip: u64, pid: u32, tid: u32, time: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_ne_bytes());
        b.extend_from_slice(&ip.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&tid.to_ne_bytes());
        b.extend_from_slice(&time.to_ne_bytes());
        record(sys::PERF_RECORD_SAMPLE, 2, &b)
    }

    pub fn mmap2(pid: u32, time: u64, addr: u64, len: u64, pgoff: u64, path: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        for v in [addr, len, pgoff] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&[0xee; 24]); // maj, min, ino, ino_generation
        b.extend_from_slice(&((libc::PROT_READ | libc::PROT_EXEC) as u32).to_ne_bytes());
        b.extend_from_slice(&(libc::MAP_PRIVATE as u32).to_ne_bytes());
        b.extend_from_slice(path.as_bytes());
        b.push(0);
        while !b.len().is_multiple_of(8) {
            b.push(0);
        }
        b.extend_from_slice(&trailer(pid, time, 77));
        record(sys::PERF_RECORD_MMAP2, 2, &b)
    }

    pub fn exec(pid: u32, time: u64, comm: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(comm.as_bytes());
        b.push(0);
        while !b.len().is_multiple_of(8) {
            b.push(0);
        }
        b.extend_from_slice(&trailer(pid, time, 77));
        record(sys::PERF_RECORD_COMM, sys::PERF_RECORD_MISC_COMM_EXEC, &b)
    }

    pub fn fork(pid: u32, ppid: u32, time: u64) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [pid, ppid, pid, ppid] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&time.to_ne_bytes());
        b.extend_from_slice(&trailer(pid, time, 77));
        record(sys::PERF_RECORD_FORK, 0, &b)
    }

    pub fn lost(id: u64, n: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_ne_bytes());
        b.extend_from_slice(&n.to_ne_bytes());
        b.extend_from_slice(&trailer(0, 0, id));
        record(sys::PERF_RECORD_LOST, 0, &b)
    }

    pub fn throttle(id: u64, time: u64) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [time, id, id] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(&trailer(0, time, id));
        record(sys::PERF_RECORD_THROTTLE, 0, &b)
    }
}

#[cfg(test)]
mod tests {
    use super::build;
    use super::*;

    fn all(bytes: &[u8]) -> (Vec<Record>, usize) {
        let mut v = Vec::new();
        let bad = parse_records(bytes, |r| v.push(r));
        (v, bad)
    }

    #[test]
    fn each_record_type_parses_to_its_fields() {
        let mut bytes = Vec::new();
        bytes.extend(build::sample(7, 0x401136, 100, 101, 5_000));
        bytes.extend(build::mmap2(
            100,
            4_000,
            0x400000,
            0x2000,
            0x1000,
            "/tmp/a b/prog",
        ));
        bytes.extend(build::exec(100, 3_000, "prog"));
        bytes.extend(build::fork(102, 100, 6_000));
        bytes.extend(build::lost(7, 12));
        bytes.extend(build::throttle(7, 6_500));
        let (records, bad) = all(&bytes);
        assert_eq!(bad, 0);
        assert_eq!(
            records,
            vec![
                Record::Sample {
                    id: 7,
                    ip: 0x401136,
                    pid: 100,
                    tid: 101,
                    time: 5_000
                },
                Record::Mmap2 {
                    pid: 100,
                    time: 4_000,
                    addr: 0x400000,
                    len: 0x2000,
                    pgoff: 0x1000,
                    prot: (libc::PROT_READ | libc::PROT_EXEC) as u32,
                    path: "/tmp/a b/prog".into(),
                },
                Record::Exec {
                    pid: 100,
                    time: 3_000
                },
                Record::Fork {
                    pid: 102,
                    ppid: 100,
                    time: 6_000
                },
                Record::Lost { id: 7, lost: 12 },
                Record::Throttle { id: 7 },
            ]
        );
    }

    #[test]
    fn a_filename_filling_its_padding_exactly_is_whole() {
        // 7 characters + NUL = 8: no padding byte after the name.
        let r = build::mmap2(1, 2, 3, 4, 5, "/a/b/cd");
        match parse_record(&r) {
            Some(Record::Mmap2 { path, time, .. }) => {
                assert_eq!(path, "/a/b/cd");
                assert_eq!(time, 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_record_wrapping_past_the_end_of_the_ring_is_read_whole() {
        // A 128-byte ring; the reader is at 112 (absolute 368 = 2 laps + 112):
        // a 40-byte sample fills 112..128 and 0..24, the next one 24..64.
        let size = 128;
        let first = build::sample(1, 0xaaaa, 10, 10, 1);
        let second = build::sample(2, 0xbbbb, 11, 11, 2);
        assert_eq!((first.len(), second.len()), (40, 40));
        let mut ring = vec![0u8; size];
        let tail = 2 * size as u64 + 112;
        let stream: Vec<u8> = first.iter().chain(&second).copied().collect();
        for (i, b) in stream.iter().enumerate() {
            ring[(112 + i) % size] = *b;
        }
        let head = tail + stream.len() as u64;
        let mut out = Vec::new();
        unwrap_range(&ring, tail, head, &mut out);
        assert_eq!(out, stream);
        let (records, bad) = all(&out);
        assert_eq!(bad, 0);
        assert_eq!(
            records,
            vec![
                Record::Sample {
                    id: 1,
                    ip: 0xaaaa,
                    pid: 10,
                    tid: 10,
                    time: 1
                },
                Record::Sample {
                    id: 2,
                    ip: 0xbbbb,
                    pid: 11,
                    tid: 11,
                    time: 2
                }
            ]
        );
        // Read in two steps, as two drains would.
        out.clear();
        unwrap_range(&ring, tail, tail + 40, &mut out);
        assert_eq!(out, first);
        out.clear();
        unwrap_range(&ring, tail + 40, head, &mut out);
        assert_eq!(out, second);
        // Nothing to read when head == tail.
        out.clear();
        unwrap_range(&ring, head, head, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_bad_size_stops_parsing_and_is_counted() {
        let mut bytes = build::sample(1, 2, 3, 4, 5);
        let good = bytes.len();
        bytes.extend(build::lost(1, 3));
        // Claim a size beyond the end of the data.
        bytes[good + 6..good + 8].copy_from_slice(&4000u16.to_ne_bytes());
        let (records, bad) = all(&bytes);
        assert_eq!(records.len(), 1);
        assert_eq!(bad, bytes.len() - good);
        // A zero size would loop forever if it were not refused.
        let mut zero = build::lost(1, 3);
        zero[6..8].copy_from_slice(&0u16.to_ne_bytes());
        assert_eq!(all(&zero), (Vec::new(), zero.len()));
    }

    #[test]
    fn a_plain_comm_and_unknown_types_are_other() {
        let mut r = build::exec(5, 6, "name");
        r[4..6].copy_from_slice(&0u16.to_ne_bytes()); // prctl(PR_SET_NAME), not an exec
        assert_eq!(
            parse_record(&r),
            Some(Record::Other {
                kind: sys::PERF_RECORD_COMM
            })
        );
        let mut r = build::lost(1, 1);
        r[0..4].copy_from_slice(&99u32.to_ne_bytes());
        assert_eq!(parse_record(&r), Some(Record::Other { kind: 99 }));
    }
}
