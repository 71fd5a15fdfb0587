//! Modules loaded ahead, while the counted program runs, on one thread of
//! idle priority: the C library (its detached DWARF, libc6-dbg's, is 34 MB
//! inflated and took 40 ms to load in every symbolizer that met it, after
//! the run, where the user waits) and the program's own file, then the
//! files the program's processes map as they run ([`add`]). Each
//! [`Symbolizer`](crate::Symbolizer) that needs one of them takes a loaded
//! copy of its own (a module keeps its answers and DWARF caches, not
//! shareable between threads), so [`start`] loads as many copies as
//! symbolizers may run at once.
//!
//! [`stop`], when the program has ended: nothing more is begun; a load
//! under way goes on at normal priority where the system lets the process
//! raise it again (else a symbolizer loads its own rather than wait). A
//! symbolizer that finds its module queued, not begun, loads it itself.
//! Before a loaded module is handed out, its file is checked unchanged
//! (device, inode, size and time of change, as at the start of the load).

use crate::module::Module;
use crate::LoadError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

type Loaded = Result<Module, LoadError>;

enum State {
    Queued,
    Loading,
    Ready(Box<Loaded>, Option<Stamp>),
    /// Handed out, or given up (queued when the program ended).
    Gone,
}

struct Item {
    path: PathBuf,
    state: State,
}

struct Pool {
    debug_roots: Vec<PathBuf>,
    items: Vec<Item>,
    stopped: bool,
    /// The loader runs at normal priority again: worth waiting for.
    raised: bool,
    /// The loader thread's id, to raise its priority.
    tid: libc::pid_t,
}

/// A pool of modules loaded ahead: the process's one is [`AHEAD`]'s.
pub struct Ahead {
    pool: Mutex<Option<Pool>>,
    changed: Condvar,
    /// Modules handed out so far.
    taken: AtomicUsize,
}

/// The pool every [`Symbolizer`](crate::Symbolizer) takes from.
pub static AHEAD: Ahead = Ahead::new();

/// [`Ahead::start`] on [`AHEAD`].
pub fn start(paths: &[PathBuf], copies: usize, debug_roots: Vec<PathBuf>) {
    AHEAD.start(paths, copies, debug_roots);
}

/// [`Ahead::add`] on [`AHEAD`].
pub fn add(paths: &[PathBuf], copies: usize) {
    AHEAD.add(paths, copies);
}

/// [`Ahead::stop`] on [`AHEAD`].
pub fn stop() {
    AHEAD.stop();
}

/// What identifies a file's contents without reading them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    ctime: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        size: m.size(),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

impl Ahead {
    pub const fn new() -> Ahead {
        Ahead {
            pool: Mutex::new(None),
            changed: Condvar::new(),
            taken: AtomicUsize::new(0),
        }
    }

