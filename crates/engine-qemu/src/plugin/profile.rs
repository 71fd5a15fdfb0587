//! Attribution data: the code table (`C.code`: what each translated block
//! holds) and per-bank block counters (`C.prof`), as
//! `flopscope_counter_file::profile` lays them out.
//!
//! Counters are numbered at translation (one per piece of a block, one for
//! the taken side of a conditional branch, ten per instruction whose memory
//! accesses are counted at run time). A bank's counters are mapped from the
//! `.prof` file the first time the bank counts a block (the cold path, like
//! the bank itself); after that, counting a block adds to one more word of
//! the executing vCPU's own memory: no atomics, no locks, no allocation.

use super::bank::{bump, view, MAX_VCPUS};
use super::own_file::OwnFile;
use crate::layout::{word, MAX_BANKS, MAX_SLOTS};
use flopscope_counter_file::profile::{self, Record, BANK_STRIDE, COUNTERS_PER_BANK};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// Each bank's counters in the `.prof` mapping, once mapped.
static PROF: [AtomicPtr<u64>; MAX_BANKS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_BANKS];
/// The `.prof` file, kept open for mapping banks.
static PROF_FILE: Mutex<Option<OwnFile>> = Mutex::new(None);
/// Whether attribution is on (the files exist and are the process's own).
static ON: AtomicBool = AtomicBool::new(false);
/// The next counter number.
static NEXT: AtomicU32 = AtomicU32::new(0);
/// The code table, appended to at each translation.
static CODE: Mutex<Option<OwnFile>> = Mutex::new(None);
/// Bytes of the code table written so far (a forked child copies that many).
static WRITTEN: AtomicU64 = AtomicU64::new(0);
/// Executable ranges of the last mappings snapshot (program addresses).
static KNOWN: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());
/// Counter value of "no counter" (numbers ran out: attribution is partial).
pub const NONE: u32 = u32::MAX;

/// What the block callback needs of a translated block.
#[repr(C)]
pub struct BlockData {
    /// The head piece's (slot, increment) list (see translate.rs).
    pub items: *const super::translate::Item,
    pub counter: u32,
    /// Counter of the taken conditional branch, or [`NONE`].
    pub taken_counter: u32,
    pub start: u64,
    /// Where its direct branch or call goes (the conditional branch's
    /// taken side), or the REP string instruction it ends with (QEMU
    /// enters the block of that instruction for each iteration); u64::MAX
    /// for none.
    pub taken: u64,
    /// Bytes of its instructions: it holds `start..start + len`.
    pub len: u32,
    /// [`ALONE_WRITE`], [`FIRST_WRITES`], [`GOES_UNSEEN`] and [`MARKED`]
    /// (cut.rs).
    pub flags: u8,
}

/// The block is one instruction that writes memory: what QEMU runs alone
/// when it leaves a block half-way (cut.rs).
pub const ALONE_WRITE: u8 = 1;
/// The block's first instruction may write memory: where QEMU leaves a
/// block half-way, the next block starts so (cut.rs).
pub const FIRST_WRITES: u8 = 4;
/// The block holds a region marker (its counts are in pieces).
pub const MARKED: u8 = 8;
/// Where the block goes when it runs to its end is not known from its code
/// (it ends in an indirect branch, a return or a system call).
pub const GOES_UNSEEN: u8 = 2;

/// The last block each vCPU ran.
static PREV: [AtomicPtr<BlockData>; MAX_VCPUS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_VCPUS];

