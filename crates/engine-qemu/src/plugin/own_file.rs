//! The plugin's own open files (the code table, the block counters), kept
//! good while the program runs. The plugin lives in the program's process
//! and shares its descriptor numbers: a program may close every descriptor
//! it did not open (Python's `subprocess` does, in the child between fork
//! and exec), and may then open a file of its own under the same number,
//! into which the plugin would otherwise write. After the program freed or
//! replaced descriptors (close, dup2, dup3, close_range: see
//! [`descriptors_changed`]), the descriptor is checked before its next use
//! to still be the plugin's file (device and inode); if not, the file is
//! opened again by its path, and the program's descriptor is left alone.

use std::os::unix::io::IntoRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped each time the program frees or replaces descriptors.
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// The program freed or replaced descriptors: check before the next use.
pub fn descriptors_changed() {
    CHANGES.fetch_add(1, Ordering::AcqRel);
}

/// Descriptor numbers from here up are asked for, clear of the low numbers
/// a program expects to get back (a daemon reopening 0, 1 and 2).
const HIGH_FD: i32 = 256;

pub struct OwnFile {
    fd: i32,
    /// (st_dev, st_ino) of the file.
    id: (u64, u64),
    path: PathBuf,
    append: bool,
    /// [`CHANGES`] when the descriptor was last found to be the file's.
    checked: u64,
}

impl OwnFile {
    /// Takes over `file`, opened at `path` (for appending if `append`).
    pub fn new(file: std::fs::File, path: &Path, append: bool) -> std::io::Result<OwnFile> {
        let checked = CHANGES.load(Ordering::Acquire);
        let fd = high(file.into_raw_fd());
        let id = identity(fd).ok_or_else(std::io::Error::last_os_error)?;
        Ok(OwnFile {
            fd,
            id,
            path: path.to_path_buf(),
            append,
            checked,
        })
    }

    /// The descriptor, opened again if the program closed it or gave its
    /// number to a file of its own; `None` if the file cannot be reopened.
    pub fn fd(&mut self) -> Option<i32> {
        let now = CHANGES.load(Ordering::Acquire);
        if now == self.checked {
            return Some(self.fd);
        }
        if identity(self.fd) == Some(self.id) {
            self.checked = now;
            return Some(self.fd);
        }
        let file = std::fs::OpenOptions::new()
            .read(!self.append)
            .write(true)
            .append(self.append)
            .open(&self.path)
            .ok()?;
        let fd = high(file.into_raw_fd());
        if identity(fd) != Some(self.id) {
            // Another file at the path now: not the plugin's to write.
            // SAFETY: the descriptor just opened, ours alone.
            unsafe { libc::close(fd) };
            return None;
        }
        self.fd = fd;
        self.checked = now;
        Some(fd)
    }

    /// Appends `bytes` (a file opened for appending).
    pub fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        let fd = self.fd().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the file could not be reopened",
            )
        })?;
        while !bytes.is_empty() {
            // SAFETY: a valid buffer of bytes.len() bytes.
            let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            bytes = &bytes[n as usize..];
        }
        Ok(())
    }

    /// Closes the descriptor if it is still the plugin's (a forked child
    /// done with its parent's file); a number the program took is left.
    pub fn close_if_ours(self) {
        if identity(self.fd) == Some(self.id) {
            // SAFETY: the plugin's own descriptor, checked just now.
            unsafe { libc::close(self.fd) };
        }
    }
}

/// (st_dev, st_ino) of what `fd` is open on, if it is open.
fn identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: zeroed is a valid stat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid stat to fill; a closed fd gives EBADF.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// `fd` moved to a number from [`HIGH_FD`] up, where the limit on open
/// files allows (else kept where it is).
fn high(fd: i32) -> i32 {
    // SAFETY: duplicating our own descriptor.
    let h = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, HIGH_FD) };
    if h < 0 {
        return fd;
    }
    // SAFETY: the original, ours alone, now duplicated.
    unsafe { libc::close(fd) };
    h
}
