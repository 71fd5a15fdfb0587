//! Where a command's text goes: a file, written atomically, or standard output.

use anyhow::{Context, Result};
use std::path::Path;

pub fn write_text(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(p) => {
            flopscope_model::write_atomic(p, text.as_bytes())?;
            eprintln!("flopscope: wrote {}", p.display());
        }
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
