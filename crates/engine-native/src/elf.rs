//! What kind of program a file is, from its first bytes.

use std::io::Read;
use std::path::Path;

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// An x86-64 ELF executable with a program interpreter (PT_INTERP).
    Dynamic,
    /// An x86-64 ELF executable without one.
    Static,
    /// A `#!` script (its interpreter is taken over).
    Script,
}

pub fn kind(path: &Path) -> Result<Kind, String> {
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut head = vec![0u8; 4096];
    let n = f.read(&mut head).map_err(|e| e.to_string())?;
    head.truncate(n);
    if head.starts_with(b"#!") {
        return Ok(Kind::Script);
    }
    if n < 64 || &head[0..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if head[4] != 2 || u16::from_le_bytes([head[18], head[19]]) != 62 {
        return Err("not a 64-bit x86-64 ELF file".into());
    }
    let phoff = u64::from_le_bytes(head[32..40].try_into().expect("8 bytes")) as usize;
    let phentsize = u16::from_le_bytes([head[54], head[55]]) as usize;
    let phnum = u16::from_le_bytes([head[56], head[57]]) as usize;
    let mut ph = vec![0u8; phentsize * phnum];
    use std::io::{Seek, SeekFrom};
    f.seek(SeekFrom::Start(phoff as u64))
        .map_err(|e| e.to_string())?;
    f.read_exact(&mut ph).map_err(|e| e.to_string())?;
    let interp = ph
        .chunks(phentsize.max(1))
        .any(|p| p.len() >= 4 && u32::from_le_bytes([p[0], p[1], p[2], p[3]]) == 3);
    Ok(if interp { Kind::Dynamic } else { Kind::Static })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_is_dynamic_and_text_is_refused() {
        assert_eq!(kind(Path::new("/bin/sh")), Ok(Kind::Dynamic));
        let dir = std::env::temp_dir().join(format!("fs-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("t");
        std::fs::write(&t, b"hello").unwrap();
        assert!(kind(&t).is_err());
        std::fs::write(&t, b"#!/bin/sh\necho").unwrap();
        assert_eq!(kind(&t), Ok(Kind::Script));
    }
}
