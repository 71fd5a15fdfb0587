//! A run's temporary directory (counter files, region times, samples, the
//! kept standard input). A run removes its own when it ends, however it
//! ends, except when killed with SIGKILL, which it cannot see. So each
//! directory holds a `lock` file its run keeps locked (`flock`) while it
//! lives; the kernel drops the lock when the run's process dies. A new run
//! first removes the directories whose lock no process holds.

use anyhow::{Context, Result};
use std::fs::File;
use std::path::Path;

const PREFIX: &str = "flopscope-";
const LOCK: &str = "lock";

/// A run's temporary directory; removed on drop.
pub struct WorkDir {
    dir: tempfile::TempDir,
    /// Locked while the run lives (none where the file system has no locks).
    _lock: Option<File>,
}

impl WorkDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A new temporary directory in `root`, after removing those that runs
/// killed earlier left there.
pub fn create(root: &Path) -> Result<WorkDir> {
    remove_stale(root);
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir_in(root)
        .with_context(|| format!("creating a temporary directory in {}", root.display()))?;
    // Locked before it takes its name: another run that finds `lock` finds
    // it held (the lock belongs to the open file, whatever its name). Where
    // the file system cannot lock (some network and FUSE mounts), the run
    // goes on without: its directory is then only its own to remove.
    let new = dir.path().join("lock.new");
    let lock = File::create(&new).with_context(|| format!("creating {}", new.display()))?;
    let lock = match lock.lock() {
        Ok(()) => {
            std::fs::rename(&new, dir.path().join(LOCK))
                .with_context(|| format!("renaming {}", new.display()))?;
            Some(lock)
        }
        Err(_) => None,
    };
    Ok(WorkDir { dir, _lock: lock })
}

/// Removes the directories of `root` named like a run's whose `lock` no
/// process holds. A directory without one (another tool's, or one being
/// made) is left alone; so is anything that cannot be read or removed.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let Ok(lock) = File::open(e.path().join(LOCK)) else {
            continue;
        };
        if lock.try_lock().is_ok() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_removed_once_no_run_holds_its_lock() {
        let root = tempfile::tempdir().unwrap();
        let live = create(root.path()).unwrap();
        // Another tool's directory with our prefix, and one of a run that
        // died: its lock file, unlocked.
        let other = root.path().join("flopscope-cache");
        std::fs::create_dir(&other).unwrap();
        let dead = root.path().join("flopscope-dead");
        std::fs::create_dir(&dead).unwrap();
        File::create(dead.join(LOCK)).unwrap();
        let next = create(root.path()).unwrap();
        assert!(live.path().join(LOCK).exists(), "a live run's is kept");
        assert!(other.exists(), "a directory without a lock is kept");
        assert!(!dead.exists(), "a dead run's is removed");
        let (a, b) = (live.path().to_path_buf(), next.path().to_path_buf());
        drop(live);
        drop(next);
        assert!(!a.exists() && !b.exists(), "each run removes its own");
    }
}
