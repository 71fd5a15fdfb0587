//! The process's samples file: configuration, creation, the mapping.

use super::sys::{self, Racy};
use crate::format::{self, word};
use crate::text::FixedBuf;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};

/// Configuration read once by the constructor.
pub struct Config {
    pub dir: FixedBuf<4096>,
    pub interval_ns: u64,
    pub capacity: u64,
}

/// Written by the constructor before sampling starts, read-only after.
pub static CONFIG: Racy<Config> = Racy::new(Config {
    dir: FixedBuf::new(),
    interval_ns: 0,
    capacity: 0,
});

/// The configuration.
pub fn config() -> &'static Config {
    // SAFETY: written only before sampling starts (see CONFIG).
    unsafe { &*CONFIG.get() }
}

/// The samples file's mapping: header words, then records. Null while the
/// process has none (not configured, or a forked child before its own).
static MAP: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());

/// The current mapping.
#[derive(Clone, Copy)]
pub struct Map(*const AtomicU64);

impl Map {
    pub fn word(self, i: usize) -> &'static AtomicU64 {
        debug_assert!(i < format::HEADER_WORDS);
        // SAFETY: a live mapping holds HEADER_WORDS header words; mappings
        // are never unmapped while a timer can fire into them.
        unsafe { &*self.0.add(i) }
    }

    /// Record slot `i`, None past the capacity.
    pub fn record(self, i: u64) -> Option<&'static AtomicU64> {
        (i < config().capacity).then(|| {
            // SAFETY: in bounds of the mapping (capacity records follow the
            // header).
            unsafe { &*self.0.add(format::HEADER_WORDS + i as usize) }
        })
    }
}

pub fn map() -> Option<Map> {
    let p = MAP.load(Acquire);
    (!p.is_null()).then_some(Map(p))
}

fn map_bytes() -> usize {
    format::file_bytes(config().capacity) as usize
}

/// Unmaps the parent's file in a forked child (it must not write there).
///
/// # Safety
/// In the forked child, before its timer is armed.
pub unsafe fn forget_parent_file() {
    let p = MAP.swap(core::ptr::null_mut(), AcqRel);
    if !p.is_null() {
        // SAFETY: the mapping created by `create_file`, of this size.
        unsafe { libc::munmap(p.cast(), map_bytes()) };
    }
}

/// Creates and maps `samples.<pid>` (or `samples.<pid>.<n>` when the pid
/// already has a file: an exec'd program, a reused pid), names the maps
/// file, and writes it. False, with a message, when it cannot.
///
/// # Safety
/// After the configuration is set; before sampling starts in this process
/// (the constructor, a forked child). Async-signal-safe.
pub unsafe fn create_file() -> bool {
    let cfg = config();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    let mut path = FixedBuf::<4200>::new();
    let mut image = 0u32;
    let fd = loop {
        path.clear();
        let mut fits = path.push(cfg.dir.as_bytes())
            && path.push(b"/")
            && path.push(format::SAMPLES_PREFIX.as_bytes())
            && path.push_dec(pid.into());
        if image > 0 {
            fits &= path.push(b".") && path.push_dec(image.into());
        }
        if !fits {
            sys::warn(&[b"FLOPSCOPE_SAMPLE_DIR is too long: this process is not sampled"]);
            return false;
        }
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
        // SAFETY: NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), flags, 0o644) };
        if fd >= 0 {
            break fd;
        }
        if sys::errno() != libc::EEXIST || image >= 10_000 {
            return fail(b"cannot create ", &path, sys::errno());
        }
        image += 1;
    };
    let bytes = map_bytes();
    // SAFETY: fd is the file just created; the mapping is checked.
    let p = unsafe {
        if libc::ftruncate(fd, bytes as libc::off_t) != 0 {
            let e = sys::errno();
            libc::close(fd);
            libc::unlink(path.as_ptr());
            return fail(b"cannot size ", &path, e);
        }
        let p = libc::mmap(
            core::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        let e = sys::errno();
        libc::close(fd);
        if p == libc::MAP_FAILED {
            libc::unlink(path.as_ptr());
            return fail(b"cannot map ", &path, e);
        }
        // Without it, a page fault on the sparse file reads around it: on a
        // disk with read_ahead_kb 8192 (virtio), 8 MiB of holes zero-filled,
        // 2.5 ms of CPU time at the first write and again in the handler
        // whenever records reach past the last window.
        libc::madvise(p, bytes, libc::MADV_RANDOM);
        p.cast::<AtomicU64>()
    };
    let m = Map(p);
    m.word(word::VERSION).store(format::VERSION, Relaxed);
    m.word(word::CAPACITY).store(cfg.capacity, Relaxed);
    m.word(word::INTERVAL_NS).store(cfg.interval_ns, Relaxed);
    m.word(word::PID).store(pid.into(), Relaxed);
    m.word(word::MAGIC).store(format::MAGIC, Release);
    // SAFETY: no maps write runs yet in this process (see the contract).
    if !unsafe { super::maps::set_paths(cfg.dir.as_bytes(), pid, image) } {
        sys::warn(&[b"FLOPSCOPE_SAMPLE_DIR is too long: this process is not sampled"]);
        return false;
    }
    MAP.store(p, Release);
    // SAFETY: paths set.
    unsafe { super::maps::write() };
    true
}

fn fail(what: &[u8], path: &FixedBuf<4200>, errno: libc::c_int) -> bool {
    sys::warn(&[
        what,
        path.as_bytes(),
        b": ",
        sys::describe(errno),
        b"; this process is not sampled",
    ]);
    false
}
