//! Reading a counter file: live (progress) or after the run (the counts).

use crate::layout::{
    self, word, ProcessEnd, SlotKind, View, FILE_BYTES, MAX_BANKS, MAX_SLOTS, SLOT_INSTRUCTIONS,
};
use flopscope_model::{Counts, FpKey, FpTally};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A mapped counter file.
pub struct CounterFile {
    path: PathBuf,
    base: *mut u8,
}

// SAFETY: the mapping is only read through atomics and immutable slices.
unsafe impl Send for CounterFile {}

impl Drop for CounterFile {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `map`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, FILE_BYTES) };
    }
}

/// What one counter file (one process) holds.
#[derive(Debug, Clone, Default)]
pub struct FileCounts {
    pub pid: u64,
    pub total: Counts,
    /// Per vCPU index (per emulated thread).
    pub per_vcpu: BTreeMap<u32, Counts>,
    /// The plugin's exit callback ran.
    pub finished: bool,
    /// Blocks or slots that could not be counted (counts are then low).
    pub overflow: u64,
    /// The counts were not written: the process ended inside the engine
    /// (see `word::FLUSH_LOCKED_OUT`).
    pub flush_locked_out: bool,
    /// An instruction QEMU cannot execute that the program reached.
    pub unsupported: Option<Unsupported>,
    /// Marked regions, in order of first entry; nested regions count
    /// inclusively (an inner region's work is also its outer region's).
    pub regions: Vec<RegionCounts>,
    /// Counts outside every region (when any region was entered).
    pub unmarked: Counts,
    /// Native engine: XSAVE-family bytes were not counted, from the block
    /// at this address on.
    pub uncounted_state: Option<u64>,
    /// Native engine: code was run from a writable page the engine could
    /// not write-protect, from this address (a change to it would go
    /// unseen: counts may then be wrong).
    pub generated_code_pc: Option<u64>,
    /// Native engine: writes caught on pages of translated code, and blocks
    /// invalidated (code written at run time, followed).
    pub code_writes: u64,
    pub blocks_invalidated: u64,
    /// Emulate engine: masked loads booked at full width
    /// (`word::FULL_WIDTH_MASKED_LOADS`).
    pub full_width_masked_loads: u64,
    /// Native engine: threads summed into the rows of thread
    /// [`layout::FOLDED_THREADS`] (`word::THREADS_FOLDED`), and threads that
    /// took over an exited one's row (`word::THREADS_TAKEN_OVER`).
    pub threads_folded: u64,
    pub threads_taken_over: u64,
    /// Native engine: forked children not counted (`word::CHILDREN_LOST`).
    pub children_lost: u64,
    /// Region ends that did not match, and the first one described.
    pub mismatches: u64,
    pub mismatch_text: String,
    /// The process's command line, as its engine recorded it (empty when it
    /// did not: a file of an older layout).
    pub command: Vec<String>,
    /// How the process ended, as its engine saw it.
    pub end: ProcessEnd,
    /// A forked child's: the pid it was forked from.
    pub parent_pid: Option<u64>,
    /// When the file was started (CLOCK_REALTIME ns).
    pub started_ns: u64,
    /// Children this process reaped, with how each ended (pid, end).
    pub reaped: Vec<(u64, ProcessEnd)>,
}

/// An instruction the program reached that the engine cannot execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub pc: u64,
    /// Intel syntax, as iced-x86 formats it (or, from the native engine,
    /// why it cannot go on).
    pub text: String,
    pub kind: UnsupportedKind,
}

/// Why an instruction could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsupportedKind {
    /// An EVEX (AVX-512) instruction QEMU 7.2 cannot execute.
    Evex,
    /// Another instruction QEMU cannot execute, or a construct the native
    /// engine cannot handle.
    Other,
    /// An instruction of an extension this processor lacks (native engine):
    /// it raised SIGILL, as it does natively.
    MissingFeature(String),
}

/// One marked region's counts.
#[derive(Debug, Clone, Default)]
pub struct RegionCounts {
    pub name: String,
    pub entries: u64,
    pub counts: Counts,
}

