//! Whether to show progress: only on a terminal.

use std::io::IsTerminal;

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}
