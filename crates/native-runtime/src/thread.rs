//! Threads: each has its banks of counters (one per region state, `gs`
//! points at the current one), a dispatcher stack and an xsave area. Threads
//! are never freed: their counters are summed when the process ends. Once
//! MAX_THREADS have been created, a new thread takes over the state of one
//! that has exited and is gone, and adds its counts to that one's.

use crate::header::{self, BANK_BYTES};
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

pub const MAX_THREADS: usize = flopscope_counter_file::layout::MAX_THREADS;
pub const MAX_STATES: usize = flopscope_counter_file::layout::MAX_STATES;
const DSTACK_BYTES: usize = 1 << 20;
/// A thread has XSAVE_LEVELS xsave areas, one per dispatcher nesting level,
/// of [`xsave_bytes`] each.
pub const XSAVE_LEVELS: usize = 16;

/// Bytes of one xsave area (the processor's XSAVE size, in whole pages).
pub fn xsave_bytes() -> usize {
    crate::asm::XSAVE_AREA.load(Ordering::Relaxed)
}
pub const SIGSAVE_BYTES: usize = 4096;

pub struct Thread {
    /// Creation order (0: the thread that took the program over).
    pub index: u32,
    /// The kernel's thread id (0 until the creating `clone` returned).
    pub tid: AtomicU64,
    /// Set by the thread's `exit`: once its id is gone, a new thread may
    /// take this state over (see [`create`]).
    pub exited: AtomicBool,
    /// Bank of each region state, null until used.
    pub banks: [AtomicPtr<u8>; MAX_STATES],
    /// The current region state.
    pub state: AtomicU32,
    /// Entries into each state's innermost region.
    pub entries: [std::sync::atomic::AtomicU64; MAX_STATES],
    pub dstack_top: u64,
    pub xsave: u64,
    /// Bottom of the stack where signal entries save scratch words.
    pub sigsave: u64,
    /// The host thread block the runtime uses as `fs` on this thread (a
    /// statically linked program; 0 otherwise: see hostfs.rs).
    pub host_fs: AtomicU64,
}

static THREADS: [AtomicPtr<Thread>; MAX_THREADS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_THREADS];
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Threads created and not exited (the last to exit ends the process).
pub static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Threads that took over the state of an exited one (the table was full).
pub static REUSED: AtomicU64 = AtomicU64::new(0);
/// Address of the indirect-branch table, copied into every header.
pub static IBL: AtomicUsize = AtomicUsize::new(0);

/// Every thread created so far.
pub fn all() -> impl Iterator<Item = &'static Thread> {
    let n = COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    (0..n).filter_map(|i| {
        let p = THREADS[i].load(Ordering::Acquire);
        // SAFETY: threads are never freed.
        (!p.is_null()).then(|| unsafe { &*p })
    })
}

/// Creates a thread's state, or once the table is full takes over that of
/// a thread that has exited (see [`take_over_exited`]); `None` when memory
/// runs out or every thread in the table is still running.
pub fn create(tid: u64) -> Option<&'static Thread> {
    let index = COUNT.fetch_add(1, Ordering::AcqRel);
    if index >= MAX_THREADS {
        COUNT.store(MAX_THREADS, Ordering::Release);
        // A forked child's table holds only the forking thread: the slots
        // of its parent's other threads are free (not slot 0, which is the
        // first thread's: a static program's host main thread).
        return take_over_exited(tid).or_else(|| {
            let free = THREADS
                .iter()
                .skip(1)
                .position(|t| t.load(Ordering::Acquire).is_null())?;
            new_state(free + 1, tid)
        });
    }
    new_state(index, tid)
}

