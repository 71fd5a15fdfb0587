//! Async-signal-safe building blocks: system calls that neither allocate nor
//! lock, errno preserved, messages written without formatting machinery.

use core::cell::UnsafeCell;
use libc::c_int;

/// A global written only while nothing else can read it (the constructor
/// before sampling starts, a forked child before its timer is armed) and
/// read-only otherwise. The preload library needs such state: its entry
/// points (constructor, signal handler, fork handler) take no context.
pub struct Racy<T>(UnsafeCell<T>);

// SAFETY: see the type's contract; every use site states why it holds.
unsafe impl<T> Sync for Racy<T> {}

impl<T> Racy<T> {
    pub const fn new(v: T) -> Self {
        Racy(UnsafeCell::new(v))
    }

    pub fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// Restores errno when dropped: the handler and the fork handler run between
/// the program's own calls, which may be about to read errno.
pub struct SavedErrno(c_int);

impl SavedErrno {
    pub fn new() -> Self {
        // SAFETY: errno is thread-local and always readable.
        SavedErrno(unsafe { *libc::__errno_location() })
    }
}

impl Drop for SavedErrno {
    fn drop(&mut self) {
        // SAFETY: as in `new`.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

pub fn errno() -> c_int {
    // SAFETY: as in `SavedErrno::new`.
    unsafe { *libc::__errno_location() }
}

pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Writes all of `bytes` to `fd`; false on an error.
pub fn write_all(fd: c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return false;
        }
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
    true
}

/// Writes `flopscope: sampler: <parts>` and a newline to stderr, in one
/// write when it fits.
pub fn warn(parts: &[&[u8]]) {
    let _errno = SavedErrno::new();
    let mut line = crate::text::FixedBuf::<1024>::new();
    line.push(b"flopscope: sampler: ");
    for p in parts {
        if !line.push(p) {
            break;
        }
    }
    line.push(b"\n");
    write_all(2, line.as_bytes());
}

/// What went wrong, for a message (strerror may lock and allocate).
pub fn describe(errno: c_int) -> &'static [u8] {
    match errno {
        libc::ENOENT => b"no such file or directory",
        libc::EACCES | libc::EPERM => b"permission denied",
        libc::EROFS => b"read-only file system",
        libc::ENOSPC => b"no space left on device",
        libc::EDQUOT => b"disk quota exceeded",
        libc::EFBIG => b"file too large",
        libc::ENOTDIR => b"a component of the path is not a directory",
        libc::ENAMETOOLONG => b"file name too long",
        libc::EMFILE | libc::ENFILE => b"too many open files",
        libc::ENOMEM => b"out of memory (address space)",
        libc::EAGAIN => b"resource temporarily unavailable (RLIMIT_SIGPENDING?)",
        libc::EINVAL => b"invalid argument",
        _ => b"system error",
    }
}

/// The value of environment variable `name`, if set.
pub fn getenv(name: &core::ffi::CStr) -> Option<&'static [u8]> {
    // SAFETY: getenv returns NULL or a NUL-terminated string that stays
    // valid while the environment is not modified; the constructor reads it
    // before the program runs.
    unsafe {
        let v = libc::getenv(name.as_ptr());
        (!v.is_null()).then(|| core::ffi::CStr::from_ptr(v).to_bytes())
    }
}
