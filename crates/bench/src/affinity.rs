//! Which CPUs the benchmark threads run on, and pinning them there.

use std::collections::BTreeSet;

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
            == 0;
    if !ok {
        return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|c| unsafe { libc::CPU_ISSET(*c, &set) })
        .collect()
}

fn core_of(cpu: usize) -> Option<(i64, i64)> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{f}"))
            .ok()?
            .trim()
            .parse::<i64>()
            .ok()
    };
    Some((read("physical_package_id")?, read("core_id")?))
}

/// `n` CPUs to pin `n` threads to: one per physical core first (the FMA
/// units and the L1/L2 belong to the core), then the SMT siblings.
pub fn pick_cpus(n: usize) -> Vec<usize> {
    let allowed = allowed_cpus();
    let mut seen = BTreeSet::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for c in allowed {
        match core_of(c) {
            Some(k) if !seen.insert(k) => rest.push(c),
            _ => first.push(c),
        }
    }
    first.extend(rest);
    first.truncate(n.max(1));
    first
}

/// Physical cores among the allowed CPUs.
pub fn allowed_cores() -> usize {
    let allowed = allowed_cpus();
    let cores: BTreeSet<_> = allowed.iter().filter_map(|c| core_of(*c)).collect();
    if cores.is_empty() {
        allowed.len().max(1)
    } else {
        cores.len()
    }
}

/// Pins the calling thread to `cpu`. Returns false where the kernel refuses.
pub fn pin_current_thread(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}
