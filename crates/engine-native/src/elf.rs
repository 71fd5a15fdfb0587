//! What kind of program a file is: the native engine takes dynamically
//! linked programs over through their loader (a PT_INTERP header), and
//! loads statically linked ones itself, in its host executable.

use flopscope_engine_qemu::host::program::{check_elf_x86_64, read_head, ProgramError};
use std::io::{Read, Seek, SeekFrom};
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

pub fn kind(path: &Path) -> Result<Kind, ProgramError> {
    let head = read_head(path)?;
    if head.starts_with(b"#!") {
        return Ok(Kind::Script);
    }
    check_elf_x86_64(path, &head)?;
    let unreadable = |e| ProgramError::Unreadable(path.to_path_buf(), e);
    let short = || unreadable(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
    let field = |at: usize, n: usize| head.get(at..at + n).ok_or_else(short);
    let phoff = u64::from_le_bytes(field(32, 8)?.try_into().expect("8 bytes"));
    let phentsize = u16::from_le_bytes(field(54, 2)?.try_into().expect("2 bytes")) as usize;
    let phnum = u16::from_le_bytes(field(56, 2)?.try_into().expect("2 bytes")) as usize;
    let mut ph = vec![0u8; phentsize * phnum];
    let mut f = std::fs::File::open(path).map_err(unreadable)?;
    f.seek(SeekFrom::Start(phoff)).map_err(unreadable)?;
    f.read_exact(&mut ph).map_err(unreadable)?;
    const PT_INTERP: u32 = 3;
    let interp = ph
        .chunks(phentsize.max(1))
        .any(|p| p.len() >= 4 && u32::from_le_bytes([p[0], p[1], p[2], p[3]]) == PT_INTERP);
    Ok(if interp { Kind::Dynamic } else { Kind::Static })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_is_dynamic_and_text_is_refused() {
        assert_eq!(kind(Path::new("/bin/sh")).unwrap(), Kind::Dynamic);
        let dir = std::env::temp_dir().join(format!("fs-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("t");
        std::fs::write(&t, b"hello").unwrap();
        assert!(matches!(kind(&t), Err(ProgramError::NotX86_64(..))));
        std::fs::write(&t, b"#!/bin/sh\necho").unwrap();
        assert_eq!(kind(&t).unwrap(), Kind::Script);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
