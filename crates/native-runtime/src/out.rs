//! The counter file this process writes: mapped at take-over, filled by
//! [`flush`] at exit, at a fatal signal, before an `exec`, and switched to a
//! file of its own in a forked child.

use crate::thread;
use crate::translator;
use flopscope_counter_file::descriptors::with_all_files_allowed;
use flopscope_counter_file::layout::{self, word, SlotKind, View, FILE_BYTES};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

static BASE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static PATH: Mutex<String> = Mutex::new(String::new());

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&PATH)
}

pub fn view() -> Option<View> {
    let b = BASE.load(Ordering::Acquire);
    // SAFETY: BASE is a FILE_BYTES shared mapping once set.
    (!b.is_null()).then(|| unsafe { View::new(b) })
}

fn map(path: &str, create: bool) -> Result<*mut u8, String> {
    let c = std::ffi::CString::new(path).map_err(|_| "bad counter file path".to_string())?;
    let flags = libc::O_RDWR
        | libc::O_CLOEXEC
        | if create {
            libc::O_CREAT | libc::O_TRUNC
        } else {
            0
        };
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(format!(
            "cannot open the counter file {path}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd is open; FILE_BYTES shared mapping of it.
    let p = unsafe {
        if create && libc::ftruncate(fd, FILE_BYTES as i64) != 0 {
            libc::close(fd);
            return Err(format!("cannot size the counter file {path}"));
        }
        let p = libc::mmap(
            std::ptr::null_mut(),
            FILE_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        libc::close(fd);
        p
    };
    if p == libc::MAP_FAILED {
        return Err(format!("cannot map the counter file {path}"));
    }
    Ok(p as *mut u8)
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes ts.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Attaches to the file the CLI created at `path`; a program exec'd by the
/// counted one finds it taken and writes `<path>.exec.<pid>.<ns>` instead.
pub fn attach(path: &str) -> Result<(), String> {
    let p = map(path, false)?;
    // SAFETY: a FILE_BYTES mapping.
    let v = unsafe { View::new(p) };
    if layout::load(v.word(word::MAGIC)) != layout::MAGIC
        || layout::load(v.word(word::VERSION)) != layout::LAYOUT_VERSION
    {
        return Err(format!(
            "{path} is not a counter file of this flopscope version"
        ));
    }
    let pid = crate::sys::getpid();
    if v.word(word::PID)
        .compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(p as *mut libc::c_void, FILE_BYTES) };
        if std::env::var_os(crate::NO_FOLLOW_ENV).is_some() {
            return Err(NOT_FOLLOWED.into());
        }
        start_own(&format!("{path}.exec.{pid}.{}", now_ns()), pid)?;
        if let Some(v) = view() {
            // SAFETY: the new file is this process's; no other thread runs yet.
            unsafe { write_own_command(&v) };
        }
        return Ok(());
    }
    // SAFETY: the file's owner, before any other thread runs.
    unsafe { write_own_command(&v) };
    BASE.store(p, Ordering::Release);
    *PATH.lock().unwrap_or_else(|e| e.into_inner()) = path.to_string();
    Ok(())
}

/// Records the program's command line, as the kernel gave it.
///
/// # Safety
/// Only the process owning the file's view may call it, from one thread.
unsafe fn write_own_command(v: &View) {
    if let Ok(args) = std::fs::read("/proc/self/cmdline") {
        // SAFETY: per the contract.
        unsafe { layout::write_command(v, &args) };
    }
}

/// Records how the process ends (exit, fatal signal, exec).
pub fn note_end(end: layout::ProcessEnd) {
    if let Some(v) = view() {
        layout::record_end(&v, end);
    }
}

/// Why an exec'd program is not taken over (`--no-follow`).
pub const NOT_FOLLOWED: &str = "not following exec'd programs";

/// A fresh file of this process's own (exec'd program, forked child); the
/// region tables seen so far carry over.
pub fn start_own(path: &str, pid: u64) -> Result<(), String> {
    let p = map(path, true)?;
    // SAFETY: a fresh zeroed FILE_BYTES mapping used by nobody else.
    let v = unsafe { View::new(p) };
    unsafe { layout::format_new(&v, pid) };
    if let Some(old) = view() {
        let tables = old
            .bytes(layout::REGION_TABLE, layout::BANKS - layout::REGION_TABLE)
            .to_vec();
        // SAFETY: the new file is ours alone.
        unsafe { v.write_bytes(layout::REGION_TABLE, &tables) };
        for w in [word::REGIONS_USED, word::STATES_USED] {
            v.word(w)
                .store(layout::load(old.word(w)), Ordering::Release);
        }
    }
    BASE.store(p, Ordering::Release);
    *PATH.lock().unwrap_or_else(|e| e.into_inner()) = path.to_string();
    Ok(())
}

/// A forked child: counts from zero into `<path>.fork.<pid>`.
pub fn after_fork() {
    let pid = crate::sys::getpid();
    let path = PATH.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let slots = translator::lock()
        .as_mut()
        .map(|t| {
            // The child's note of code written counts its own writes: the
            // parent's are in the parent's file.
            t.watch.faults = 0;
            t.watch.invalidated = 0;
            t.slots.descs.len()
        })
        .unwrap_or(0);
    thread::reset_after_fork(thread::current(), slots);
    crate::region_times::after_fork();
    let parent = view().map(|v| {
        let command = v
            .bytes(layout::COMMAND_TEXT, layout::COMMAND_BYTES)
            .to_vec();
        (command, layout::load(v.word(word::PID)))
    });
    let own = format!("{path}.fork.{pid}");
    let started =
        start_own(&own, pid).is_ok() || with_all_files_allowed(|| start_own(&own, pid)).is_ok();
    if !started {
        // Said in the parent's file, still mapped here and shared: the
        // report names the children that could not be counted.
        if let Some(v) = view() {
            v.word(word::CHILDREN_LOST).fetch_add(1, Ordering::AcqRel);
        }
        BASE.store(std::ptr::null_mut(), Ordering::Release);
    } else if let (Some(v), Some((command, parent_pid))) = (view(), parent) {
        // The child runs its parent's program: its command line, and whose fork it is.
        // SAFETY: the new file is this process's alone.
        unsafe { v.write_bytes(layout::COMMAND_TEXT, &command) };
        v.word(word::PARENT_PID)
            .store(parent_pid, Ordering::Relaxed);
    }
}

/// Records why the engine stopped the program (shown in the report).
pub fn note_unsupported(pc: u64, text: &str) {
    note(pc, text, 2, "");
}

/// Records that the program reached `insn` at `pc`, of the extension
/// `feature` this processor lacks: the SIGILL that follows is explained.
pub fn note_missing_feature(pc: u64, feature: &str, insn: &str) {
    note(pc, insn, 3, feature);
}

fn note(pc: u64, text: &str, kind: u64, feature: &str) {
    let Some(v) = view() else { return };
    if v.word(word::UNSUPPORTED_PC)
        .compare_exchange(0, pc.max(1), Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return; // the first one reached is the one the report names
    }
    let nul_ended = |t: &str, room: usize| {
        let mut b = t.as_bytes().to_vec();
        b.truncate(room - 1);
        b.push(0);
        b
    };
    // SAFETY: written once, by the thread that won the exchange above, before
    // the kind says they are there.
    unsafe {
        v.write_bytes(
            layout::UNSUPPORTED_TEXT,
            &nul_ended(text, layout::TEXT_BYTES),
        );
        v.write_bytes(
            layout::FEATURE_TEXT,
            &nul_ended(feature, layout::FEATURE_TEXT_BYTES),
        );
    }
    v.word(word::UNSUPPORTED_KIND)
        .store(kind, Ordering::Release);
}

/// Writes every thread's counts into the file (replacing what an earlier
/// flush wrote). `finished`: the process is ending normally.
pub fn flush(finished: bool) {
    let Some(v) = view() else { return };
    let t0 = crate::stats::now();
    flush_counts(v, finished);
    crate::region_times::write();
    if crate::dispatch::debug() {
        let took = (crate::stats::now() - t0) as f64 / 1e6;
        crate::sys::write_all(
            2,
            format!("{}[fs] flush took {took:.3} ms\n", crate::stats::summary()).as_bytes(),
        );
    }
}

fn flush_counts(v: View, finished: bool) {
    let Some(guard) = translator::try_lock() else {
        v.word(word::FLUSH_LOCKED_OUT).store(1, Ordering::Release);
        return;
    };
    v.word(word::FLUSH_LOCKED_OUT).store(0, Ordering::Release);
    let Some(t) = guard.as_ref() else { return };
    let descs = &t.slots.descs;
    let mut kinds = Kinds::new();
    let mut banks = 0usize;
    let mut lost = 0u64;
    let mut written: Vec<Vec<u64>> = Vec::new();
    // More (thread, state) banks than the file has rows: the last threads'
    // banks are summed per state into rows of thread FOLDED (exact counts,
    // fewer thread rows).
    fn used(th: &thread::Thread) -> impl Iterator<Item = usize> + '_ {
        (0..thread::MAX_STATES).filter(move |&s| th.counters(s, 0).is_some())
    }
    let pairs: usize = thread::all().map(|th| used(th).count()).sum();
    let mut states: Vec<usize> = thread::all().flat_map(used).collect();
    states.sort_unstable();
    states.dedup();
    let own_rows = if pairs > layout::MAX_BANKS {
        layout::MAX_BANKS.saturating_sub(states.len())
    } else {
        pairs
    };
    let mut folded: Vec<(usize, Vec<u64>, u64)> = Vec::new();
    let mut folded_threads = 0u64;
    for th in thread::all() {
        let mut folded_any = false;
        for s in used(th) {
            let Some(live) = th.counters(s, descs.len()) else {
                continue;
            };
            let entries = th.entries[s].load(Ordering::Acquire);
            if banks >= own_rows {
                folded_any = true;
                let at = match folded.iter().position(|(fs, _, _)| *fs == s) {
                    Some(at) => at,
                    None => {
                        folded.push((s, vec![0; live.len()], 0));
                        folded.len() - 1
                    }
                };
                let (_, sum, e) = &mut folded[at];
                sum.iter_mut().zip(live).for_each(|(a, c)| *a += *c);
                *e += entries;
                continue;
            }
            // One copy for the totals and the attribution files alike: other
            // threads may still be counting (a process ending while its
            // workers spin), and both must tell the same counts.
            let ctr = live.to_vec();
            kinds.write_bank(v, descs, banks, th.index, s, &ctr, entries, &mut lost);
            written.push(ctr);
            banks += 1;
        }
        folded_threads += u64::from(folded_any);
    }
    for (s, ctr, entries) in folded {
        if banks >= layout::MAX_BANKS {
            lost += 1;
            continue;
        }
        kinds.write_bank(v, descs, banks, FOLDED, s, &ctr, entries, &mut lost);
        written.push(ctr);
        banks += 1;
    }
    v.word(word::THREADS_FOLDED)
        .store(folded_threads, Ordering::Release);
    v.word(word::THREADS_TAKEN_OVER)
        .store(thread::REUSED.load(Ordering::Acquire), Ordering::Release);
    let (index, next_kind) = (kinds.index, kinds.next);
    let path = PATH.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let written: Vec<&[u64]> = written.iter().map(Vec::as_slice).collect();
    if !with_all_files_allowed(|| crate::attribution::write(&path, t, &index, &written)) {
        v.word(word::PROFILE_LOST).store(1, Ordering::Release);
    }
    v.word(word::SLOTS_USED)
        .store(next_kind as u64, Ordering::Release);
    v.word(word::BANKS_USED)
        .store(banks as u64, Ordering::Release);
    v.word(word::OVERFLOW).store(lost, Ordering::Release);
    if let Some(pc) = t.uncounted_state {
        v.word(word::UNCOUNTED_STATE).store(pc, Ordering::Release);
    }
    if let Some(pc) = t.generated_code_pc {
        v.word(word::GENERATED_CODE_PC).store(pc, Ordering::Release);
    }
    v.word(word::CODE_WRITES)
        .store(t.watch.faults, Ordering::Release);
    v.word(word::BLOCKS_INVALIDATED)
        .store(t.watch.invalidated, Ordering::Release);
    v.word(word::FINISHED)
        .store(u64::from(finished), Ordering::Release);
}

/// The thread index of the rows that sum the banks of threads beyond the
/// file's rows (see `flush_counts`).
const FOLDED: u32 = layout::FOLDED_THREADS;

/// The counter file's slot kinds as they are given numbers: fixed kinds
/// first, then each other kind the first time a bank counts it.
struct Kinds {
    // FxHash: a multiply and rotate per word (the default SipHash guards
    // against chosen keys, which these are not, at several times the cost).
    index: FxHashMap<SlotKind, usize>,
    next: usize,
    agg: Vec<u64>,
}

impl Kinds {
    fn new() -> Kinds {
        let mut index = FxHashMap::default();
        for (i, k) in SlotKind::fixed().into_iter().enumerate() {
            index.insert(k, i);
        }
        Kinds {
            index,
            next: layout::FIXED_SLOTS as usize,
            agg: vec![0; layout::MAX_SLOTS],
        }
    }

    /// Writes bank row `row`: thread `thread` in region state `state`, the
    /// counts of `ctr` (per translated slot) by kind, and `entries`.
    #[allow(clippy::too_many_arguments)]
    fn write_bank(
        &mut self,
        v: View,
        descs: &[crate::slots::Desc],
        row: usize,
        thread: u32,
        state: usize,
        ctr: &[u64],
        entries: u64,
        lost: &mut u64,
    ) {
        self.agg.iter_mut().for_each(|a| *a = 0);
        for (slot, &c) in ctr.iter().enumerate() {
            if c == 0 {
                continue;
            }
            for (kind, n) in &descs[slot].items {
                let i = match self.index.get(kind) {
                    Some(i) => *i,
                    None if self.next < layout::MAX_SLOTS => {
                        // SAFETY: slot-table entries past the used ones are ours to write.
                        unsafe {
                            v.write_bytes(layout::SLOT_TABLE + self.next * 16, &kind.encode())
                        };
                        self.index.insert(*kind, self.next);
                        self.next += 1;
                        self.next - 1
                    }
                    None => {
                        *lost += c;
                        continue;
                    }
                };
                self.agg[i] += c * n;
            }
        }
        self.agg[layout::SLOT_REGION_ENTRIES as usize] = entries;
        let mut entry = [0u8; 16];
        entry[0..4].copy_from_slice(&thread.to_le_bytes());
        entry[4..8].copy_from_slice(&(state as u32).to_le_bytes());
        // SAFETY: bank-table entries are written only by this flush.
        unsafe { v.write_bytes(layout::BANK_TABLE + row * 16, &entry) };
        for (j, a) in self.agg.iter().enumerate() {
            v.counter(row, j).store(*a, Ordering::Relaxed);
        }
    }
}
