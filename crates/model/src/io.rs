//! Reading and atomically writing report files.

use crate::report::Report;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("cannot read report {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a flopscope report: {source} (expected the JSON written by `flopscope count -o FILE.json`)")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source} (check that the directory exists and is writable)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `contents` to `path` atomically: a temporary file in the same
/// directory, flushed and renamed over the target, so that readers never see
/// a half-written file and a crash leaves the old file intact.
///
/// A target that exists and is not a regular file (`/dev/stdout`, a FIFO,
/// `/dev/null`) is written in place: renaming over it would replace the
/// device with a file.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), IoError> {
    write_atomic_with(path, |w| w.write_all(contents))
}

/// [`write_atomic`] of what `fill` writes, through a buffer: a large
/// report is serialized straight into the file instead of into a string
/// first (gcc's 111 MB report: no 111 MB string to grow and copy).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), IoError> {
    let in_place = std::fs::metadata(path).is_ok_and(|md| !md.is_file());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let f = if in_place {
            std::fs::OpenOptions::new().write(true).open(path)?
        } else {
            std::fs::File::create(&tmp)?
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        if in_place {
            return Ok(());
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() && !in_place {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|source| IoError::Write {
        path: path.to_path_buf(),
        source,
    })
}

impl Report {
    pub fn load(path: &Path) -> Result<Report, IoError> {
        let text = std::fs::read_to_string(path).map_err(|source| IoError::Read {
            path: path.into(),
            source,
        })?;
        Report::from_json(&text).map_err(|source| IoError::Parse {
            path: path.into(),
            source,
        })
    }

    pub fn save(&self, path: &Path) -> Result<(), IoError> {
        write_atomic(path, self.to_json().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("fs-model-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_are_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn write_into_missing_directory_names_the_path() {
        let e = write_atomic(Path::new("/nonexistent-dir-xyz/r.json"), b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir-xyz/r.json"));
    }
}
