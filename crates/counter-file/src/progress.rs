//! Waiting for the counted program, with a progress line on stderr.

use crate::orphans;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The process being waited for (0: none): where the CLI forwards SIGINT,
/// SIGTERM and SIGHUP (a batch system's end of job, Ctrl-C), so that the
/// program ends as it would alone and the counts so far are reported.
pub static WAITED: AtomicI32 = AtomicI32::new(0);

/// Clears [`WAITED`] when the wait ends, however it ends.
struct Waiting;

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITED.store(0, Ordering::SeqCst);
    }
}

/// Makes the child `cmd` starts die with the thread that starts it
/// (`PR_SET_PDEATHSIG` with SIGKILL): flopscope killed with SIGKILL, which
/// it cannot catch and forward, leaves no program running. The thread that
/// starts the child waits for it ([`wait`]), so outlives it otherwise.
/// And flopscope becomes the reaper of the processes the child leaves
/// behind ([`orphans::adopt`]), which [`wait`] waits for too.
pub fn tie_to_flopscope(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    orphans::adopt();
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure makes two system calls and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the request, which then never fires.
            if libc::getppid() != parent {
                libc::_exit(128 + libc::SIGKILL);
            }
            Ok(())
        })
    };
}

/// How the program ended, and the processes it left running that had to
/// be stopped.
#[derive(Debug)]
pub struct Waited {
    pub status: ExitStatus,
    /// From `started` to the main process's end (not the others').
    pub elapsed: Duration,
    /// The processes it left running (orphans::wait_all).
    pub orphans: orphans::Orphans,
}

/// Waits for `child`, then for the processes it left running, up to
/// `linger` ([`orphans::wait_all`]): every process of the run has ended,
/// and written its counts, when this returns. With `show`, after the
/// first second, rewrites one line on stderr every 100 ms with
/// `line(seconds since start)`, and clears it at the end.
pub fn wait(
    child: &mut Child,
    started: Instant,
    show: bool,
    linger: Duration,
    line: impl Fn(f64) -> String,
) -> std::io::Result<Waited> {
    let status = wait_main(child, started, show, line)?;
    let elapsed = started.elapsed();
    Ok(Waited {
        status,
        elapsed,
        orphans: orphans::wait_all(linger),
    })
}

fn wait_main(
    child: &mut Child,
    started: Instant,
    show: bool,
    line: impl Fn(f64) -> String,
) -> std::io::Result<ExitStatus> {
    WAITED.store(child.id() as i32, Ordering::SeqCst);
    let _waiting = Waiting;
    if !show {
        return child.wait();
    }
    let mut shown = false;
    loop {
        if let Some(status) = child.try_wait()? {
            if shown {
                eprint!("\r\x1b[2K");
            }
            return Ok(status);
        }
        std::thread::sleep(Duration::from_millis(100));
        let t = started.elapsed().as_secs_f64();
        if t > 1.0 {
            eprint!("\r{}", line(t));
            shown = true;
        }
    }
}
