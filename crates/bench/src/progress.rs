//! Progress lines while benchmarks run (on standard error, when it is a terminal).

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Told about each measurement as it starts.
pub trait Progress: Send {
    /// `total` more measurements are coming.
    fn add(&mut self, total: usize);
    /// One starts: `what` describes it.
    fn step(&mut self, what: &str);
    /// All done: clear the line.
    fn finish(&mut self);
}

/// No output.
pub struct Silent;

impl Progress for Silent {
    fn add(&mut self, _: usize) {}
    fn step(&mut self, _: &str) {}
    fn finish(&mut self) {}
}

/// `[ 3/18  2.1 s] flops: peak_avx512_fp64 on 2 threads`, rewritten in place.
pub struct Stderr {
    total: usize,
    done: usize,
    start: Instant,
}

impl Stderr {
    pub fn new() -> Stderr {
        Stderr {
            total: 0,
            done: 0,
            start: Instant::now(),
        }
    }

    /// A progress line on standard error if it is a terminal, else nothing.
    pub fn if_terminal() -> Box<dyn Progress> {
        if std::io::stderr().is_terminal() {
            Box::new(Stderr::new())
        } else {
            Box::new(Silent)
        }
    }
}

impl Default for Stderr {
    fn default() -> Stderr {
        Stderr::new()
    }
}

impl Progress for Stderr {
    fn add(&mut self, total: usize) {
        self.total += total;
    }

    fn step(&mut self, what: &str) {
        self.done += 1;
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[K[{:>3}/{:<3} {:5.1} s] {what}",
            self.done,
            self.total,
            self.start.elapsed().as_secs_f64()
        );
        let _ = e.flush();
    }

    fn finish(&mut self) {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
}