/// A new thread's state at `index` of the table (`None` when memory runs
/// out, or another thread took the slot meanwhile).
fn new_state(index: usize, tid: u64) -> Option<&'static Thread> {
    let dstack = sys::map_anon(DSTACK_BYTES, false)?;
    let xsave = sys::map_anon(xsave_bytes() * XSAVE_LEVELS, false)?;
    let sigsave = sys::map_anon(SIGSAVE_BYTES, false)?;
    // A static program's thread: the first is the host's main thread (its
    // block is the current fs); the others get one of their own, and start
    // with their creator's fs unless `clone` sets theirs (asm.rs).
    let (host_fs, app_fs) = match (crate::hostfs::on(), index) {
        (false, _) => (0, 0),
        (true, 0) => (crate::hostfs::current(), 0),
        (true, _) => (
            crate::hostfs::new_block()?,
            crate::dispatch::gs_word(header::APP_FS),
        ),
    };
    let t = Box::new(Thread {
        index: index as u32,
        tid: AtomicU64::new(tid),
        exited: AtomicBool::new(false),
        banks: [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_STATES],
        state: AtomicU32::new(0),
        entries: [const { std::sync::atomic::AtomicU64::new(0) }; MAX_STATES],
        dstack_top: dstack as u64 + DSTACK_BYTES as u64 - 64,
        xsave: xsave as u64,
        sigsave: sigsave as u64,
        host_fs: AtomicU64::new(host_fs),
    });
    let t: &'static Thread = Box::leak(t);
    let bank = t.bank(0)?;
    // SAFETY: the header of the bank just mapped.
    unsafe { *(bank.add(header::APP_FS as usize) as *mut u64) = app_fs };
    THREADS[index]
        .compare_exchange(
            std::ptr::null_mut(),
            t as *const Thread as *mut Thread,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .ok()?;
    LIVE.fetch_add(1, Ordering::AcqRel);
    Some(t)
}

/// The state of a thread that has exited, for a new thread `tid` (0: set
/// later with [`Thread::started`]): its counters and dispatcher stack kept,
/// its banks' headers as new, in region state 0. Only a thread whose id
/// the kernel no longer knows is taken: until then it may still be on its
/// way out, on its dispatcher stack (a recycled id is merely passed over).
fn take_over_exited(tid: u64) -> Option<&'static Thread> {
    let gone = |t: &Thread| match t.tid.load(Ordering::Acquire) {
        0 => false,
        NEVER_STARTED => true,
        id => sys::id_gone(id),
    };
    let t = all().find(|t| {
        t.exited.load(Ordering::Acquire)
            && gone(t)
            && t.exited
                .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    })?;
    t.tid.store(tid, Ordering::Release);
    t.state.store(0, Ordering::Release);
    // A static program's host block went back to hostfs's pool at the exit.
    let app_fs = if crate::hostfs::on() {
        t.host_fs
            .store(crate::hostfs::new_block()?, Ordering::Release);
        crate::dispatch::gs_word(header::APP_FS)
    } else {
        0
    };
    for slot in &t.banks {
        let b = slot.load(Ordering::Acquire);
        if !b.is_null() {
            t.init_header(b);
        }
    }
    let bank = t.bank(0)?;
    // SAFETY: the header of the thread's bank 0.
    unsafe { *(bank.add(header::APP_FS as usize) as *mut u64) = app_fs };
    crate::sampling::slot_taken_over(t.index);
    REUSED.fetch_add(1, Ordering::AcqRel);
    LIVE.fetch_add(1, Ordering::AcqRel);
    Some(t)
}

/// The id of a thread whose `clone` failed.
const NEVER_STARTED: u64 = u64::MAX;

impl Thread {
    /// The creating `clone` returned the new thread's id.
    pub fn started(&self, tid: u64) {
        self.tid.store(tid, Ordering::Release);
    }

    /// The creating `clone` failed: the state may serve another thread.
    pub fn never_started(&self) {
        self.tid.store(NEVER_STARTED, Ordering::Release);
        self.exited.store(true, Ordering::Release);
        LIVE.fetch_sub(1, Ordering::AcqRel);
    }

