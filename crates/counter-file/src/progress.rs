//! Waiting for the counted program, with a progress line on stderr.

use std::process::{Child, ExitStatus};
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

/// Waits for `child`. With `show`, after the first second, rewrites one
/// line on stderr every 100 ms with `line(seconds since start)`, and clears
/// it at the end.
pub fn wait(
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
