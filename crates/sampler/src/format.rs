//! The files the preload library writes, one source of truth for the writer
//! (the preload library) and the reader ([`crate::read_dir`]).
//!
//! Per process image, in the sample directory:
//! - `samples.<pid>` (`samples.<pid>.<n>` for the program that pid runs
//!   after its n-th exec, or when a pid is reused): a header and an
//!   append-only array of records, mapped `MAP_SHARED` by the sampled
//!   process so that it survives a crash or a kill. The file is created
//!   sparse at its full capacity; a record never written reads as 0.
//! - `maps.<pid>` (`maps.<pid>.<n>`): the text of `/proc/self/maps`, replaced
//!   atomically (written to `.maps.<pid>[.<n>].tmp`, then renamed).
//!
//! ```text
//! 0     header: HEADER_WORDS little-endian u64 words (see `word`)
//! 128   records: u64 each; bits 0..56 the program counter, bits 56..64 the
//!       weight minus 1 (weight = timer intervals the sample stands for),
//!       or 255 in a continuation record (weight 255; the signal's last
//!       record follows, possibly after other threads' records)
//! ```

/// `b"FLSAMPL1"` as a little-endian word.
pub const MAGIC: u64 = u64::from_le_bytes(*b"FLSAMPL1");
pub const VERSION: u64 = 1;
pub const HEADER_WORDS: usize = 16;
pub const HEADER_BYTES: usize = HEADER_WORDS * 8;

/// Header words (u64 index into the header).
pub mod word {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    /// Records the file has room for.
    pub const CAPACITY: usize = 2;
    /// Records reserved so far (the writers' atomic index; may exceed
    /// `CAPACITY`, the excess was dropped and is counted in `DROPPED`).
    pub const NEXT: usize = 3;
    /// The timer's interval in nanoseconds of thread CPU time.
    pub const INTERVAL_NS: usize = 4;
    /// Intervals sampled that found no room (weight of the dropped samples).
    pub const DROPPED: usize = 5;
    pub const PID: usize = 6;
    /// `flag` bits, set with an atomic OR.
    pub const FLAGS: usize = 7;
    /// The process's CPU time (all threads, user + system) when it exited
    /// normally, in nanoseconds; 0 when it did not.
    pub const CPU_NS_AT_EXIT: usize = 8;
    /// Threads whose timer was armed.
    pub const THREADS: usize = 9;
    /// Threads whose timer could not be armed (they are not sampled).
    pub const THREAD_FAILURES: usize = 10;
    /// Intervals sampled while the thread ran the sampling engine's own
    /// code rather than the program's: the native engine's runtime
    /// (dispatcher, translator, its handlers) samples its counted run and
    /// records no program counter for those. Not in the records; 0 in the
    /// preload library's files (everything it samples is the program's).
    pub const ENGINE_WEIGHT: usize = 11;
}

/// Bits of the `FLAGS` word.
pub mod flag {
    /// The process exited through `exit` (the library's destructor ran).
    pub const EXITED: u64 = 1;
    /// At exit, SIGPROF's handler was no longer the sampler's: the program
    /// installed its own, which received the sampler's signals from then on.
    pub const HANDLER_REPLACED: u64 = 2;
    /// The process had more executable mappings than the sampler tracks:
    /// `maps.<pid>` was not refreshed when samples fell in new code.
    pub const MAPS_UNTRACKED: u64 = 4;
}

/// Bits of a record holding the program counter (user-space addresses are
/// below 2^56 on x86-64, even with 5-level paging).
pub const ADDRESS_MASK: u64 = (1 << 56) - 1;
/// Largest weight one record holds; a heavier sample (SIGPROF blocked for a
/// long time) takes continuation records of this weight, then a last one.
pub const MAX_RECORD_WEIGHT: u64 = 255;
const CONTINUATION: u64 = 255;

/// A signal's last (usually only) record: `weight` in 1..=MAX_RECORD_WEIGHT.
pub const fn encode_record(pc: u64, weight: u64) -> u64 {
    ((weight - 1) << 56) | (pc & ADDRESS_MASK)
}

/// A continuation record, standing for MAX_RECORD_WEIGHT intervals.
pub const fn encode_continuation(pc: u64) -> u64 {
    (CONTINUATION << 56) | (pc & ADDRESS_MASK)
}

/// A decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub pc: u64,
    pub weight: u64,
    /// The signal's last record (count signals by these).
    pub last: bool,
}

/// None for an empty record (reserved, never written: the process was
/// killed in the handler).
pub const fn decode_record(r: u64) -> Option<Record> {
    if r == 0 {
        return None;
    }
    let pc = r & ADDRESS_MASK;
    Some(if r >> 56 == CONTINUATION {
        Record {
            pc,
            weight: MAX_RECORD_WEIGHT,
            last: false,
        }
    } else {
        Record {
            pc,
            weight: (r >> 56) + 1,
            last: true,
        }
    })
}

/// Bytes of a samples file with room for `capacity` records.
pub const fn file_bytes(capacity: u64) -> u64 {
    HEADER_BYTES as u64 + capacity * 8
}

pub const SAMPLES_PREFIX: &str = "samples.";
pub const MAPS_PREFIX: &str = "maps.";

/// (pid, image) of a samples file's name: `samples.<pid>` is image 0,
/// `samples.<pid>.<n>` image n; None for any other name.
pub fn parse_samples_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix(SAMPLES_PREFIX)?;
    let (pid, image) = match rest.split_once('.') {
        Some((pid, image)) => (pid, Some(image)),
        None => (rest, None),
    };
    let pid = parse_decimal(pid)?;
    let image = match image {
        Some(i) => parse_decimal(i).filter(|&i| i > 0)?,
        None => 0,
    };
    Some((pid, image))
}

/// The maps file's name for (pid, image).
pub fn maps_name(pid: u32, image: u32) -> String {
    if image == 0 {
        format!("{MAPS_PREFIX}{pid}")
    } else {
        format!("{MAPS_PREFIX}{pid}.{image}")
    }
}

/// Digits only (no sign, no leading `+`, no leading zero unless "0").
fn parse_decimal(s: &str) -> Option<u32> {
    let ok =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if ok {
        s.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = |pc, weight, last| Some(Record { pc, weight, last });
        assert_eq!(
            decode_record(encode_record(0x5555_1234, 1)),
            r(0x5555_1234, 1, true)
        );
        assert_eq!(
            decode_record(encode_record(0x7fff_ffff_f000, 255)),
            r(0x7fff_ffff_f000, 255, true)
        );
        assert_eq!(
            decode_record(encode_continuation(0x40_1000)),
            r(0x40_1000, 255, false)
        );
        assert_eq!(decode_record(0), None);
    }

    #[test]
    fn names() {
        assert_eq!(parse_samples_name("samples.123"), Some((123, 0)));
        assert_eq!(parse_samples_name("samples.123.2"), Some((123, 2)));
        for bad in [
            "samples.",
            "samples.x",
            "samples.12.0",
            "samples.12.",
            "samples.012",
            "samples.1.2.3",
            "samples.+1",
            "maps.123",
            ".maps.123.tmp",
        ] {
            assert_eq!(parse_samples_name(bad), None, "{bad}");
        }
        assert_eq!(maps_name(7, 0), "maps.7");
        assert_eq!(maps_name(7, 3), "maps.7.3");
    }
}
