//! Region counts under flopscope's perf engine, as in include/flopscope.h:
//! the hardware counters the engine opens see the whole program, so the
//! markers read the same events at region boundaries. The engine lists them
//! in `FLOPSCOPE_PERF_EVENTS` (`type:config[:config1]` in hex,
//! comma-separated); each thread opens them for itself on first use (user
//! space only, not inherited), and at exit one line per region is appended
//! to the file `FLOPSCOPE_PERF_REGIONS` names:
//!
//! `pid \t entries \t v0,v1,... \t name` (per event, the sum over threads
//! of END - BEGIN). A thread that cannot open the events counts nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

pub const EVENTS_VAR: &str = "FLOPSCOPE_PERF_EVENTS";
pub const REGIONS_VAR: &str = "FLOPSCOPE_PERF_REGIONS";

/// Some thread opened the events: without it, no region line is written
/// (zeros would read as regions that did nothing).
static OK: AtomicBool = AtomicBool::new(false);
/// Per region: entries and counter sums.
type Totals = HashMap<Vec<u8>, (u64, Vec<u64>)>;
static TOTALS: Mutex<Option<Totals>> = Mutex::new(None);
/// Open regions: name and start values (`None` when nested or unreadable).
type Open = Vec<(Vec<u8>, Option<Vec<u64>>)>;

/// This thread's counters: the process that opened them (a forked child
/// must reopen) and the descriptors, `None` when unavailable.
struct Counters {
    pid: u32,
    fds: Option<Vec<i32>>,
}

impl Drop for Counters {
    fn drop(&mut self) {
        for fd in self.fds.iter().flatten() {
            // SAFETY: closing descriptors this thread opened, once.
            unsafe { libc::close(*fd) };
        }
    }
}

thread_local! {
    static COUNTERS: RefCell<Option<Counters>> = const { RefCell::new(None) };
    static OPEN: RefCell<Open> = const { RefCell::new(Vec::new()) };
}

/// Whether this run asks for region counts.
pub fn requested() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os(EVENTS_VAR).is_some() && std::env::var_os(REGIONS_VAR).is_some()
    })
}

/// `perf_event_attr` (128 bytes, PERF_ATTR_SIZE_VER7) for `type:config[:config1]`.
fn attr(spec: &str) -> Option<[u64; 16]> {
    let mut parts = spec.split(':');
    let type_ = u32::from_str_radix(parts.next()?, 16).ok()?;
    let config = u64::from_str_radix(parts.next()?, 16).ok()?;
    let config1 = match parts.next() {
        Some(c) => u64::from_str_radix(c, 16).ok()?,
        None => 0,
    };
    let mut a = [0u64; 16];
    a[0] = u64::from(type_) | (128u64 << 32); // type, size
    a[1] = config;
    a[5] = (1 << 5) | (1 << 6); // exclude_kernel, exclude_hv; enabled, not inherited
    a[7] = config1;
    Some(a)
}

fn open_all() -> Option<Vec<i32>> {
    let list = std::env::var(EVENTS_VAR).ok()?;
    let mut fds = Counters {
        pid: 0,
        fds: Some(Vec::new()),
    };
    for spec in list.split(',') {
        let a = attr(spec)?;
        // SAFETY: `a` is a valid perf_event_attr of the size it states.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                a.as_ptr(),
                0,
                -1,
                -1,
                libc::c_ulong::from(8u8), // PERF_FLAG_FD_CLOEXEC
            )
        };
        if fd < 0 {
            return None; // `fds` closes what was opened
        }
        fds.fds.as_mut()?.push(fd as i32);
    }
    OK.store(true, Ordering::Relaxed);
    fds.fds.take()
}

/// This thread's counter values, opening them on first use.
fn read() -> Option<Vec<u64>> {
    COUNTERS.with(|c| {
        let mut c = c.borrow_mut();
        let pid = std::process::id();
        if c.as_ref().is_none_or(|c| c.pid != pid) {
            *c = Some(Counters {
                pid,
                fds: open_all(),
            });
        }
        let fds = c.as_ref()?.fds.as_ref()?;
        fds.iter()
            .map(|fd| {
                let mut v = 0u64;
                // SAFETY: reads 8 bytes into `v`.
                let n = unsafe { libc::read(*fd, (&mut v as *mut u64).cast(), 8) };
                (n == 8).then_some(v)
            })
            .collect()
    })
}

/// A region begun again while open counts once, by its outermost instance.
pub fn on_begin(k: &[u8]) {
    if let Ok(mut g) = TOTALS.lock() {
        g.get_or_insert_with(HashMap::new)
            .entry(k.to_vec())
            .or_default()
            .0 += 1;
    }
    let nested = OPEN.with(|o| o.borrow().iter().any(|(n, _)| n == k));
    // Read last, so that the marker's own work stays outside the region.
    let start = if nested { None } else { read() };
    OPEN.with(|o| o.borrow_mut().push((k.to_vec(), start)));
}

pub fn on_end(k: &[u8]) {
    let end = read();
    let start = OPEN.with(|o| {
        let mut o = o.borrow_mut();
        let pos = o.iter().rposition(|(n, _)| n == k)?;
        let start = o[pos].1.take();
        o.truncate(pos);
        start
    });
    if let (Some(start), Some(end), Ok(mut g)) = (start, end, TOTALS.lock()) {
        let t = g
            .get_or_insert_with(HashMap::new)
            .entry(k.to_vec())
            .or_default();
        t.1.resize(end.len(), 0);
        for ((s, a), b) in t.1.iter_mut().zip(&start).zip(&end) {
            *s = s.wrapping_add(b.wrapping_sub(*a));
        }
    }
}

pub extern "C" fn dump() {
    let Some(path) = std::env::var_os(REGIONS_VAR) else {
        return;
    };
    let n = std::env::var(EVENTS_VAR).map_or(0, |l| l.split(',').count());
    if !OK.load(Ordering::Relaxed) {
        return;
    }
    let Ok(guard) = TOTALS.lock() else { return };
    let Some(map) = guard.as_ref() else { return };
    let mut text = String::new();
    for (name, (entries, sums)) in map {
        let mut v = sums.clone();
        v.resize(n, 0);
        let v: Vec<String> = v.iter().map(u64::to_string).collect();
        text.push_str(&format!(
            "{}\t{entries}\t{}\t{}\n",
            std::process::id(),
            v.join(","),
            String::from_utf8_lossy(name)
        ));
    }
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}