impl CounterFile {
    /// Creates an empty, formatted counter file for the plugin to fill.
    pub fn create(path: &Path) -> std::io::Result<CounterFile> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        f.set_len(FILE_BYTES as u64)?;
        let cf = Self::map(path, &f, true)?;
        // SAFETY: a fresh zeroed mapping that nothing else uses yet.
        unsafe { layout::format_new(&cf.view(), 0) };
        Ok(cf)
    }

    /// Opens an existing counter file for reading.
    pub fn open(path: &Path) -> std::io::Result<CounterFile> {
        let f = std::fs::File::open(path)?;
        if f.metadata()?.len() < FILE_BYTES as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "counter file too short",
            ));
        }
        Self::map(path, &f, false)
    }

    fn map(path: &Path, f: &std::fs::File, write: bool) -> std::io::Result<CounterFile> {
        use std::os::unix::io::AsRawFd;
        let prot = if write {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: mapping an open file of at least FILE_BYTES bytes.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                FILE_BYTES,
                prot,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(CounterFile {
            path: path.to_path_buf(),
            base: p as *mut u8,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn view(&self) -> View {
        // SAFETY: base is a FILE_BYTES mapping owned by self.
        unsafe { View::new(self.base) }
    }

    /// The process that counted into the file, and when the file was
    /// formatted (CLOCK_REALTIME, ns): from then on files the process
    /// writes are its own.
    pub fn pid_and_start(&self) -> (u64, u64) {
        let v = self.view();
        (
            layout::load(v.word(word::PID)),
            layout::load(v.word(word::STARTED_NS)),
        )
    }

    /// What each used slot counts (`None`: a kind this version cannot read).
    pub fn slot_kinds(&self) -> Vec<Option<SlotKind>> {
        let v = self.view();
        let slots = (layout::load(v.word(word::SLOTS_USED)) as usize).min(MAX_SLOTS);
        (0..slots).map(|s| v.slot_kind(s)).collect()
    }

    /// The region state of each used bank, in bank order.
    pub fn bank_states(&self) -> Vec<u32> {
        let v = self.view();
        let banks = (layout::load(v.word(word::BANKS_USED)) as usize).min(MAX_BANKS);
        (0..banks).map(|b| v.bank_state(b)).collect()
    }

    /// The names of the regions open in each used bank (a bank's counts
    /// are every one of these regions'), in bank order.
    pub fn bank_regions(&self) -> Vec<Vec<String>> {
        let v = self.view();
        self.bank_states()
            .into_iter()
            .map(|s| {
                let mut ids = v.state_stack(s as usize);
                ids.sort_unstable();
                ids.dedup();
                ids.into_iter()
                    .map(|id| v.region_name(id as usize))
                    .collect()
            })
            .collect()
    }

    /// Whether attribution data was lost (see `word::PROFILE_LOST`).
    pub fn profile_lost(&self) -> bool {
        layout::load(self.view().word(word::PROFILE_LOST)) != 0
    }

    /// Whether the plugin attached to this file (it records its pid).
    pub fn attached(&self) -> bool {
        layout::load(self.view().word(word::PID)) != 0
    }

    /// Instructions counted so far, over all threads (for progress).
    pub fn instructions_so_far(&self) -> u64 {
        let v = self.view();
        let banks = (layout::load(v.word(word::BANKS_USED)) as usize).min(MAX_BANKS);
        (0..banks)
            .map(|b| layout::load(v.counter(b, SLOT_INSTRUCTIONS as usize)))
            .sum()
    }

    /// Everything the file holds.
    pub fn read(&self) -> Result<FileCounts, String> {
        let v = self.view();
        if layout::load(v.word(word::MAGIC)) != layout::MAGIC {
            return Err(format!(
                "{} is not a flopscope counter file",
                self.path.display()
            ));
        }
        let slots = (layout::load(v.word(word::SLOTS_USED)) as usize).min(MAX_SLOTS);
        let kinds: Vec<Option<SlotKind>> = (0..slots).map(|s| v.slot_kind(s)).collect();
        let banks = (layout::load(v.word(word::BANKS_USED)) as usize).min(MAX_BANKS);
        let mut out = FileCounts {
            pid: layout::load(v.word(word::PID)),
            finished: layout::load(v.word(word::FINISHED)) != 0,
            overflow: layout::load(v.word(word::OVERFLOW)),
            flush_locked_out: layout::load(v.word(word::FLUSH_LOCKED_OUT)) != 0,
            ..Default::default()
        };
        let pc = layout::load(v.word(word::UNSUPPORTED_PC));
        if pc != 0 {
            let kind = match layout::load(v.word(word::UNSUPPORTED_KIND)) {
                1 => UnsupportedKind::Evex,
                3 => UnsupportedKind::MissingFeature(v.text(layout::FEATURE_TEXT)),
                _ => UnsupportedKind::Other,
            };
            out.unsupported = Some(Unsupported {
                pc,
                text: v.text(layout::UNSUPPORTED_TEXT),
                kind,
            });
        }
        out.uncounted_state =
            Some(layout::load(v.word(word::UNCOUNTED_STATE))).filter(|pc| *pc != 0);
        out.generated_code_pc =
            Some(layout::load(v.word(word::GENERATED_CODE_PC))).filter(|pc| *pc != 0);
        out.code_writes = layout::load(v.word(word::CODE_WRITES));
        out.blocks_invalidated = layout::load(v.word(word::BLOCKS_INVALIDATED));
        out.full_width_masked_loads = layout::load(v.word(word::FULL_WIDTH_MASKED_LOADS));
        out.threads_folded = layout::load(v.word(word::THREADS_FOLDED));
        out.threads_taken_over = layout::load(v.word(word::THREADS_TAKEN_OVER));
        out.children_lost = layout::load(v.word(word::CHILDREN_LOST));
        out.command = layout::command_of(v.bytes(layout::COMMAND_TEXT, layout::COMMAND_BYTES));
        out.end = ProcessEnd::decode(layout::load(v.word(word::END)));
        out.parent_pid = Some(layout::load(v.word(word::PARENT_PID))).filter(|p| *p != 0);
        out.started_ns = layout::load(v.word(word::STARTED_NS));
        out.reaped = layout::reaped(&v)
            .into_iter()
            .map(|(pid, status)| (pid, ProcessEnd::of_wait_status(status)))
            .collect();
        out.mismatches = layout::load(v.word(word::MISMATCHES));
        if out.mismatches > 0 {
            out.mismatch_text = v.text(layout::MISMATCH_TEXT);
        }
        let n_regions =
            (layout::load(v.word(word::REGIONS_USED)) as usize).min(layout::MAX_REGIONS);
        let mut regions: Vec<RegionCounts> = (0..n_regions)
            .map(|id| RegionCounts {
                name: v.region_name(id),
                ..Default::default()
            })
            .collect();
        for b in 0..banks {
            let mut c = Counts::default();
            let mut entries = 0;
            for (s, kind) in kinds.iter().enumerate() {
                let n = layout::load(v.counter(b, s));
                match (kind, n) {
                    (_, 0) => {}
                    (Some(SlotKind::RegionEntries), n) => entries += n,
                    (Some(kind), n) => add_slot(&mut c, *kind, n),
                    (None, _) => {}
                }
            }
            let stack = v.state_stack(v.bank_state(b) as usize);
            if let Some(top) = stack.last().and_then(|id| regions.get_mut(*id as usize)) {
                top.entries += entries;
            }
            // A region open twice (begun again before its end) counts its work once.
            let mut open = stack.clone();
            open.sort_unstable();
            open.dedup();
            for id in &open {
                if let Some(r) = regions.get_mut(*id as usize) {
                    r.counts.merge(&c);
                }
            }
            if stack.is_empty() {
                out.unmarked.merge(&c);
            }
            out.total.merge(&c);
            out.per_vcpu.entry(v.bank_vcpu(b)).or_default().merge(&c);
        }
        // Region ids start at 1; keep the regions the program entered.
        out.regions = regions
            .into_iter()
            .skip(1)
            .filter(|r| r.entries > 0 || r.counts != Counts::default())
            .collect();
        Ok(out)
    }
}

/// Adds `n` counts of slot kind `kind` into `c`.
pub fn add_slot(c: &mut Counts, kind: SlotKind, n: u64) {
    match kind {
        SlotKind::Instructions => c.instructions += n,
        SlotKind::FpInsn {
            precision,
            op,
            lanes,
            width_bits,
            masked,
            flop_per_insn,
        } => c
            .fp_instructions
            .entry(FpKey {
                precision,
                width_bits,
                lanes,
                op,
                masked,
            })
            .or_default()
            .add(FpTally {
                count: n,
                flop: n * u64::from(flop_per_insn),
            }),
        SlotKind::FpFlop {
            precision,
            op,
            lanes,
            width_bits,
            masked,
        } => c
            .fp_instructions
            .entry(FpKey {
                precision,
                width_bits,
                lanes,
                op,
                masked,
            })
            .or_default()
            .add(FpTally { count: 0, flop: n }),
        SlotKind::Flop { precision, op } => *c.flop.entry((precision, op)).or_default() += n,
        SlotKind::MemRead { size } => *c.mem_read.entry(size).or_default() += n,
        SlotKind::MemWrite { size } => *c.mem_write.entry(size).or_default() += n,
        SlotKind::RegionEntries => {}
    }
}

/// Counter files of child processes: `<path>.fork.<pid>` for forked ones,
/// `<path>.exec.<pid>.<ns>` for programs the exec shim relaunched, and
/// their own children's (named after theirs).
pub fn child_files(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(&prefix)
                        && !n.ends_with(crate::profile::CODE_SUFFIX)
                        && !n.ends_with(crate::profile::PROF_SUFFIX)
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