    fn pool(&self) -> MutexGuard<'_, Option<Pool>> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Modules handed out to symbolizers so far.
    pub fn taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }

    /// Begins loading `copies` copies of each of `paths` (debug files found
    /// under `debug_roots`), the first copy of every path before any second
    /// one, on a thread of idle priority (it takes only a core nothing else
    /// wants). Once a process; later calls do nothing.
    pub fn start(&'static self, paths: &[PathBuf], copies: usize, debug_roots: Vec<PathBuf>) {
        let mut guard = self.pool();
        if guard.is_some() || paths.is_empty() {
            return;
        }
        let items = (0..copies)
            .flat_map(|_| paths.iter())
            .map(|p| Item {
                path: p.clone(),
                state: State::Queued,
            })
            .collect();
        *guard = Some(Pool {
            debug_roots,
            items,
            stopped: false,
            raised: false,
            tid: 0,
        });
        drop(guard);
        let spawned = std::thread::Builder::new()
            .name("flopscope-preload".into())
            .spawn(|| self.load_all());
        if spawned.is_err() {
            // No thread: every symbolizer loads its own, as without a pool.
            *self.pool() = None;
        }
    }

    /// Queues `copies` copies of each of `paths` not queued yet (modules
    /// the program mapped since [`Ahead::start`]), after those queued. Does
    /// nothing before `start` or after [`stop`].
    pub fn add(&self, paths: &[PathBuf], copies: usize) {
        let mut guard = self.pool();
        let Some(p) = guard.as_mut().filter(|p| !p.stopped) else {
            return;
        };
        let mut added = false;
        for path in paths {
            if p.items.iter().any(|it| it.path == *path) {
                continue;
            }
            for _ in 0..copies {
                p.items.push(Item {
                    path: path.clone(),
                    state: State::Queued,
                });
            }
            added = true;
        }
        drop(guard);
        if added {
            self.changed.notify_all();
        }
    }

    /// The loader: each queued item in turn, waiting for more (added) while
    /// there are none, until [`stop`].
    fn load_all(&self) {
        // SAFETY: plain system calls on this thread (tid 0: the caller).
        unsafe {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
        }
        let roots = {
            let mut guard = self.pool();
            let Some(p) = guard.as_mut() else { return };
            // SAFETY: gettid has no preconditions.
            p.tid = unsafe { libc::gettid() };
            p.debug_roots.clone()
        };
        loop {
            let (i, path) = {
                let mut guard = self.pool();
                loop {
                    let Some(p) = guard.as_mut().filter(|p| !p.stopped) else {
                        return;
                    };
                    if let Some(i) = p
                        .items
                        .iter()
                        .position(|it| matches!(it.state, State::Queued))
                    {
                        p.items[i].state = State::Loading;
                        break (i, p.items[i].path.clone());
                    }
                    guard = self.changed.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
            };
            let before = stamp(&path);
            // A file the parsers choke on must not leave a symbolizer
            // waiting for it: the item is given up (its taker loads it).
            let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Module::load(&path, &roots)
            }));
            if let Some(p) = self.pool().as_mut() {
                p.items[i].state = match loaded {
                    Ok(module) => State::Ready(Box::new(module), before),
                    Err(_) => State::Gone,
                };
            }
            self.changed.notify_all();
        }
    }

    /// The program has ended: nothing more is begun, and the load under way,
    /// if any, goes on at normal priority (if the process may raise it).
    pub fn stop(&self) {
        let mut guard = self.pool();
        let Some(p) = guard.as_mut() else { return };
        p.stopped = true;
        for it in &mut p.items {
            if matches!(it.state, State::Queued) {
                it.state = State::Gone;
            }
        }
        // The loader, if waiting for more, ends.
        self.changed.notify_all();
        if p.tid != 0 {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: a thread of this process; the call only reads `param`.
            p.raised = unsafe { libc::sched_setscheduler(p.tid, libc::SCHED_OTHER, &param) } == 0;
        }
    }

    /// A copy of `path`'s module loaded ahead with the same debug roots, if
    /// one is loaded, or under way at normal priority after [`stop`] (waited
    /// for). `None`: the caller loads it.
    pub(crate) fn take(&self, path: &Path, debug_roots: &[PathBuf]) -> Option<Loaded> {
        let mut guard = self.pool();
        loop {
            let p = guard.as_mut().filter(|p| p.debug_roots == debug_roots)?;
            let mine = |it: &Item| it.path.as_os_str() == path.as_os_str();
            if let Some(it) = p
                .items
                .iter_mut()
                .find(|it| mine(it) && matches!(it.state, State::Ready(..)))
            {
                let State::Ready(module, before) = std::mem::replace(&mut it.state, State::Gone)
                else {
                    unreachable!("matched as ready")
                };
                drop(guard);
                // A file changed since its load is loaded again, by the caller.
                let same = before.is_some() && before == stamp(path);
                if same {
                    self.taken.fetch_add(1, Ordering::Relaxed);
                }
                return same.then_some(*module);
            }
            let loading = p
                .items
                .iter()
                .any(|it| mine(it) && matches!(it.state, State::Loading));
            if loading && p.raised {
                guard = self.changed.wait(guard).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            // Queued, not begun: the caller's own load is no later.
            if let Some(it) = p
                .items
                .iter_mut()
                .find(|it| mine(it) && matches!(it.state, State::Queued))
            {
                it.state = State::Gone;
            }
            return None;
        }
    }
}

