//! `PerfError`: every way the perf engine can fail, each message naming the cause and the fix.

use std::path::PathBuf;

/// The emulate engine works without counters; every "no counters" message points to it.
const EMULATE: &str =
    "`flopscope count --engine emulate -- CMD` counts exactly without hardware counters";

#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// The machine exposes no hardware counters (typically a VM without a virtual PMU).
    #[error(
        "no hardware performance counters: {cause}. Remedies: {EMULATE}; or run on bare metal, or in a VM \
         with a virtual PMU (QEMU/KVM: `-cpu host,pmu=on`; VMware: \"virtualize CPU performance counters\"; \
         in a cloud, a bare-metal instance type)"
    )]
    NoPmu { cause: String },

    /// `kernel.perf_event_paranoid` (or a missing capability) forbids opening counters.
    #[error(
        "the kernel refused to open hardware counters ({errno}): kernel.perf_event_paranoid is {level}. \
         Remedies: `sudo sysctl kernel.perf_event_paranoid=2` lets a user count their own programs \
         (DRAM bytes need `=0`, or CAP_PERFMON); or run as root or with CAP_PERFMON; or {EMULATE}",
        level = level.map_or_else(|| "unreadable".to_string(), |l| l.to_string())
    )]
    Paranoid {
        level: Option<i32>,
        errno: std::io::Error,
    },

    /// The CPU matches no event set.
    #[error(
        "no event set for this CPU ({cpu}). Known sets: {known}. If the CPU is a relative of one of them, \
         name it with `--arch NAME` (`flopscope events --arch NAME` shows what it uses); otherwise {EMULATE}",
        known = known.join(", ")
    )]
    UnknownCpu { cpu: String, known: Vec<String> },

    /// `--arch NAME` names no event set.
    #[error("unknown event set `{name}`. Known sets: {known}", known = known.join(", "))]
    UnknownArch { name: String, known: Vec<String> },

    /// The CPU is known but has no event that counts floating-point operations.
    #[error("{set} ({title}): {why}. Hardware counters cannot count FLOP here: {EMULATE}")]
    NoFlopEvents {
        set: String,
        title: String,
        why: String,
    },

    /// A sysfs file is missing or does not say what the event set needs.
    #[error("{}: {why}", path.display())]
    Sysfs { path: PathBuf, why: String },

    /// The event set's PMU is not on this machine.
    #[error(
        "event set {set} needs the PMU {wanted} but this kernel has {present}: the set does not fit this \
         machine; pick another with `--arch NAME` or use the emulate engine",
        wanted = wanted.join(" or "),
        present = if present.is_empty() { "none".to_string() } else { present.join(", ") }
    )]
    MissingPmu {
        set: String,
        wanted: Vec<String>,
        present: Vec<String>,
    },

    /// An event does not encode with the kernel's format for its PMU.
    #[error("event {event} on PMU {pmu}: {why}; the event set does not fit this kernel: try another `--arch`")]
    Encode {
        event: String,
        pmu: String,
        why: String,
    },

    /// perf_event_open refused one event.
    #[error(
        "cannot open {event} ({config}) on PMU {pmu}: {errno}. The CPU or kernel does not support this event: \
         check `flopscope events` against the CPU, try another `--arch`, or use the emulate engine"
    )]
    Open {
        event: String,
        pmu: String,
        config: String,
        errno: std::io::Error,
    },

    /// perf_event_open refused an event opened for sampling (`--sample-period`).
    #[error(
        "cannot sample {event} ({config}) on PMU {pmu}, CPU {cpu}: {errno}. Counting may still work: \
         run without --sample-period for the totals, or try another `--arch`"
    )]
    SampleOpen {
        event: String,
        pmu: String,
        config: String,
        cpu: u32,
        errno: std::io::Error,
    },

    /// A sampling ring buffer could not be mapped.
    #[error(
        "cannot map a {kib} KiB perf ring buffer for CPU {cpu}: {errno}. Unprivileged users may lock \
         kernel.perf_event_mlock_kb per CPU for perf buffers, then `ulimit -l`: raise one of them, or \
         run as root or with CAP_IPC_LOCK"
    )]
    RingBuffer {
        cpu: u32,
        kib: usize,
        errno: std::io::Error,
    },

    /// The measured program could not be started.
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },

    /// Any other system call failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },

    /// An embedded event table is malformed (a build defect: the tests parse every file).
    #[error("event table {file}: {why}")]
    Data { file: String, why: String },
}
