//! Sampling mode (`--sample-period N`): where the FLOP are, by sampling the
//! instruction pointer every N events of each FP event (the VTune method),
//! while the same counters give the totals.
//!
//! How it is opened (as `perf record` does; Linux `kernel/events/core.c`):
//! - The kernel refuses to map the ring buffer of an inherited per-task event
//!   (`perf_mmap`: "Don't allow mmap() of inherited per-task counters"), so
//!   every event is opened once per CPU on the program (`pid`, `cpu`),
//!   `inherit`, `enable_on_exec`, user space only; the program's threads and
//!   children are followed by inheritance as in counting mode.
//! - Per CPU, a software dummy event owns one ring buffer ([`RING_DATA_PAGES`]
//!   pages) and asks for the side-band records (`mmap2`, `comm_exec`, `task`):
//!   every executable mapping of the program and its children, with path and
//!   file offset, each exec and fork. The sampled events of that CPU write
//!   into the same ring (`PERF_EVENT_IOC_SET_OUTPUT`); samples carry their
//!   event's id ([`crate::records::SAMPLE_TYPE`]).
//! - Events the formulas need but that are not FP events (INSTRUCTIONS) are
//!   opened per CPU too, counting only.
//! - While the program runs, the rings are drained whenever one is half full
//!   (`wakeup_watermark`) and every 100 ms ([`crate::profile::Collector`]).
//!
//! Counts: a per-CPU event's `time_enabled` grows while the program runs on
//! any CPU, its `time_running` only while it runs on that one, so the ratio
//! is not multiplexing. The dummy event is never multiplexed: its
//! `time_running` is the program's time on its CPU, and each event's count on
//! a CPU is scaled by dummy running / event running there (1 without
//! multiplexing, checked on this machine: the two are equal to the
//! nanosecond).
//!
//! [`SoftwareClock`] samples a kernel software clock instead of the event
//! set's events: no PMU needed, so the machinery runs on any machine (the
//! tests use it on a VM without counters); the rows get CPU time, not FLOP.

use crate::error::PerfError;
use crate::eventset::Scope;
use crate::plan::{OpenSpec, Plan};
use crate::probe::{is_permission_errno, perf_event_paranoid};
use crate::profile::{Collector, Profile};
use crate::records::{copy_range, parse_records, SAMPLE_TYPE};
use crate::sys;
use crate::sysfs::{devices_dir, parse_cpu_list, RawConfig};
use crate::values::{CounterValues, Reading};
use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Data pages of each CPU's ring buffer (256 KiB with 4 KiB pages): with the
/// header page, within the 516 KiB per CPU an unprivileged user may lock
/// (kernel.perf_event_mlock_kb), and 8192 samples between two drains.
pub const RING_DATA_PAGES: usize = 64;

/// The longest wait between two drains of the rings.
const POLL_MS: i32 = 100;

/// Sampling, as `--sample-period` asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingOptions {
    /// Events of each sampled event between two samples (nanoseconds of CPU
    /// time for a clock).
    pub period: u64,
    /// Sample this software clock instead of the event set's FP events.
    pub clock: Option<SoftwareClock>,
}

/// A kernel software clock to sample instead of hardware events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftwareClock {
    /// `PERF_COUNT_SW_TASK_CLOCK`: CPU time of the program's threads.
    Task,
    /// `PERF_COUNT_SW_CPU_CLOCK`: the same from the CPU's clock.
    Cpu,
}

impl SoftwareClock {
    /// The event's name in perf's spelling (`task-clock`).
    pub fn name(self) -> &'static str {
        match self {
            SoftwareClock::Task => "task-clock",
            SoftwareClock::Cpu => "cpu-clock",
        }
    }

    fn config(self) -> u64 {
        match self {
            SoftwareClock::Task => sys::PERF_COUNT_SW_TASK_CLOCK,
            SoftwareClock::Cpu => sys::PERF_COUNT_SW_CPU_CLOCK,
        }
    }

    /// The plan that opens this clock on the program (no PMU involved).
    pub fn plan(self) -> Plan {
        Plan {
            opens: vec![OpenSpec {
                event: self.name().into(),
                pmu: "software".into(),
                type_: sys::PERF_TYPE_SOFTWARE,
                raw: RawConfig {
                    config: self.config(),
                    ..Default::default()
                },
                scope: Scope::Thread,
                cpu: -1,
                scale: None,
                zero_when_not_run: false,
                origin: "software clock".into(),
            }],
            ..Default::default()
        }
    }
}

