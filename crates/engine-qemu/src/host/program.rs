//! Finding and checking the program to run, and naming how it ended.

use std::path::{Path, PathBuf};

/// Why a program cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("program `{0}` not found: {}", not_found_hint(.0))]
    NotFound(String),
    #[error("{0} is not executable: chmod +x it, or check the path")]
    NotExecutable(PathBuf),
    #[error("cannot read {0}: {1}")]
    Unreadable(PathBuf, std::io::Error),
    #[error("{0} is not an x86-64 Linux program ({1}): the emulate engine runs x86-64 ELF executables and scripts that start with #!")]
    NotX86_64(PathBuf, String),
    #[error("{0} is built with {1}, which the emulate engine cannot run: QEMU backs the sanitizer's shadow memory (terabytes of address space) until the machine runs out of memory. Count it with --engine native")]
    Sanitized(PathBuf, &'static str),
}

fn not_found_hint(name: &str) -> String {
    if name.contains('/') {
        "check the path".into()
    } else {
        format!("give a path (./{name}) or a command on PATH")
    }
}

/// The `LD_PRELOAD` value for a run with flopscope's libraries `ours` (in
/// order; `None`s skipped) loaded before the ones the user preloads; `None`
/// when flopscope preloads nothing (the user's value is left as it is).
pub fn preload_list<'a>(ours: impl IntoIterator<Item = Option<&'a Path>>) -> Option<String> {
    let ours: Vec<String> = ours
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    if ours.is_empty() {
        return None;
    }
    let theirs = std::env::var("LD_PRELOAD").ok().filter(|p| !p.is_empty());
    Some(ours.into_iter().chain(theirs).collect::<Vec<_>>().join(":"))
}

/// Resolves `name` the way a shell does: a path if it contains `/`, else the
/// first executable match on PATH.
pub fn resolve(name: &str) -> Result<PathBuf, ProgramError> {
    let check = |p: &Path| -> Result<PathBuf, ProgramError> {
        use std::os::unix::fs::PermissionsExt;
        let md = std::fs::metadata(p).map_err(|_| ProgramError::NotFound(name.to_string()))?;
        if !md.is_file() || md.permissions().mode() & 0o111 == 0 {
            return Err(ProgramError::NotExecutable(p.to_path_buf()));
        }
        Ok(p.to_path_buf())
    };
    if name.contains('/') {
        return check(Path::new(name));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return check(&candidate);
        }
    }
    Err(ProgramError::NotFound(name.to_string()))
}

/// The argument vector QEMU must be given for `argv`: ELF programs as they
/// are, `#!` scripts through their interpreter (QEMU runs ELF files only).
pub fn qemu_argv(argv: &[String]) -> Result<Vec<String>, ProgramError> {
    let exe = resolve(&argv[0])?;
    let head = read_head(&exe)?;
    if let Some((interp, arg)) = shebang(&head) {
        let mut out = qemu_argv(&[interp])?;
        out.extend(arg);
        out.push(exe.to_string_lossy().into_owned());
        out.extend(argv[1..].iter().cloned());
        return Ok(out);
    }
    check_elf_x86_64(&exe, &head)?;
    let mut out = vec![exe.to_string_lossy().into_owned()];
    out.extend(argv[1..].iter().cloned());
    Ok(out)
}

/// The sanitizer `exe` is built with, found by its run-time library's entry
/// point among the program's symbols (`__asan_init`, `__tsan_init`; linked
/// dynamically or statically); `None` for other programs and for files that
/// cannot be read as ELF. Only the symbol tables are read.
pub fn sanitizer(exe: &Path) -> Option<&'static str> {
    use object::{Object, ObjectSymbol};
    const KNOWN: [(&[u8], &str); 2] = [
        (b"__asan_init", "AddressSanitizer"),
        (b"__tsan_init", "ThreadSanitizer"),
    ];
    let cache = object::ReadCache::new(std::fs::File::open(exe).ok()?);
    let elf = object::File::parse(&cache).ok()?;
    let named = |s: object::Symbol<'_, '_, _>| {
        let name = s.name_bytes().ok()?;
        KNOWN
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, what)| *what)
    };
    elf.dynamic_symbols()
        .find_map(named)
        .or_else(|| elf.symbols().find_map(named))
}

