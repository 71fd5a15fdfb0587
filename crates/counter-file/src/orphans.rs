//! Processes the counted program leaves running when it ends.
//!
//! flopscope waits for the program's main process, but a process it
//! started may still run then: Erlang's `erl_child_setup` ends a moment
//! after the runtime that started it, a shell script's `cmd &` whenever it
//! is done. Such a process writes its counts when it ends: a report read
//! before would miss them (or take some of them, read at another moment,
//! into its rows and not its totals), and the process would outlive
//! flopscope. So:
//! - flopscope makes itself the reaper of the program's orphans
//!   ([`adopt`], `PR_SET_CHILD_SUBREAPER`): a process whose parent ended
//!   becomes flopscope's child, not init's;
//! - after the main process ended, [`wait_all`] waits until no child is
//!   left: up to `linger`, then stops those still running with SIGTERM
//!   (their counts so far are written, as when a batch system ends a job),
//!   and SIGKILL a second later. Those it stopped are named in the report,
//!   which is marked incomplete.

use crate::layout::ProcessEnd;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long processes may run on after the main one ended, by default.
pub const LINGER: Duration = Duration::from_secs(5);
/// Between SIGTERM and SIGKILL.
const KILL_AFTER: Duration = Duration::from_secs(1);

/// Set (from a signal handler) when flopscope was asked to stop: processes
/// still running are stopped at once, without waiting out `linger`.
pub static HURRY: AtomicBool = AtomicBool::new(false);

/// A process flopscope had to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub pid: i32,
    pub command: String,
    /// The last signal it was sent.
    pub signal: &'static str,
}

/// Makes flopscope the reaper of the processes its children leave behind
/// (before it starts the program).
pub fn adopt() {
    // SAFETY: prctl with integer arguments; it only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// What [`wait_all`] saw: the processes it stopped, and how each process
/// it reaped ended (pid, end), in order: a process whose own engine could
/// not see its end (QEMU's, killed by a signal) gets it from here.
#[derive(Debug, Default)]
pub struct Orphans {
    pub stopped: Vec<Stopped>,
    pub ended: Vec<(u64, ProcessEnd)>,
}

/// Waits until flopscope has no child process left (the program's main
/// process reaped already), stopping those still running after `linger`.
/// Every child of this process counts, whoever started it: flopscope runs
/// one program a process. (Tests that make several runs in one process
/// take turns: a run would reap another's children.)
pub fn wait_all(linger: Duration) -> Orphans {
    let mut term_at = Instant::now() + linger;
    let mut ended = Vec::new();
    let mut stopped: Vec<Stopped> = Vec::new();
    let mut sent: HashSet<(i32, i32)> = HashSet::new();
    let mut pause = Duration::from_millis(1);
    loop {
        if !reap_ended(&mut ended) {
            return Orphans { stopped, ended };
        }
        let now = Instant::now();
        if HURRY.load(Ordering::SeqCst) {
            term_at = term_at.min(now);
        }
        if now >= term_at {
            let (sig, name) = if now >= term_at + KILL_AFTER {
                (libc::SIGKILL, "SIGKILL")
            } else {
                (libc::SIGTERM, "SIGTERM")
            };
            for (pid, command) in children() {
                if !sent.insert((pid, sig)) {
                    continue;
                }
                // SAFETY: a signal to a child of this process.
                unsafe { libc::kill(pid, sig) };
                match stopped.iter_mut().find(|s| s.pid == pid) {
                    Some(s) => s.signal = name,
                    None => stopped.push(Stopped {
                        pid,
                        command,
                        signal: name,
                    }),
                }
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Reaps every child that ended, noting how; false when no child is left.
fn reap_ended(ended: &mut Vec<(u64, ProcessEnd)>) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status of the child it reaps.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r > 0 {
            let end = if libc::WIFSIGNALED(status) {
                ProcessEnd::Signal(libc::WTERMSIG(status))
            } else {
                ProcessEnd::Exited(libc::WEXITSTATUS(status))
            };
            ended.push((r as u64, end));
            continue;
        }
        if r == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return false;
    }
}

/// This process's children (pid, command line), from /proc.
fn children() -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.flatten()
        .filter_map(|p| {
            let stat = p.stat().ok()?;
            (stat.ppid == me).then(|| {
                let command = p
                    .cmdline()
                    .ok()
                    .filter(|c| !c.is_empty())
                    .map(|c| c.join(" "))
                    .unwrap_or(stat.comm);
                (p.pid, command)
            })
        })
        .collect()
}

/// The report's warning about the processes flopscope stopped, if any;
/// `counted`: a count's report, which has their counts up to there.
pub fn warning(stopped: &[Stopped], linger: Duration, counted: bool) -> Option<String> {
    if stopped.is_empty() {
        return None;
    }
    let list: Vec<String> = stopped
        .iter()
        .map(|s| format!("{} `{}` ({})", s.pid, s.command, s.signal))
        .collect();
    Some(format!(
        "{} process{} the program started still ran {:.1} s after it ended and {} stopped, so that none outlives flopscope: {} (--linger SECONDS gives them longer){}",
        stopped.len(),
        if stopped.len() == 1 { "" } else { "es" },
        linger.as_secs_f64(),
        if stopped.len() == 1 { "was" } else { "were" },
        list.join(", "),
        if counted {
            "; their counts up to there are included"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_each_process_and_its_signal() {
        let one = Stopped {
            pid: 12,
            command: "sleep 100".into(),
            signal: "SIGTERM",
        };
        assert_eq!(warning(&[], LINGER, true), None);
        assert_eq!(
            warning(std::slice::from_ref(&one), LINGER, false).unwrap(),
            "1 process the program started still ran 5.0 s after it ended and was stopped, so that none outlives flopscope: 12 `sleep 100` (SIGTERM) (--linger SECONDS gives them longer)"
        );
        let two = Stopped {
            pid: 13,
            command: "daemon".into(),
            signal: "SIGKILL",
        };
        assert_eq!(
            warning(&[one, two], Duration::from_millis(500), true).unwrap(),
            "2 processes the program started still ran 0.5 s after it ended and were stopped, so that none outlives flopscope: 12 `sleep 100` (SIGTERM), 13 `daemon` (SIGKILL) (--linger SECONDS gives them longer); their counts up to there are included"
        );
    }
}
