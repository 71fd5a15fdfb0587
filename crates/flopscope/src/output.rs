//! Where a command's text goes: a file, written atomically, or standard output.

use anyhow::Result;
use std::path::Path;

pub fn write_text(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(p) => {
            flopscope_model::write_atomic(p, text.as_bytes())?;
            eprintln!("flopscope: wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