/// The interpreter a `#!` line at the start of `head` names, and the one
/// argument the kernel passes it (the rest of the line, if any). `None`
/// without such a line.
pub fn shebang(head: &[u8]) -> Option<(String, Option<String>)> {
    let rest = head.strip_prefix(b"#!")?;
    let line_end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
    let line = String::from_utf8_lossy(&rest[..line_end]);
    let mut parts = line.trim().splitn(2, char::is_whitespace);
    let interp = parts.next().unwrap_or_default().to_string();
    let arg = parts
        .next()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    Some((interp, arg))
}

/// The first 256 bytes of `p`.
pub fn read_head(p: &Path) -> Result<Vec<u8>, ProgramError> {
    use std::io::Read;
    let mut f = std::fs::File::open(p).map_err(|e| ProgramError::Unreadable(p.to_path_buf(), e))?;
    let mut buf = vec![0u8; 256];
    let n = f
        .read(&mut buf)
        .map_err(|e| ProgramError::Unreadable(p.to_path_buf(), e))?;
    buf.truncate(n);
    Ok(buf)
}

/// Checks that `head` (from [`read_head`]) starts a 64-bit x86-64 ELF file.
pub fn check_elf_x86_64(p: &Path, head: &[u8]) -> Result<(), ProgramError> {
    let bad = |why: &str| Err(ProgramError::NotX86_64(p.to_path_buf(), why.to_string()));
    if head.len() < 20 || &head[..4] != b"\x7fELF" {
        return bad("no ELF header");
    }
    if head[4] != 2 {
        return bad("32-bit ELF");
    }
    let machine = u16::from_le_bytes([head[18], head[19]]);
    if machine != 62 {
        return bad(&format!("ELF machine {machine}, not x86-64 (62)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shebang_names_its_interpreter_and_one_argument() {
        let some = |i: &str, a: Option<&str>| Some((i.to_string(), a.map(str::to_string)));
        assert_eq!(shebang(b"#!/bin/sh\necho"), some("/bin/sh", None));
        assert_eq!(
            shebang(b"#! /usr/bin/env -S sh -e \n"),
            some("/usr/bin/env", Some("-S sh -e"))
        );
        assert_eq!(
            shebang(b"#!/usr/bin/python3"),
            some("/usr/bin/python3", None)
        );
        assert_eq!(shebang(b"\x7fELF"), None);
    }

    #[test]
    fn resolves_commands_on_path_and_rejects_missing_ones() {
        assert!(resolve("sh").unwrap().is_absolute());
        assert!(matches!(
            resolve("./no-such-program-xyz"),
            Err(ProgramError::NotFound(_))
        ));
        assert!(matches!(
            resolve("no-such-program-xyz"),
            Err(ProgramError::NotFound(_))
        ));
    }

    #[test]
    fn scripts_run_through_their_interpreter() {
        let dir = std::env::temp_dir().join(format!("fs-prog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("run.sh");
        std::fs::write(&script, "#!/bin/sh -e\necho hi\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let argv = qemu_argv(&[script.to_string_lossy().into_owned(), "x".into()]).unwrap();
        assert_eq!(
            argv[1..],
            [
                "-e".to_string(),
                script.to_string_lossy().into_owned(),
                "x".into()
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_elf_and_non_executable_files_are_named() {
        let dir = std::env::temp_dir().join(format!("fs-prog2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("data");
        std::fs::write(&f, "hello").unwrap();
        assert!(matches!(
            qemu_argv(&[f.to_string_lossy().into_owned()]),
            Err(ProgramError::NotExecutable(_))
        ));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = qemu_argv(&[f.to_string_lossy().into_owned()]).unwrap_err();
        assert!(e.to_string().contains("not an x86-64"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