/// One CPU's mapped ring buffer.
struct Ring {
    /// The dummy event that owns it.
    fd: i32,
    cpu: u32,
    base: *mut u8,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
    tail: u64,
}

impl Ring {
    fn map(fd: i32, cpu: u32) -> Result<Ring, PerfError> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let map_len = (1 + RING_DATA_PAGES) * page;
        // SAFETY: mapping a perf event fd as its documentation says: one
        // header page and a power-of-two number of data pages, shared.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(PerfError::RingBuffer {
                cpu,
                kib: map_len / 1024,
                errno: io::Error::last_os_error(),
            });
        }
        let base = base.cast::<u8>();
        // SAFETY: the header page is mapped; the kernel filled these fields at mmap.
        let (offset, size) = unsafe {
            (
                std::ptr::read_volatile(base.add(sys::MMAP_PAGE_DATA_OFFSET).cast::<u64>()),
                std::ptr::read_volatile(base.add(sys::MMAP_PAGE_DATA_SIZE).cast::<u64>()),
            )
        };
        // Kernels before 4.1 leave them 0: the data follows the header page.
        let (data_offset, data_size) = if size == 0 {
            (page, RING_DATA_PAGES * page)
        } else {
            (offset as usize, size as usize)
        };
        Ok(Ring {
            fd,
            cpu,
            base,
            map_len,
            data_offset,
            data_size,
            tail: 0,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: `offset` is data_head or data_tail of the mapped header page,
        // 8-byte aligned u64s shared with the kernel, which only accesses them
        // atomically; the mapping lives as long as `self`.
        unsafe { AtomicU64::from_ptr(self.base.add(offset).cast()) }
    }

    /// Appends the records written since the last read to `out`, and gives
    /// their room back to the kernel.
    fn read(&mut self, out: &mut Vec<u8>) {
        // Acquire: the records before `data_head` are visible once it is read
        // (the kernel's smp_wmb before it publishes the head).
        let head = self.word(sys::MMAP_PAGE_DATA_HEAD).load(Ordering::Acquire);
        // SAFETY: the data area is mapped; the kernel does not write
        // [tail, head) until data_tail moves past it, below.
        unsafe {
            copy_range(
                self.base.add(self.data_offset),
                self.data_size,
                self.tail,
                head,
                out,
            )
        };
        self.tail = head;
        // Release: the reads above happen before the kernel may reuse the room.
        self.word(sys::MMAP_PAGE_DATA_TAIL)
            .store(head, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `map`, once.
        unsafe { libc::munmap(self.base.cast(), self.map_len) };
    }
}

/// One opened per-CPU event.
struct CpuEvent {
    fd: i32,
    event: String,
    /// Index of its CPU's ring.
    ring: usize,
    scale: Option<crate::formula::Num>,
}

/// The open sampling counters of one run.
pub(crate) struct Sampler {
    rings: Vec<Ring>,
    events: Vec<CpuEvent>,
    collector: Collector,
    period: u64,
    scratch: Vec<u8>,
}

impl Drop for Sampler {
    fn drop(&mut self) {
        for e in &self.events {
            // SAFETY: each fd was opened here and is closed once.
            unsafe { libc::close(e.fd) };
        }
        for r in self.rings.drain(..) {
            let fd = r.fd;
            drop(r);
            // SAFETY: as above, after its ring is unmapped.
            unsafe { libc::close(fd) };
        }
    }
}

/// The CPUs `pmu` counts on: its sysfs `cpus` (a hybrid core type), else every online CPU.
fn cpus_of(root: &Path, pmu: &str, online: &[u32]) -> Vec<u32> {
    std::fs::read_to_string(devices_dir(root).join(pmu).join("cpus"))
        .ok()
        .and_then(|t| parse_cpu_list(&t))
        .map(|cpus| cpus.into_iter().filter(|c| online.contains(c)).collect())
        .unwrap_or_else(|| online.to_vec())
}

fn online_cpus(root: &Path) -> Vec<u32> {
    crate::plan::online_cpus(root).unwrap_or_else(|| {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1);
        (0..n as u32).collect()
    })
}

