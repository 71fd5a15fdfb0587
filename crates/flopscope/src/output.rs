//! Where a command's text goes: a file, written atomically, or standard output.

use anyhow::{Context, Result};
use std::path::Path;

/// Writes what `fill` writes to file `path` atomically, and says so.
pub fn write_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    flopscope_model::write_atomic_with(path, fill)?;
    eprintln!("flopscope: wrote {}", path.display());
    Ok(())
}

pub fn write_text(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(p) => write_file_with(p, |w| w.write_all(text.as_bytes()))?,
        None => {
            // Not print!, which panics on a closed pipe: the caller keeps
            // the report instead.
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing on standard output")?;
        }
    }
    Ok(())
}