impl Default for Ahead {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSection};

    /// Waits until the loader has nothing queued or under way.
    fn settle(ahead: &Ahead) {
        let mut guard = ahead.pool();
        while guard.as_ref().is_some_and(|p| {
            p.items
                .iter()
                .any(|it| matches!(it.state, State::Queued | State::Loading))
        }) {
            guard = ahead.changed.wait(guard).unwrap();
        }
    }

    fn leaked() -> &'static Ahead {
        Box::leak(Box::new(Ahead::new()))
    }

    fn roots() -> Vec<PathBuf> {
        crate::default_debug_roots()
    }

    #[test]
    fn each_copy_loaded_ahead_is_handed_out_once_and_answers_as_a_fresh_load() {
        let exe = std::env::current_exe().unwrap();
        let ahead = leaked();
        ahead.start(std::slice::from_ref(&exe), 2, roots());
        settle(ahead);
        ahead.stop();
        let mut first = ahead.take(&exe, &roots()).expect("a copy").unwrap();
        let mut second = ahead.take(&exe, &roots()).expect("another copy").unwrap();
        assert!(ahead.take(&exe, &roots()).is_none());
        assert!(ahead.take(&exe, &[PathBuf::from("/elsewhere")]).is_none());
        assert_eq!(ahead.taken(), 2);
        let mut fresh = Module::load(&exe, &roots()).unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        let text = object::File::parse(&*bytes)
            .unwrap()
            .section_by_name(".text")
            .map(|s| s.address())
            .unwrap();
        for vaddr in (0..64).map(|k| text + k * 4099) {
            let want = fresh.resolve_uncached(vaddr);
            for m in [&mut first, &mut second] {
                let got = m.resolve_uncached(vaddr);
                assert_eq!(got.symbol.name, want.symbol.name);
                assert_eq!(got.symbol.start, want.symbol.start);
                assert_eq!(got.frames, want.frames);
            }
        }
    }

    #[test]
    fn a_file_changed_after_its_load_is_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("program");
        std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
        let ahead = leaked();
        ahead.start(std::slice::from_ref(&copy), 1, roots());
        settle(ahead);
        // Replaced (as a build replaces its output), not rewritten in place:
        // the loaded copy maps the old file.
        let new = dir.path().join("program.new");
        std::fs::copy(&copy, &new).unwrap();
        std::fs::rename(&new, &copy).unwrap();
        ahead.stop();
        assert!(ahead.take(&copy, &roots()).is_none());
        assert_eq!(ahead.taken(), 0);
    }

    #[test]
    fn modules_added_while_the_program_runs_are_loaded_once_each() {
        let exe = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mapped = dir.path().join("mapped-later");
        std::fs::copy(&exe, &mapped).unwrap();
        let ahead = leaked();
        ahead.start(std::slice::from_ref(&exe), 1, roots());
        settle(ahead);
        // The loader, idle once its queue is done, takes what comes later;
        // a path already queued is not queued again.
        ahead.add(&[mapped.clone(), exe.clone()], 2);
        ahead.add(std::slice::from_ref(&mapped), 2);
        settle(ahead);
        ahead.stop();
        let late = dir.path().join("after-the-end");
        std::fs::copy(&exe, &late).unwrap();
        ahead.add(std::slice::from_ref(&late), 1);
        assert!(ahead.take(&mapped, &roots()).is_some());
        assert!(ahead.take(&mapped, &roots()).is_some());
        assert!(ahead.take(&mapped, &roots()).is_none());
        assert!(ahead.take(&exe, &roots()).is_some());
        assert!(ahead.take(&exe, &roots()).is_none());
        assert!(ahead.take(&late, &roots()).is_none());
        assert_eq!(ahead.taken(), 3);
    }

    #[test]
    fn after_the_program_ends_nothing_queued_is_loaded() {
        let exe = std::env::current_exe().unwrap();
        let ahead = leaked();
        ahead.start(std::slice::from_ref(&exe), 3, roots());
        ahead.stop();
        settle(ahead);
        // At most the copy under way when it stopped was loaded.
        let handed = (0..3)
            .filter(|_| ahead.take(&exe, &roots()).is_some())
            .count();
        assert!(handed <= 1, "{handed} copies loaded after the stop");
    }
}
