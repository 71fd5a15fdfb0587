//! Keeping machine-readable output apart from the program's.
//!
//! `flopscope count --format json` without `-o` writes the report on
//! standard output, where the counted program writes too. Before anything
//! runs, flopscope keeps a private copy of its standard output for the
//! report and points descriptor 1 at standard error, so that the program
//! (and every process it starts, whatever the engine) writes its output on
//! stderr: the report is then the only thing on stdout.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;

/// Standard output, set aside for the report.
pub struct ReportOut(File);

impl ReportOut {
    /// Sets stdout aside and sends descriptor 1 to stderr from now on.
    pub fn take() -> Result<ReportOut> {
        // SAFETY: plain descriptor calls; the duplicate is ours alone.
        unsafe {
            let saved = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
            if saved < 0 {
                return Err(std::io::Error::last_os_error())
                    .context("setting standard output aside");
            }
            if libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error())
                    .context("sending the program's output to standard error");
            }
            Ok(ReportOut(File::from_raw_fd(saved)))
        }
    }

    pub fn write(mut self, text: &str) -> Result<()> {
        self.0
            .write_all(text.as_bytes())
            .and_then(|_| self.0.flush())
            .context("writing the report on standard output")
    }
}
