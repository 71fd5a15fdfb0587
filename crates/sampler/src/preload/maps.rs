//! `maps.<pid>`: the process's /proc/self/maps, kept current so that a
//! process that never reaches exit (killed, crashed, exec'd) still leaves a
//! map covering its samples.
//!
//! It is written at start, after a fork, at exit, and from the SIGPROF
//! handler when a sample falls outside every executable mapping known from
//! the last write (code loaded with dlopen, or generated at run time). That
//! replaces catching fatal signals to write it as the process dies: SIGKILL
//! cannot be caught, and handlers for SIGSEGV and friends are visible to the
//! program (`sigaction` reports them, runtimes such as Go and the JVM chain
//! to them), so the library installs none.
//!
//! Everything here is async-signal-safe: open/read/write/rename/close (all
//! on the POSIX list), one static buffer behind a try-lock (a writer that
//! finds it busy skips: someone is writing the same text), no allocation.

use super::sys::{self, Racy, SavedErrno};
use crate::text::{self, FixedBuf};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};

/// Executable mappings tracked; a process with more stops refreshing the
/// map from the handler (flag `MAPS_UNTRACKED`).
const MAX_RANGES: usize = 4096;

/// Sorted [start, end) pairs of the executable mappings at the last write.
/// Readers (handlers on other threads) may see a table being rewritten: that
/// costs at most a needless refresh, or a missed one that the next sample in
/// the new code makes.
static RANGES: [AtomicU64; 2 * MAX_RANGES] = [const { AtomicU64::new(0) }; 2 * MAX_RANGES];
static RANGE_COUNT: AtomicUsize = AtomicUsize::new(0);
static UNTRACKED: AtomicBool = AtomicBool::new(false);
/// A refresh from the handler waits until this many records were taken, so
/// that code generated without end (a JIT) costs a bounded share of time.
static NEXT_REFRESH: AtomicU64 = AtomicU64::new(0);

static BUSY: AtomicBool = AtomicBool::new(false);
static BUF: Racy<[u8; 16384]> = Racy::new([0; 16384]);

/// The maps file and its temporary name, set by `set_paths`.
pub struct Paths {
    pub file: FixedBuf<4200>,
    pub tmp: FixedBuf<4200>,
}

static PATHS: Racy<Paths> = Racy::new(Paths {
    file: FixedBuf::new(),
    tmp: FixedBuf::new(),
});

/// Names the files for (dir, pid, image); false if the path is too long.
///
/// # Safety
/// Only while no maps write can run: the constructor before sampling
/// starts, a forked child before its timer is armed.
pub unsafe fn set_paths(dir: &[u8], pid: u32, image: u32) -> bool {
    // SAFETY: the caller excludes concurrent writers and readers.
    let p = unsafe { &mut *PATHS.get() };
    p.file.clear();
    p.tmp.clear();
    let mut ok = p.file.push(dir) && p.file.push(b"/maps.") && p.file.push_dec(pid.into());
    ok &= p.tmp.push(dir) && p.tmp.push(b"/.maps.") && p.tmp.push_dec(pid.into());
    if image > 0 {
        ok &= p.file.push(b".") && p.file.push_dec(image.into());
        ok &= p.tmp.push(b".") && p.tmp.push_dec(image.into());
    }
    ok && p.tmp.push(b".tmp")
}

/// A forked child starts with the lock as the parent's threads left it.
///
/// # Safety
/// In the forked child, single-threaded, before its timer is armed.
pub unsafe fn reset_after_fork() {
    BUSY.store(false, Relaxed);
    NEXT_REFRESH.store(0, Relaxed);
}

/// Whether `pc` lies in an executable mapping known from the last write.
fn known(pc: u64) -> bool {
    let n = RANGE_COUNT.load(Acquire).min(MAX_RANGES);
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pc < RANGES[2 * mid].load(Relaxed) {
            hi = mid;
        } else if pc >= RANGES[2 * mid + 1].load(Relaxed) {
            lo = mid + 1;
        } else {
            return true;
        }
    }
    false
}

