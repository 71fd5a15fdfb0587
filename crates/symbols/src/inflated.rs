//! Compressed debug sections inflated once and kept between runs.
//!
//! Debian's detached debug files keep their DWARF sections zlib-compressed
//! (`SHF_COMPRESSED`): the C library's, from `libc6-dbg`, took some 17 ms
//! to inflate in every symbolizer that loaded it, and every program maps
//! the C library, so every `flopscope count` paid it (while the program ran,
//! on a core a two-thread program wanted, or after it ended, for a short
//! one). Once a directory is named ([`keep_in`]; the CLI names one in its
//! cache directory), a section inflated there is written to a file of its
//! own, and later loads map that file instead of inflating again.
//!
//! - **Which copy**: a file is named by its debug file's build-id, the
//!   section's name, and its place, compressed size and inflated size in
//!   that file. A debug file without a build-id is inflated every time (its
//!   identity would rest on a path and a time stamp).
//! - **Checked before use**: a copy starts with a magic word and the CRC-32
//!   of what follows; a copy of another length, another magic or another
//!   checksum (cut short, damaged, written by another version) is inflated
//!   and written again. Copies are written to a temporary name and renamed,
//!   so a reader sees a whole copy or none.
//! - **Bounded**: after each write, the oldest copies go until the directory
//!   holds at most [`CAP`] bytes; temporary files an interrupted write left
//!   go after an hour. A section larger than [`MAX_KEPT`] is not kept.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use crate::debug_file::{self, Bytes};

/// The most the directory holds (bytes of copies).
pub const CAP: u64 = 512 << 20;
/// The largest section kept: a larger one (a big program's own DWARF) is
/// inflated every time rather than written, and would push out the rest.
pub const MAX_KEPT: u64 = CAP / 8;
const MAGIC: &[u8; 8] = b"fs-infl1";
/// Magic, CRC-32 (little-endian u32), 4 bytes of padding.
pub(crate) const HEADER: usize = 16;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Keeps inflated sections in `dir` (created when first written) for the
/// rest of the process. The first call wins.
pub fn keep_in(dir: PathBuf) {
    let _ = DIR.set(dir);
}

/// The directory named by [`keep_in`], if any.
pub(crate) fn dir() -> Option<&'static Path> {
    DIR.get().map(PathBuf::as_path)
}

/// Where a section is, in its debug file: what names its copy.
pub(crate) struct Place<'a> {
    pub build_id: &'a [u8],
    pub section: &'a str,
    pub offset: u64,
    pub compressed: u64,
    pub inflated: u64,
}

impl Place<'_> {
    fn file_name(&self) -> String {
        let id: String = self.build_id.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{id}{}-{:x}-{:x}-{:x}",
            self.section, self.offset, self.compressed, self.inflated
        )
    }
}

/// The kept copy of `place` in `dir`, checked: its bytes, the section from
/// [`HEADER`] on. `None` when there is none or it does not check.
pub(crate) fn kept(dir: &Path, place: &Place<'_>) -> Option<Bytes> {
    let bytes = debug_file::read(&dir.join(place.file_name())).ok()?;
    let expected = HEADER as u64 + place.inflated;
    if bytes.len() as u64 != expected || &bytes[..8] != MAGIC {
        return None;
    }
    let crc = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    (crc32fast::hash(&bytes[HEADER..]) == crc).then_some(bytes)
}

/// Writes `data`, the inflated section at `place`, to `dir`; then trims the
/// directory. Failures leave no copy and are otherwise ignored: the next
/// load inflates again.
pub(crate) fn keep(dir: &Path, place: &Place<'_>, data: &[u8]) {
    if data.len() as u64 > MAX_KEPT || fs::create_dir_all(dir).is_err() {
        return;
    }
    let name = place.file_name();
    let tmp = dir.join(format!(
        ".{name}.{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&crc32fast::hash(data).to_le_bytes());
        f.write_all(&header)?;
        f.write_all(data)?;
        fs::rename(&tmp, dir.join(&name))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
        return;
    }
    trim(dir, CAP);
}

/// Removes the oldest copies until `dir` holds at most `cap` bytes of them,
/// and temporary files older than an hour.
pub(crate) fn trim(dir: &Path, cap: u64) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut copies = Vec::new();
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let modified = meta.modified().unwrap_or(now);
        if e.file_name().to_string_lossy().ends_with(".tmp") {
            let age = now.duration_since(modified).unwrap_or_default();
            if age > Duration::from_secs(3600) {
                let _ = fs::remove_file(e.path());
            }
            continue;
        }
        copies.push((modified, meta.len(), e.path()));
    }
    let mut total: u64 = copies.iter().map(|c| c.1).sum();
    copies.sort();
    for (_, len, path) in copies {
        if total <= cap {
            break;
        }
        if fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(id: &[u8]) -> Place<'_> {
        Place {
            build_id: id,
            section: ".debug_info",
            offset: 0x40,
            compressed: 3,
            inflated: 5,
        }
    }

    #[test]
    fn a_copy_is_used_only_whole_and_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let p = place(&[0xab, 0x01]);
        assert!(kept(dir.path(), &p).is_none());
        keep(dir.path(), &p, b"hello");
        let copy = kept(dir.path(), &p).expect("the copy just kept");
        assert_eq!(&copy[HEADER..], b"hello");
        let file = dir.path().join("ab01.debug_info-40-3-5");
        let mut bytes = fs::read(&file).unwrap();
        // A damaged byte, then a copy cut short: neither is used.
        bytes[HEADER + 1] ^= 1;
        fs::write(&file, &bytes).unwrap();
        assert!(kept(dir.path(), &p).is_none());
        bytes[HEADER + 1] ^= 1;
        fs::write(&file, &bytes[..bytes.len() - 1]).unwrap();
        assert!(kept(dir.path(), &p).is_none());
        // Another section's place names another copy.
        let other = Place {
            offset: 0x41,
            ..place(&[0xab, 0x01])
        };
        assert!(kept(dir.path(), &other).is_none());
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
    }

    #[test]
    fn the_oldest_copies_go_first_when_the_directory_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let old = SystemTime::now() - Duration::from_secs(100);
        for (i, age) in [(0u8, 10u64), (1, 20), (2, 30)] {
            let path = dir.path().join(format!("copy{i}"));
            fs::write(&path, [0u8; 100]).unwrap();
            let f = fs::File::options().write(true).open(&path).unwrap();
            f.set_modified(old + Duration::from_secs(age)).unwrap();
        }
        let stale = dir.path().join(".x.1.tmp");
        fs::write(&stale, b"cut").unwrap();
        let f = fs::File::options().write(true).open(&stale).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        let fresh = dir.path().join(".y.2.tmp");
        fs::write(&fresh, b"being written").unwrap();
        trim(dir.path(), 200);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".y.2.tmp", "copy1", "copy2"]);
    }
}