/// Creates the code table and the counters file beside counter file
/// `counters`; a forked child (`parent`) starts its code table as a copy of
/// its parent's, whose counter numbers it keeps using.
pub fn open(counters: &str, parent: Option<&str>) -> Result<(), String> {
    if std::env::var_os(profile::OFF_ENV).is_some() {
        return Ok(()); // `--no-attribution`: no files, nothing counted per block
    }
    let cpath = profile::code_path(counters.as_ref());
    if let Some(p) = parent {
        // Only the records written before the fork: the parent goes on
        // appending its own, whose counter numbers the child reuses.
        let mut table = std::fs::read(profile::code_path(p.as_ref()))
            .map_err(|e| format!("cannot copy the code table for {counters}: {e}"))?;
        table.truncate(WRITTEN.load(Ordering::Acquire) as usize);
        std::fs::write(&cpath, &table)
            .map_err(|e| format!("cannot copy the code table for {counters}: {e}"))?;
    }
    let created = |e: std::io::Error| format!("cannot create {}: {e}", cpath.display());
    let code = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&cpath)
        .map_err(created)?;
    if parent.is_none() {
        code.set_len(0).map_err(created)?;
    }
    keep(&CODE, OwnFile::new(code, &cpath, true).map_err(created)?)?;
    let ppath = profile::prof_path(counters.as_ref());
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&ppath)
        .map_err(|e| format!("cannot create {}: {e}", ppath.display()))?;
    f.set_len(MAX_BANKS as u64 * BANK_STRIDE)
        .map_err(|e| format!("cannot size {}: {e}", ppath.display()))?;
    let f = OwnFile::new(f, &ppath, false)
        .map_err(|e| format!("cannot keep {} open: {e}", ppath.display()))?;
    keep(&PROF_FILE, f)?;
    ON.store(true, Ordering::Release);
    for p in &PROF {
        p.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
    for p in &PREV {
        p.store(std::ptr::null_mut(), Ordering::Relaxed);
    }
    Ok(())
}

/// Makes `f` the file of `slot`, closing the one it held (a forked child's
/// copy of its parent's) if that descriptor is still the plugin's.
fn keep(slot: &Mutex<Option<OwnFile>>, f: OwnFile) -> Result<(), String> {
    let old = slot.lock().map_err(|_| "a file lock poisoned")?.replace(f);
    if let Some(old) = old {
        old.close_if_ours();
    }
    Ok(())
}

/// A forked child that could not create its own attribution files stops
/// writing to its parent's: no more banks mapped from the parent's `.prof`
/// file, and the parent's code table left alone (its writer dropped without
/// flushing: what it holds unwritten is the parent's, which the parent
/// writes itself).
pub fn detach() {
    ON.store(false, Ordering::Release);
    if let Ok(mut f) = PROF_FILE.lock() {
        f.take();
    }
    for p in &PROF {
        p.store(std::ptr::null_mut(), Ordering::Release);
    }
    if let Ok(mut code) = CODE.lock() {
        code.take();
    }
}

/// `n` consecutive counter numbers, or [`NONE`] when they ran out.
pub fn counters(n: u32) -> u32 {
    let c = NEXT.fetch_add(n, Ordering::Relaxed);
    if c.saturating_add(n) > COUNTERS_PER_BANK {
        view().word(word::PROFILE_LOST).store(1, Ordering::Relaxed);
        return NONE;
    }
    c
}

/// Appends a record to the code table.
pub fn write(r: &Record) {
    if let Ok(mut g) = CODE.lock() {
        if let Some(w) = g.as_mut() {
            let bytes = r.encode();
            match w.write_all(&bytes) {
                Ok(()) => {
                    WRITTEN.fetch_add(bytes.len() as u64, Ordering::AcqRel);
                }
                Err(_) => view().word(word::PROFILE_LOST).store(1, Ordering::Relaxed),
            }
        }
    }
}