    /// The bank of region state `state`, mapped on first use.
    pub fn bank(&self, state: u32) -> Option<*mut u8> {
        let slot = self.banks.get(state as usize)?;
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            return Some(p);
        }
        let b = sys::map_anon(BANK_BYTES, false)?;
        self.init_header(b);
        slot.store(b, Ordering::Release);
        Some(b)
    }

    /// Writes bank `b`'s header as for a new thread: every word zero but
    /// the thread's own (its counters are left as they are).
    fn init_header(&self, b: *mut u8) {
        // SAFETY: a bank starts with a header of COUNTERS bytes.
        unsafe { std::ptr::write_bytes(b, 0, header::COUNTERS) };
        let words = b as *mut u64;
        // SAFETY: the header's words, within its COUNTERS bytes.
        unsafe {
            *words.add(header::THREAD as usize / 8) = self as *const Thread as u64;
            *words.add(header::DSTACK as usize / 8) = self.dstack_top;
            *words.add(header::XSAVE as usize / 8) = self.xsave;
            *words.add(header::IBL_TABLE as usize / 8) = IBL.load(Ordering::Acquire) as u64;
            *words.add(header::SIGSAVE as usize / 8) = self.sigsave;
            *words.add(header::XSAVE_LIMIT as usize / 8) =
                self.xsave + ((XSAVE_LEVELS - 1) * xsave_bytes()) as u64;
            *words.add(header::XSAVE_STEP as usize / 8) = xsave_bytes() as u64;
            *words.add(header::BANK_SELF as usize / 8) = b as u64;
            *words.add(header::HOST_FS as usize / 8) = self.host_fs.load(Ordering::Acquire);
        }
    }

    /// The counters of `state`'s bank (null if never used) as a slice of
    /// `slots` words.
    pub fn counters(&self, state: usize, slots: usize) -> Option<&[u64]> {
        let p = self.banks.get(state)?.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: a bank holds MAX_SLOTS counters after its header.
        Some(unsafe {
            std::slice::from_raw_parts(
                p.add(header::COUNTERS) as *const u64,
                slots.min(header::MAX_SLOTS),
            )
        })
    }

    /// Moves this thread (the caller) to `state`'s bank: copies the kept
    /// header words and sets gs. Returns false if no bank could be mapped.
    pub fn switch_to(&self, state: u32) -> bool {
        let current = current_bank();
        let Some(next) = self.bank(state) else {
            return false;
        };
        if next != current {
            // SAFETY: both banks start with a header of KEPT bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(current, next, header::KEPT.end);
            }
            // SAFETY: the bank's own address word and the program's fs,
            // within both headers.
            unsafe {
                *(next.add(header::BANK_SELF as usize) as *mut u64) = next as u64;
                *(next.add(header::APP_FS as usize) as *mut u64) =
                    *(current.add(header::APP_FS as usize) as *const u64);
            }
            sys::set_gs(next as u64);
        }
        self.state.store(state, Ordering::Release);
        true
    }
}

/// The calling thread's current bank (its gs base).
pub fn current_bank() -> *mut u8 {
    let p: u64;
    // SAFETY: gs:[BANK_SELF] holds the bank's address in every bank.
    unsafe { std::arch::asm!("mov {}, gs:[0x78]", out(reg) p, options(nostack, readonly)) };
    p as *mut u8
}

/// The calling thread (from gs:[0]).
pub fn current() -> &'static Thread {
    let p: u64;
    // SAFETY: gs:[0] holds the thread pointer in every bank.
    unsafe { std::arch::asm!("mov {}, gs:[0]", out(reg) p, options(nostack, readonly)) };
    // SAFETY: threads are never freed.
    unsafe { &*(p as *const Thread) }
}

/// Zeroes every thread's counters and forgets all threads but `keep` (a
/// forked child starts counting from nothing, with one thread).
pub fn reset_after_fork(keep: &Thread, slots: usize) {
    for t in all() {
        for s in 0..MAX_STATES {
            let p = t.banks[s].load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: the counters of a mapped bank.
                unsafe {
                    std::ptr::write_bytes(
                        p.add(header::COUNTERS),
                        0,
                        slots.min(header::MAX_SLOTS) * 8,
                    )
                };
            }
            t.entries[s].store(0, Ordering::Relaxed);
        }
    }
    for (i, slot) in THREADS.iter().enumerate() {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() && !std::ptr::eq(p, keep) {
            THREADS[i].store(std::ptr::null_mut(), Ordering::Release);
        }
    }
    LIVE.store(1, Ordering::Release);
}
