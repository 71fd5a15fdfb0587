//! `SdeError`: every way an import fails, each naming the input (and, for a
//! parse error, the line) and what was expected there.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SdeError {
    /// A file could not be read.
    #[error("{}: cannot read the file: {source}", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The text is not what SDE writes at `line` (1-based).
    #[error("{file}:{line}: expected {expected}, found {found}")]
    Parse {
        file: String,
        line: usize,
        expected: String,
        found: String,
    },

    /// The set of files given does not make one import (nothing given, a file
    /// given twice, a mask profile without its mix file).
    #[error("{file}: {message}")]
    Inputs { file: String, message: String },
}

impl SdeError {
    pub(crate) fn parse(
        file: &str,
        line: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> SdeError {
        SdeError::Parse {
            file: file.to_string(),
            line,
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The line number of a parse error.
    pub fn line(&self) -> Option<usize> {
        match self {
            SdeError::Parse { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// Quotes a piece of input for an error message, shortened so that a binary
/// file does not flood the terminal.
pub(crate) fn quote(text: &str) -> String {
    const MAX: usize = 60;
    let mut out: String = text
        .chars()
        .take(MAX)
        .flat_map(char::escape_default)
        .collect();
    if text.chars().nth(MAX).is_some() {
        out.push_str("...");
    }
    format!("`{out}`")
}
