//! Waiting for the counted program, with a progress line on stderr.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Waits for `child`. With `show`, after the first second, rewrites one
/// line on stderr every 100 ms with `line(seconds since start)`, and clears
/// it at the end.
pub fn wait(
    child: &mut Child,
    started: Instant,
    show: bool,
    line: impl Fn(f64) -> String,
) -> std::io::Result<ExitStatus> {
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
