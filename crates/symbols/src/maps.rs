//! `/proc/PID/maps` lines -> [`Mapping`]s.
//!
//! The format is proc(5)'s: `start-end perms offset dev inode   pathname`, the
//! pathname being the rest of the line (it may hold spaces). No crate parses
//! it on its own (procfs does, but brings a whole /proc model for one line
//! format), so it is parsed here.

use std::path::PathBuf;

/// One file-backed mapping, as a line of /proc/PID/maps gives it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// First runtime address of the mapping.
    pub start: u64,
    /// One past its last runtime address.
    pub end: u64,
    /// Offset in the file of the byte mapped at `start`.
    pub file_offset: u64,
    /// Mapped with execute permission (always true for what [`parse_maps`]
    /// returns; a mapping built by hand says here what it is).
    pub executable: bool,
    /// The mapped file, without the " (deleted)" suffix the kernel adds once
    /// the file is gone.
    pub path: PathBuf,
}

impl Mapping {
    /// Whether runtime address `addr` lies in this mapping.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }
}

/// The executable file-backed mappings of a /proc/PID/maps text, in its order.
///
/// Anonymous mappings and pseudo-files (`[vdso]`, `[heap]`, `anon_inode:...`)
/// are skipped, as are lines that do not parse.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(parse_line)
        .filter(|m| m.executable)
        .collect()
}

fn parse_line(line: &str) -> Option<Mapping> {
    let mut rest = line;
    let mut field = || {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (f, r) = rest.split_at(end);
        rest = r;
        f
    };
    let range = field();
    let perms = field();
    let offset = field();
    let _dev = field();
    let _inode = field();
    let path = rest.trim_start();
    // Only real files: skips "", "[vdso]", "[heap]", "anon_inode:[...]".
    if !path.starts_with('/') {
        return None;
    }
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let (start, end) = range.split_once('-')?;
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        file_offset: u64::from_str_radix(offset, 16).ok()?,
        executable: perms.as_bytes().get(2) == Some(&b'x'),
        path: PathBuf::from(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_executable_file_mappings_only() {
        let text = "\
55d0c8a00000-55d0c8a01000 r--p 00000000 fe:01 1234   /tmp/my prog
55d0c8a01000-55d0c8a02000 r-xp 00001000 fe:01 1234   /tmp/my prog
55d0c9000000-55d0c9021000 rw-p 00000000 00:00 0      [heap]
7f1e2a200000-7f1e2a228000 r-xp 00028000 fe:01 5678   /usr/lib/x86_64-linux-gnu/libc.so.6
7f1e2a400000-7f1e2a401000 r-xp 00000000 00:00 0
7f1e2a500000-7f1e2a502000 r-xp 00002000 fe:01 9999   /tmp/libgone.so (deleted)
7ffd1b5f0000-7ffd1b5f2000 r-xp 00000000 00:00 0      [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]
garbage line
";
        let maps = parse_maps(text);
        assert_eq!(
            maps,
            vec![
                Mapping {
                    start: 0x55d0c8a01000,
                    end: 0x55d0c8a02000,
                    file_offset: 0x1000,
                    executable: true,
                    path: "/tmp/my prog".into(),
                },
                Mapping {
                    start: 0x7f1e2a200000,
                    end: 0x7f1e2a228000,
                    file_offset: 0x28000,
                    executable: true,
                    path: "/usr/lib/x86_64-linux-gnu/libc.so.6".into(),
                },
                Mapping {
                    start: 0x7f1e2a500000,
                    end: 0x7f1e2a502000,
                    file_offset: 0x2000,
                    executable: true,
                    path: "/tmp/libgone.so".into(),
                },
            ]
        );
        assert!(maps[0].contains(0x55d0c8a01000));
        assert!(!maps[0].contains(0x55d0c8a02000));
    }
}
