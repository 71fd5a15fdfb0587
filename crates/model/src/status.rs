//! How a measured program ended, from the operating system's wait status.

use crate::report::ExitStatus;

/// Linux signal numbers and names (the generic numbering x86-64 and arm64 share).
const SIGNALS: [(i32, &str); 18] = [
    (1, "SIGHUP"),
    (2, "SIGINT"),
    (3, "SIGQUIT"),
    (4, "SIGILL"),
    (5, "SIGTRAP"),
    (6, "SIGABRT"),
    (7, "SIGBUS"),
    (8, "SIGFPE"),
    (9, "SIGKILL"),
    (10, "SIGUSR1"),
    (11, "SIGSEGV"),
    (12, "SIGUSR2"),
    (13, "SIGPIPE"),
    (14, "SIGALRM"),
    (15, "SIGTERM"),
    (24, "SIGXCPU"),
    (25, "SIGXFSZ"),
    (31, "SIGSYS"),
];

/// `SIGSEGV` for 11; `SIG<n>` for signals without a name here.
pub fn signal_name(sig: i32) -> String {
    SIGNALS
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| format!("SIG{sig}"), |(_, name)| name.to_string())
}

/// 11 for `SIGSEGV` (and for `SIG11`).
pub fn signal_number(name: &str) -> Option<i32> {
    SIGNALS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(s, _)| *s)
        .or_else(|| name.strip_prefix("SIG")?.parse().ok())
}

impl ExitStatus {
    /// How a child process ended, as `std` reports it.
    pub fn from_std(status: std::process::ExitStatus) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => ExitStatus::Code(c),
            (None, Some(s)) => ExitStatus::Signal(signal_name(s)),
            _ => ExitStatus::Unknown,
        }
    }

    /// The exit code a shell would show: the code, or 128 + the signal; `None`
    /// when unknown.
    pub fn shell_code(&self) -> Option<i32> {
        match self {
            ExitStatus::Code(c) => Some(*c),
            ExitStatus::Signal(name) => signal_number(name).map(|n| 128 + n),
            ExitStatus::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_round_trip() {
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(40), "SIG40");
        assert_eq!(signal_number("SIGILL"), Some(4));
        assert_eq!(signal_number("SIG40"), Some(40));
        assert_eq!(signal_number("nonsense"), None);
        assert_eq!(ExitStatus::Signal("SIGSEGV".into()).shell_code(), Some(139));
        assert_eq!(ExitStatus::Code(3).shell_code(), Some(3));
        assert_eq!(ExitStatus::Unknown.shell_code(), None);
    }

    #[test]
    fn wait_statuses_become_exit_statuses() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            ExitStatus::from_std(std::process::ExitStatus::from_raw(3 << 8)),
            ExitStatus::Code(3)
        );
        assert_eq!(
            ExitStatus::from_std(std::process::ExitStatus::from_raw(11)),
            ExitStatus::Signal("SIGSEGV".into())
        );
    }
}
