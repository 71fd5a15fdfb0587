//! Is there a PMU, and may we use it? `check_pmu` tells the three failures apart:
//! no counters at all (a VM without a virtual PMU), a kernel policy that forbids
//! them (`perf_event_paranoid`), or nothing wrong.

use crate::error::PerfError;
use crate::sys;
use crate::sysfs::{devices_dir, pmu_names};
use std::io;
use std::path::Path;

/// What `check_pmu` found on a machine whose counters work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmuStatus {
    /// `kernel.perf_event_paranoid`, when readable.
    pub paranoid: Option<i32>,
    /// CPU PMUs sysfs lists (`cpu`, `cpu_core`, `cpu_atom`, `armv8_pmuv3_0`, ...).
    pub core_pmus: Vec<String>,
}

/// `kernel.perf_event_paranoid`.
pub fn perf_event_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Opens (and closes) a user-space cycle counter on this process: the kernel's own
/// answer to "are there hardware counters for me". The errno is the diagnosis.
pub fn probe_hardware_counter() -> io::Result<()> {
    let attr = sys::perf_event_attr {
        type_: sys::PERF_TYPE_HARDWARE,
        size: sys::PERF_ATTR_SIZE_VER7,
        config: sys::PERF_COUNT_HW_CPU_CYCLES,
        flags: sys::ATTR_DISABLED | sys::ATTR_EXCLUDE_KERNEL | sys::ATTR_EXCLUDE_HV,
        ..Default::default()
    };
    let fd = sys::perf_event_open(&attr, 0, -1)?;
    // SAFETY: `fd` was just returned by perf_event_open and is closed once.
    unsafe { libc::close(fd) };
    Ok(())
}

/// Whether an errno from perf_event_open means "no such hardware".
pub fn is_no_pmu_errno(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV)
    )
}

/// Whether an errno from perf_event_open means "not allowed".
pub fn is_permission_errno(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

fn is_core_pmu(name: &str) -> bool {
    matches!(name, "cpu" | "cpu_core" | "cpu_atom")
        || name.starts_with("armv8_")
        || name.starts_with("armv9_")
}

/// The CPU PMUs under `<root>/bus/event_source/devices` (those with a `format/` directory).
pub fn core_pmus(root: &Path) -> Vec<String> {
    pmu_names(root)
        .into_iter()
        .filter(|n| is_core_pmu(n) && devices_dir(root).join(n).join("format").is_dir())
        .collect()
}

/// The kernel log's line about the PMU, if the log is readable.
pub fn kernel_pmu_message() -> Option<String> {
    // SYSLOG_ACTION_SIZE_BUFFER (10), then SYSLOG_ACTION_READ_ALL (3): see syslog(2).
    // SAFETY: klogctl with a null buffer and length 0 only returns the buffer size.
    let size = unsafe { libc::klogctl(10, std::ptr::null_mut(), 0) };
    if size <= 0 {
        return None;
    }
    let mut buf = vec![0u8; size as usize];
    // SAFETY: `buf` has `size` writable bytes and the kernel writes at most that many.
    let n = unsafe { libc::klogctl(3, buf.as_mut_ptr().cast(), size) };
    if n <= 0 {
        return None;
    }
    let text = String::from_utf8_lossy(&buf[..n as usize]);
    text.lines()
        .rev()
        .find(|l| {
            l.contains("PMU not available")
                || (l.contains("Performance Events") && l.contains("PMU"))
        })
        .map(|l| {
            l.split_once("] ")
                .map_or(l, |(_, rest)| rest)
                .trim()
                .to_string()
        })
}

fn under_hypervisor() -> bool {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| {
            t.lines()
                .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
        })
        .unwrap_or(false)
}

fn no_pmu_cause(root: &Path, probe: Option<&io::Error>) -> String {
    let mut parts = Vec::new();
    if let Some(e) = probe {
        parts.push(format!("opening a cycle counter failed ({e})"));
    }
    let dir = devices_dir(root);
    let present = pmu_names(root);
    if core_pmus(root).is_empty() {
        parts.push(format!(
            "{} lists no CPU PMU (only {})",
            dir.display(),
            if present.is_empty() {
                "nothing".to_string()
            } else {
                present.join(", ")
            }
        ));
    }
    if let Some(msg) = kernel_pmu_message() {
        parts.push(format!("the kernel log says \"{msg}\""));
    }
    if under_hypervisor() {
        parts.push("this is a virtual machine (the CPU flag `hypervisor` is set) whose hypervisor exposes no PMU".into());
    }
    parts.join("; ")
}

/// Checks that hardware counters exist and may be opened; `root` is the sysfs root (`/sys`).
pub fn check_pmu(root: &Path) -> Result<PmuStatus, PerfError> {
    let paranoid = perf_event_paranoid();
    match probe_hardware_counter() {
        Ok(()) => {}
        Err(e) if is_no_pmu_errno(&e) => {
            return Err(PerfError::NoPmu {
                cause: no_pmu_cause(root, Some(&e)),
            })
        }
        Err(e) if is_permission_errno(&e) => {
            return Err(PerfError::Paranoid {
                level: paranoid,
                errno: e,
            })
        }
        Err(e) => {
            return Err(PerfError::Io {
                what: "perf_event_open of a cycle counter".into(),
                source: e,
            })
        }
    }
    let core = core_pmus(root);
    if core.is_empty() {
        return Err(PerfError::NoPmu {
            cause: no_pmu_cause(root, None),
        });
    }
    Ok(PmuStatus {
        paranoid,
        core_pmus: core,
    })
}
