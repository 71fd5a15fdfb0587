//! What the attribution can load while the program runs: the modules
//! nearly every process maps (the C library and the dynamic loader, as
//! this process maps them: the same files the program gets) and the
//! program's own file, then every file with code that the program's
//! processes map while they run (seen in `/proc/PID/maps` of this
//! process's descendants, looked at every [`WATCH_EVERY`]), a copy for
//! each worker that may meet them (`flopscope_symbols::preload`).

use crate::parallel::MAX_WORKERS;
use flopscope_symbols::{default_debug_roots, parse_maps, preload};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the watcher looks at the processes' mappings.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// Set when the program has ended: the watcher stops.
static ENDED: AtomicBool = AtomicBool::new(false);

/// Begins loading, on an idle-priority thread, the modules the attribution
/// of `program` (an ELF file; `None`: unknown) will most likely need, and
/// with `watch` those the program's processes map as they run (processes
/// that run the program's own code, as the native engine's do; an
/// emulator's would show its own libraries): one copy each for one rank
/// of a parallel job (many ranks share a node and its memory; a copy of
/// the C library with its DWARF holds some 35 MB).
pub fn load_ahead(program: Option<&Path>, rank: bool, watch: bool) {
    let mut paths: Vec<PathBuf> = program.map(Path::to_path_buf).into_iter().collect();
    let own = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    for m in parse_maps(&own) {
        let name = m.path.file_name().map(|n| n.to_string_lossy().into_owned());
        let shared = name.is_some_and(|n| n.starts_with("libc.so") || n.starts_with("ld-linux"));
        if shared && m.path.is_absolute() && !paths.contains(&m.path) {
            paths.push(m.path);
        }
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let copies = if rank { 1 } else { workers };
    preload::start(&paths, copies, default_debug_roots());
    if watch {
        let seen: HashSet<PathBuf> = paths.into_iter().collect();
        // No thread: the modules are loaded after the run, as without it.
        let _ = std::thread::Builder::new()
            .name("flopscope-watch".into())
            .spawn(move || watch_maps(seen, copies));
    }
}

/// The program has ended: nothing more is loaded ahead.
pub fn program_ended() {
    ENDED.store(true, Ordering::Relaxed);
    preload::stop();
}

/// Until the program ends: the files with code this process's descendants
/// map, not seen before, queued to be loaded ahead.
fn watch_maps(mut seen: HashSet<PathBuf>, copies: usize) {
    // SAFETY: a plain system call on this thread.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
    while !ENDED.load(Ordering::Relaxed) {
        std::thread::sleep(WATCH_EVERY);
        let mut new = Vec::new();
        for pid in descendants(std::process::id()) {
            let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
                continue;
            };
            for m in parse_maps(&maps) {
                // A path seen before costs no look-up in the file system.
                if m.path.is_absolute() && !seen.contains(&m.path) && m.path.is_file() {
                    seen.insert(m.path.clone());
                    new.push(m.path);
                }
            }
        }
        if !new.is_empty() && !ENDED.load(Ordering::Relaxed) {
            preload::add(&new, copies);
        }
    }
}

/// The processes descended from `pid` (through every thread's `children`
/// list; none where the kernel has no such list).
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                out.push(c);
                next.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::descendants;

    #[test]
    fn a_child_and_its_child_are_descendants() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().expect("piped")),
            &mut line,
        )
        .expect("the grandchild's pid");
        let grandchild: u32 = line.trim().parse().expect("a pid");
        let found = descendants(std::process::id());
        std::process::Command::new("kill")
            .arg(grandchild.to_string())
            .status()
            .expect("kill runs");
        child.wait().expect("sh ends");
        assert!(found.contains(&child.id()), "{found:?}");
        assert!(found.contains(&grandchild), "{found:?}");
    }
}