/// Up to `needed` descriptors more than open now: one per event and CPU.
fn raise_fd_limit(needed: usize) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return;
    }
    let want = (needed as libc::rlim_t).saturating_add(256);
    if r.rlim_cur < want {
        r.rlim_cur = want.min(r.rlim_max);
        // SAFETY: `r` is a valid rlimit; failure only leaves the limit as it was.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) };
    }
}

fn open_error(spec: &OpenSpec, cpu: u32, e: io::Error) -> PerfError {
    if is_permission_errno(&e) {
        PerfError::Paranoid {
            level: perf_event_paranoid(),
            errno: e,
        }
    } else {
        PerfError::SampleOpen {
            event: spec.event.clone(),
            pmu: spec.pmu.clone(),
            config: spec.raw.to_string(),
            cpu,
            errno: e,
        }
    }
}

/// Flags every per-CPU event of the program shares.
const PROGRAM_FLAGS: u64 = sys::ATTR_DISABLED
    | sys::ATTR_INHERIT
    | sys::ATTR_ENABLE_ON_EXEC
    | sys::ATTR_EXCLUDE_KERNEL
    | sys::ATTR_EXCLUDE_HV
    | sys::ATTR_SAMPLE_ID_ALL;

const TIMES: u64 = sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING;

fn dummy_attr(ring_bytes: usize) -> sys::perf_event_attr {
    sys::perf_event_attr {
        type_: sys::PERF_TYPE_SOFTWARE,
        size: sys::PERF_ATTR_SIZE_VER7,
        config: sys::PERF_COUNT_SW_DUMMY,
        sample_period: 1,
        sample_type: SAMPLE_TYPE,
        read_format: TIMES,
        flags: PROGRAM_FLAGS
            | sys::ATTR_MMAP
            | sys::ATTR_MMAP2
            | sys::ATTR_COMM
            | sys::ATTR_COMM_EXEC
            | sys::ATTR_TASK
            | sys::ATTR_WATERMARK,
        // Wake the reader when the ring is half full.
        wakeup_events: (ring_bytes / 2) as u32,
        ..Default::default()
    }
}