/// From the SIGPROF handler, after recording `pc`: refreshes the maps file
/// when `pc` is in code it does not cover yet. `taken` is the records taken
/// so far (for the rate limit).
pub fn on_sample(pc: u64, taken: u64) {
    if UNTRACKED.load(Relaxed) || known(pc) || taken < NEXT_REFRESH.load(Relaxed) {
        return;
    }
    NEXT_REFRESH.store(taken + (taken / 8).max(64), Relaxed);
    // SAFETY: async-signal-safe by construction.
    unsafe { write() };
}

/// Writes the maps file (temporary file, then rename) and refreshes the
/// table of executable mappings. False if it could not, or another thread
/// was writing it.
///
/// # Safety
/// After `set_paths`.
pub unsafe fn write() -> bool {
    // SAFETY: the caller's contract.
    !BUSY.swap(true, Acquire) && unsafe { write_locked() }
}

/// As `write`, but waits (a little) for a handler on another thread that is
/// writing the file: at exit, the last write must happen.
///
/// # Safety
/// As `write`; not in a signal handler.
pub unsafe fn write_waiting() -> bool {
    for _ in 0..10_000 {
        if !BUSY.swap(true, Acquire) {
            // SAFETY: the caller's contract.
            return unsafe { write_locked() };
        }
        // SAFETY: no preconditions.
        unsafe { libc::sched_yield() };
    }
    false
}

/// # Safety
/// With BUSY held, which it releases.
unsafe fn write_locked() -> bool {
    let _errno = SavedErrno::new();
    // SAFETY: paths are read-only while maps writes can run; the buffer is
    // ours while BUSY is held.
    let ok = unsafe { copy_and_scan(&*PATHS.get(), &mut *BUF.get()) };
    BUSY.store(false, Release);
    ok
}

/// # Safety
/// With BUSY held.
unsafe fn copy_and_scan(paths: &Paths, buf: &mut [u8; 16384]) -> bool {
    let flags = libc::O_CLOEXEC;
    // SAFETY: NUL-terminated paths.
    let src = unsafe { libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY | flags) };
    if src < 0 {
        return false;
    }
    let dst = unsafe {
        libc::open(
            paths.tmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | flags,
            0o644,
        )
    };
    if dst < 0 {
        unsafe { libc::close(src) };
        return false;
    }
    let mut ok = true;
    let mut ranges = 0usize;
    let mut carry = 0usize;
    loop {
        let room = &mut buf[carry..];
        // SAFETY: `room` is writable for its length.
        let n = unsafe { libc::read(src, room.as_mut_ptr().cast(), room.len()) };
        if n < 0 && sys::errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            ok &= n == 0;
            break;
        }
        let end = carry + n as usize;
        ok &= sys::write_all(dst, &buf[carry..end]);
        // Complete lines: scan; the partial last line moves to the front.
        let mut line_start = 0;
        while let Some(nl) = buf[line_start..end].iter().position(|&b| b == b'\n') {
            if let Some((s, e)) = text::executable_range(&buf[line_start..line_start + nl]) {
                if ranges < MAX_RANGES {
                    RANGES[2 * ranges].store(s, Relaxed);
                    RANGES[2 * ranges + 1].store(e, Relaxed);
                }
                ranges += 1;
            }
            line_start += nl + 1;
        }
        carry = end - line_start;
        if carry == buf.len() {
            carry = 0; // a line longer than the buffer: not scanned
        } else {
            buf.copy_within(line_start..end, 0);
        }
    }
    // SAFETY: descriptors opened above; NUL-terminated paths.
    unsafe {
        ok &= libc::close(dst) == 0;
        libc::close(src);
        ok = ok && libc::rename(paths.tmp.as_ptr(), paths.file.as_ptr()) == 0;
        if !ok {
            libc::unlink(paths.tmp.as_ptr());
        }
    }
    if ranges > MAX_RANGES {
        UNTRACKED.store(true, Relaxed);
        if let Some(map) = super::state::map() {
            map.word(crate::format::word::FLAGS)
                .fetch_or(crate::format::flag::MAPS_UNTRACKED, Relaxed);
        }
    }
    RANGE_COUNT.store(ranges.min(MAX_RANGES), Release);
    ok
}
