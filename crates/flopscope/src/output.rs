//! Where a command's text goes: a file, written atomically, or standard
//! output; a file's directory checked before the program runs.

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

/// Fails, before the program runs, if the report could not be written to
/// `path`: its directory must exist and be writable.
pub fn check_writable(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "cannot write the report to {}: the directory {} does not exist (create it, or give another -o); the program was not run",
            path.display(),
            dir.display()
        );
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .context("a path with a NUL byte")?;
    // SAFETY: access() only reads the NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        anyhow::bail!(
            "cannot write the report to {}: the directory {} is not writable (give another -o); the program was not run",
            path.display(),
            dir.display()
        );
    }
    if path.is_dir() {
        anyhow::bail!(
            "cannot write the report to {}: it is a directory (give a file name); the program was not run",
            path.display()
        );
    }
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