/// Before the first block translated at `vaddr` from a mapping the last
/// snapshot lacked: a new snapshot (the host's /proc/self/maps; `delta` =
/// host - guest address).
///
/// QEMU maps the guest's code without execute permission on the host (the
/// host never runs it), so every file-backed mapping is taken as code: the
/// snapshot marks them executable (`r-xp`), as the guest sees them.
pub fn note_code_at(vaddr: u64, delta: i64) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let Ok(mut known) = KNOWN.lock() else { return };
    if known.iter().any(|(lo, hi)| (*lo..*hi).contains(&vaddr)) {
        return;
    }
    let Ok(text) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    known.clear();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let file_backed = fields.len() >= 6 && fields[5].starts_with('/');
        let readable = fields.get(1).is_some_and(|p| p.starts_with('r'));
        if !(file_backed && readable) {
            continue;
        }
        if let Some((lo, hi)) = fields[0].split_once('-') {
            if let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) {
                let g = |h: u64| (h as i64).wrapping_sub(delta) as u64;
                known.push((g(lo), g(hi)));
            }
        }
        let perms = fields[1];
        let exec = format!("{}x{}", &perms[..2], &perms[3..]);
        out.push_str(&line.replacen(perms, &exec, 1));
        out.push('\n');
    }
    // A block outside every file mapping (code made at run time) is not
    // looked for again at each translation.
    if !known.iter().any(|(lo, hi)| (*lo..*hi).contains(&vaddr)) {
        known.push((vaddr & !4095, (vaddr & !4095) + 4096));
    }
    drop(known);
    write(&Record::Maps { delta, text: out });
}

/// The counters of the bank at `bank` (a bank pointer of the counter
/// file), or null (the overflow bank; no `.prof` file).
#[inline(always)]
pub fn counters_of(bank: *mut u64) -> *mut u64 {
    let base = view().bank(0) as usize;
    let b = (bank as usize).wrapping_sub(base) / (MAX_SLOTS * 8);
    if b >= MAX_BANKS {
        return std::ptr::null_mut();
    }
    let p = PROF[b].load(Ordering::Relaxed);
    if !p.is_null() {
        return p;
    }
    map_bank(b)
}

#[cold]
fn map_bank(b: usize) -> *mut u64 {
    if !ON.load(Ordering::Acquire) {
        return std::ptr::null_mut();
    }
    // Held until the bank is mapped: the descriptor checked is the one used.
    let mut file = PROF_FILE.lock().ok();
    let Some(fd) = file.as_mut().and_then(|f| f.as_mut()?.fd()) else {
        view().word(word::PROFILE_LOST).store(1, Ordering::Relaxed);
        return std::ptr::null_mut();
    };
    // SAFETY: a shared mapping of bank b's stride of the sized `.prof` file.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            BANK_STRIDE as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd,
            (b as u64 * BANK_STRIDE) as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        view().word(word::PROFILE_LOST).store(1, Ordering::Relaxed);
        return std::ptr::null_mut();
    }
    match PROF[b].compare_exchange(
        std::ptr::null_mut(),
        p as *mut u64,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => p as *mut u64,
        Err(other) => {
            // SAFETY: our own mapping, not published.
            unsafe { libc::munmap(p, BANK_STRIDE as usize) };
            other
        }
    }
}

/// Adds 1 to counter `c` of `prof` (a bank's counters), unless either is
/// missing.
#[inline(always)]
pub fn count(prof: *mut u64, c: u32) {
    if !prof.is_null() && c != NONE {
        bump(prof, c, 1);
    }
}

/// At each execution of a block: its piece counter, and the taken edge of
/// the previous block of this vCPU if that one branched here; a previous
/// block left half-way (cut.rs) is settled instead.
#[inline(always)]
pub fn block_ran(vcpu: u32, bank: *mut u64, d: &BlockData) {
    let Some(prev) = PREV.get(vcpu as usize) else {
        count(counters_of(bank), d.counter);
        return;
    };
    // A load and a store, not a swap (a locked exchange): only this
    // vCPU's thread writes its word.
    let p = prev.load(Ordering::Relaxed);
    prev.store(d as *const BlockData as *mut BlockData, Ordering::Relaxed);
    let prof = counters_of(bank);
    count(prof, d.counter);
    if p.is_null() {
        return;
    }
    // SAFETY: PREV holds leaked BlockData, alive for the process.
    let p = unsafe { &*p };
    if d.flags & FIRST_WRITES != 0 && super::cut::left_half_way(bank, p, d) {
        return;
    }
    if p.taken_counter != NONE && p.taken == d.start {
        count(prof, p.taken_counter);
    }
}