impl Sampler {
    /// Opens `plan`'s thread-scope events on every CPU for `pid` (not yet
    /// exec'd), sampling those in `sampled` every `period` events.
    pub(crate) fn open(
        plan: &Plan,
        pid: libc::pid_t,
        sampled: &BTreeSet<String>,
        period: u64,
        root: &Path,
    ) -> Result<Sampler, PerfError> {
        let online = online_cpus(root);
        let specs: Vec<&OpenSpec> = plan
            .opens
            .iter()
            .filter(|s| s.scope == Scope::Thread)
            .collect();
        raise_fd_limit(online.len() * (1 + specs.len()));
        let names: Vec<String> = specs
            .iter()
            .map(|s| s.event.clone())
            .filter(|e| sampled.contains(e))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut s = Sampler {
            rings: Vec::new(),
            events: Vec::new(),
            collector: Collector::new(names.clone()),
            period,
            scratch: Vec::new(),
        };
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let dummy = dummy_attr(RING_DATA_PAGES * page);
        for &cpu in &online {
            let fd = sys::perf_event_open(&dummy, pid, cpu as i32).map_err(|e| {
                let spec = OpenSpec {
                    event: "dummy (mappings, execs and forks)".into(),
                    pmu: "software".into(),
                    type_: dummy.type_,
                    raw: RawConfig {
                        config: dummy.config,
                        ..Default::default()
                    },
                    scope: Scope::Thread,
                    cpu: cpu as i32,
                    scale: None,
                    zero_when_not_run: false,
                    origin: "side band".into(),
                };
                open_error(&spec, cpu, e)
            })?;
            match Ring::map(fd, cpu) {
                Ok(r) => s.rings.push(r),
                Err(e) => {
                    // SAFETY: closing the descriptor just opened, once.
                    unsafe { libc::close(fd) };
                    return Err(e);
                }
            }
        }
        for spec in specs {
            let sample = sampled.contains(&spec.event);
            let attr = sys::perf_event_attr {
                type_: spec.type_,
                size: sys::PERF_ATTR_SIZE_VER7,
                config: spec.raw.config,
                config1: spec.raw.config1,
                config2: spec.raw.config2,
                sample_period: if sample { period } else { 0 },
                sample_type: if sample { SAMPLE_TYPE } else { 0 },
                read_format: TIMES,
                flags: PROGRAM_FLAGS,
                ..Default::default()
            };
            for &cpu in &cpus_of(root, &spec.pmu, &online) {
                let ring = s
                    .rings
                    .iter()
                    .position(|r| r.cpu == cpu)
                    .expect("a ring per online CPU");
                let fd = sys::perf_event_open(&attr, pid, cpu as i32)
                    .map_err(|e| open_error(spec, cpu, e))?;
                s.events.push(CpuEvent {
                    fd,
                    event: spec.event.clone(),
                    ring,
                    scale: spec.scale,
                });
                if sample {
                    let io_err = |what: &str| {
                        let what = format!("{what} ({} on CPU {cpu})", spec.event);
                        move |source| PerfError::Io { what, source }
                    };
                    sys::set_output(fd, s.rings[ring].fd)
                        .map_err(io_err("sending samples to the CPU's ring buffer"))?;
                    let id = sys::event_id(fd).map_err(io_err("reading a sampled event's id"))?;
                    let index = names
                        .iter()
                        .position(|n| *n == spec.event)
                        .expect("sampled");
                    s.collector.add_id(id, index);
                }
            }
        }
        Ok(s)
    }

    /// Reads every ring once.
    fn drain(&mut self) {
        for ring in &mut self.rings {
            self.scratch.clear();
            ring.read(&mut self.scratch);
            let collector = &mut self.collector;
            let bad = parse_records(&self.scratch, |r| collector.record(r));
            collector.add_malformed(bad);
        }
        self.collector.end_drain();
    }

    /// Waits for `pid` to end, reading the rings meanwhile; its wait status.
    pub(crate) fn wait(&mut self, pid: libc::pid_t) -> io::Result<i32> {
        let mut polls: Vec<libc::pollfd> = self
            .rings
            .iter()
            .map(|r| libc::pollfd {
                fd: r.fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        loop {
            // SAFETY: `polls` is a valid array of pollfd of the given length.
            let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, POLL_MS) };
            let hang_up_only = n > 0 && polls.iter().all(|p| p.revents & libc::POLLIN == 0);
            self.drain();
            let mut status = 0;
            // SAFETY: `status` is a valid out-pointer; `pid` is our child.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                self.drain();
                return Ok(status);
            }
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            if hang_up_only {
                // The program's tasks are exiting (POLLHUP): poll would not block.
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    /// Adds each event's per-CPU readings to `values` (see the module doc for the times).
    pub(crate) fn read_counts(&self, values: &mut CounterValues) -> io::Result<()> {
        let on_cpu: Vec<u64> = self
            .rings
            .iter()
            .map(|r| sys::read_counter(r.fd).map(|[_, _, running]| running))
            .collect::<io::Result<_>>()?;
        for e in &self.events {
            let [value, _, running] = sys::read_counter(e.fd)?;
            let enabled = on_cpu[e.ring];
            values.add(
                &e.event,
                Reading {
                    value,
                    time_enabled: enabled,
                    time_running: running,
                    zero_when_not_run: enabled == 0,
                },
            );
            if let Some(scale) = e.scale {
                values.scales.insert(e.event.clone(), scale);
            }
        }
        Ok(())
    }

    /// The samples per function (symbols are read now, while the files are there).
    pub(crate) fn finish(mut self) -> Profile {
        let collector = std::mem::take(&mut self.collector);
        collector.finish(self.period, &mut flopscope_symbols::Symbolizer::new())
    }
}
