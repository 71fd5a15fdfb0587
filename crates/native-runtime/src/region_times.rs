//! Wall time per marked region, taken by the dispatcher when a thread passes
//! a marker. The program's own marker code cannot time the counted run: it
//! runs from the cache, counted, and its clock reads would add instructions
//! and bytes to the very regions they time.
//!
//! At each flush the process's times replace `<dir>/region-times.<pid>.<t>`
//! (`t`: the take-over's clock, one file per process image), one line per
//! region in the format the markers' timed runs write (see
//! include/flopscope.h): `pid \t entries \t max-thread-ns \t sum-ns \t name`.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// The directory the times go to (set by the CLI side, crates/engine-native).
pub const ENV: &str = "FLOPSCOPE_NATIVE_REGION_TIMES";

#[derive(Default)]
struct Clock {
    /// Nesting depth of the region on this thread (the clock runs above 0).
    depth: u32,
    since_ns: u64,
    total_ns: u64,
}

#[derive(Default)]
struct Region {
    name: Vec<u8>,
    entries: u64,
    /// Per thread index.
    clocks: BTreeMap<u32, Clock>,
}

static REGIONS: Mutex<BTreeMap<u32, Region>> = Mutex::new(BTreeMap::new());

/// The lock held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    crate::fork::try_guard(&REGIONS)
}

fn regions() -> std::sync::MutexGuard<'static, BTreeMap<u32, Region>> {
    REGIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Thread `thread` entered region `id` named `name`.
pub fn begin(id: u32, name: &[u8], thread: u32) {
    let now = crate::stats::now();
    let mut g = regions();
    let r = g.entry(id).or_default();
    if r.name.is_empty() {
        r.name = name.to_vec();
    }
    let c = r.clocks.entry(thread).or_default();
    c.depth += 1;
    if c.depth == 1 {
        c.since_ns = now;
        r.entries += 1;
    }
}

/// Thread `thread` left region `id` (an end without a begin is ignored, as
/// the counts ignore it).
pub fn end(id: u32, thread: u32) {
    let now = crate::stats::now();
    let mut g = regions();
    let Some(c) = g.get_mut(&id).and_then(|r| r.clocks.get_mut(&thread)) else {
        return;
    };
    if c.depth > 0 {
        c.depth -= 1;
        if c.depth == 0 {
            c.total_ns += now.saturating_sub(c.since_ns);
        }
    }
}

/// A forked child times its own work: totals restart, open regions from now.
pub fn after_fork() {
    let now = crate::stats::now();
    for r in regions().values_mut() {
        r.entries = 0;
        for c in r.clocks.values_mut() {
            c.total_ns = 0;
            c.since_ns = now;
        }
    }
}

/// The times so far (a region still open counts up to now), as lines.
fn lines(pid: u64) -> String {
    let now = crate::stats::now();
    let mut text = String::new();
    for r in regions().values() {
        let per_thread = r.clocks.values().map(|c| {
            c.total_ns
                + if c.depth > 0 {
                    now.saturating_sub(c.since_ns)
                } else {
                    0
                }
        });
        let (max, sum) = per_thread.fold((0, 0), |(m, s), t| (m.max(t), s + t));
        text.push_str(&format!(
            "{pid}\t{}\t{max}\t{sum}\t{}\n",
            r.entries,
            String::from_utf8_lossy(&r.name)
        ));
    }
    text
}

/// Where the times files go ([`ENV`]), read once: at the take-over, before
/// the program can change its environment.
pub fn dir() -> Option<&'static std::ffi::OsString> {
    static DIR: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| std::env::var_os(ENV)).as_ref()
}

/// Replaces this process image's times file (when the CLI asked for times
/// and a region was entered).
pub fn write() {
    let Some(dir) = dir() else {
        return;
    };
    if regions().is_empty() {
        return;
    }
    let pid = crate::sys::getpid();
    let name = format!("region-times.{pid}.{}", crate::stats::started_at());
    let dir = std::path::Path::new(&dir);
    let (path, tmp) = (dir.join(&name), dir.join(format!(".{name}.tmp")));
    if std::fs::write(&tmp, lines(pid)).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}
