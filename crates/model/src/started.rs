//! Work handed to a scoped thread, or done on the calling thread when no
//! thread can be started. Under an address-space limit (`ulimit -v`) or a
//! limit on processes (`ulimit -u`), `std::thread::Scope::spawn` panics,
//! and the report of a run that had ended was lost (flopscope exited 101).
//! The report and its rows are made with several threads for speed only:
//! with fewer, they are the same.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};

/// The result of [`start`]: running on a thread, or already done.
pub enum Started<'scope, T> {
    Thread(ScopedJoinHandle<'scope, T>),
    Done(T),
}

impl<T> Started<'_, T> {
    /// The work's result; `Err` if its thread panicked.
    pub fn join(self) -> std::thread::Result<T> {
        match self {
            Started::Thread(h) => h.join(),
            Started::Done(v) => Ok(v),
        }
    }
}

/// Runs `work` on a new thread of scope `s`, or here if none can be
/// started. (`std::thread::Builder::spawn_scoped` drops the closure it was
/// given when it fails, so the work waits in a slot both sides can reach.)
pub fn start<'scope, 'env, T, F>(s: &'scope Scope<'scope, 'env>, work: F) -> Started<'scope, T>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    let slot = Arc::new(Mutex::new(Some(work)));
    let theirs = Arc::clone(&slot);
    let take = |s: &Mutex<Option<F>>| s.lock().unwrap_or_else(PoisonError::into_inner).take();
    let spawned = std::thread::Builder::new()
        .spawn_scoped(s, move || take(&theirs).expect("the work is taken once")());
    match spawned {
        Ok(h) => Started::Thread(h),
        Err(_) => Started::Done(take(&slot).expect("the work was not run")()),
    }
}

/// Starts `work` on a new thread of scope `s` as a helper, if one can be
/// started: for work that the calling thread also does (workers taking the
/// next item of a shared list), so that nothing is lost without it.
pub fn help<'scope, 'env, F>(s: &'scope Scope<'scope, 'env>, work: F)
where
    F: FnOnce() + Send + 'scope,
{
    // Without a thread, the calling thread's own share takes every item.
    let _ = std::thread::Builder::new().spawn_scoped(s, work);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_started_gives_its_result_on_a_thread_or_here() {
        let n = 21;
        let r = std::thread::scope(|s| start(s, || n * 2).join().unwrap());
        assert_eq!(r, 42);
        // Where no thread can start: this test binary again, running only
        // the test below, with its address space limited to what it maps
        // plus 1 MiB (a thread's stack takes 2 MiB).
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "started::tests::without_threads", "--ignored"])
            .args(["--test-threads=1", "--nocapture"])
            .env(INNER, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "{text}");
    }

    const INNER: &str = "FLOPSCOPE_STARTED_TEST_INNER";

    #[test]
    #[ignore = "run by work_started_gives_its_result_on_a_thread_or_here"]
    fn without_threads() {
        if std::env::var_os(INNER).is_none() {
            return;
        }
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmSize:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let limit = (kib + 1024) * 1024;
        let lim = libc::rlimit {
            rlim_cur: limit,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: a plain system call on this process's limit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
        assert!(
            std::thread::Builder::new().spawn(|| ()).is_err(),
            "a thread started"
        );
        let (mut helped, n) = (0, 21);
        let r = std::thread::scope(|s| {
            help(s, || panic!("no helper can start"));
            helped += 1;
            match start(s, || n * 2) {
                Started::Done(v) => v,
                Started::Thread(_) => panic!("a thread started"),
            }
        });
        assert_eq!((r, helped), (42, 1));
    }
}
