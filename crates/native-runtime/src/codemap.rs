//! Which addresses hold readable code: the program's mappings, from
//! /proc/self/maps, read again when a block starts outside the known ones
//! (code loaded since). Blocks are decoded in place, never past a mapping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub lo: u64,
    pub hi: u64,
    pub writable: bool,
    pub exec: bool,
    /// The main thread's stack (`[stack]`).
    pub stack: bool,
}

static MAPS: Mutex<Vec<Mapping>> = Mutex::new(Vec::new());
/// The shared mappings of files, read with [`MAPS`]: memory another
/// mapping may show too, at another address (written_code.rs).
static VIEWS: Mutex<Vec<View>> = Mutex::new(Vec::new());
/// Code was translated from a shared file mapping: only then do views
/// mapped or made writable later need a look ([`views_onto`]).
static SHARED_CODE: AtomicBool = AtomicBool::new(false);

/// A shared mapping of a file (a memfd's too): JIT compilers that keep
/// code never writable and executable at once map one such file twice,
/// and write the code through the writable view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub lo: u64,
    pub hi: u64,
    /// Where `lo` is in the file.
    pub offset: u64,
    /// The file: its device and inode numbers as /proc/self/maps gives them.
    pub file: (u64, u64),
    pub writable: bool,
    pub exec: bool,
}

impl View {
    /// Where in the file address `a` of this view is.
    fn file_offset(&self, a: u64) -> u64 {
        self.offset + (a - self.lo)
    }
    /// The address of file offset `off` in this view, if it shows it.
    fn address_of(&self, off: u64) -> Option<u64> {
        (self.offset..self.offset + (self.hi - self.lo))
            .contains(&off)
            .then(|| self.lo + (off - self.offset))
    }
}

/// The shared file mappings of a /proc/PID/maps text.
pub fn parse_views(text: &str) -> Vec<View> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [range, perms, offset, dev, inode, ..] = f[..] else {
            continue;
        };
        let p = perms.as_bytes();
        if p.len() < 4 || p[3] != b's' || inode == "0" {
            continue;
        }
        let (Some((lo, hi)), Ok(offset), Some((major, minor)), Ok(inode)) = (
            hex_pair(range, '-'),
            u64::from_str_radix(offset, 16),
            hex_pair(dev, ':'),
            inode.parse::<u64>(),
        ) else {
            continue;
        };
        out.push(View {
            lo,
            hi,
            offset,
            file: ((major << 32) | minor, inode),
            writable: p[1] == b'w',
            exec: p[2] == b'x',
        });
    }
    out
}

/// Two hexadecimal numbers joined by `sep` (a range, a device number).
fn hex_pair(t: &str, sep: char) -> Option<(u64, u64)> {
    let (a, b) = t.split_once(sep)?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// The writable views showing what page `p` (of a shared file mapping)
/// holds, other than `p`'s own: (the page's address there, that view's
/// protection).
pub fn writable_aliases(p: u64) -> Vec<(u64, i32)> {
    let views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(out) = aliases_in(&views, p) else {
        return Vec::new();
    };
    SHARED_CODE.store(true, Ordering::Relaxed);
    out
}

/// [`writable_aliases`] among `views`; None when `p` is in none of them.
fn aliases_in(views: &[View], p: u64) -> Option<Vec<(u64, i32)>> {
    let v = views.iter().find(|v| v.lo <= p && p < v.hi)?;
    let off = v.file_offset(p);
    Some(
        views
            .iter()
            .filter(|w| w.writable && w.file == v.file && !(w.lo <= p && p < w.hi))
            .filter_map(|w| Some((w.address_of(off)?, prot_of(w))))
            .collect(),
    )
}

/// For each page of `lo..hi` in a writable shared view: the pages of the
/// other views showing the same part of the file ((page, what it shows
/// at), its protection). The mappings are read again first: the view may
/// be new. Nothing to look for until code ran from a shared mapping.
pub fn views_onto(lo: u64, hi: u64) -> Vec<(u64, u64, i32)> {
    if !SHARED_CODE.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let mut maps = MAPS.lock().unwrap_or_else(|e| e.into_inner());
    reload(&mut maps);
    drop(maps);
    let views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for w in views
        .iter()
        .filter(|w| w.writable && w.lo < hi && lo < w.hi)
    {
        let mut q = w.lo.max(lo);
        while q < w.hi.min(hi) {
            let off = w.file_offset(q);
            for v in views.iter().filter(|v| v.file == w.file && v.lo != w.lo) {
                if let Some(pv) = v.address_of(off) {
                    out.push((q, pv, prot_of(w)));
                }
            }
            q += 4096;
        }
    }
    out
}

/// Whether `addr` lies in a shared file mapping (whose code another view
/// may change), as the mappings were last read.
pub fn in_shared_view(addr: u64) -> bool {
    let views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    views.iter().any(|v| v.lo <= addr && addr < v.hi)
}

fn prot_of(v: &View) -> i32 {
    let mut prot = libc::PROT_READ;
    if v.writable {
        prot |= libc::PROT_WRITE;
    }
    if v.exec {
        prot |= libc::PROT_EXEC;
    }
    prot
}
/// Every /proc/self/maps text read, in order (attribution names the code
/// of each block after the mappings in force when it was translated).
static TEXTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The mappings' locks held, if free now (a fork's, see `fork`).
pub(crate) fn hold() -> Option<impl Sized> {
    use crate::fork::try_guard;
    Some((try_guard(&MAPS)?, try_guard(&VIEWS)?, try_guard(&TEXTS)?))
}

/// The number of mappings snapshots read so far.
pub fn snapshot_count() -> usize {
    TEXTS.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// This process's /proc/self/maps, read now.
fn read_maps() -> Option<String> {
    let mut text = Vec::new();
    // SAFETY: open/read/close of a procfs file into our own buffer.
    unsafe {
        let fd = libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let mut buf = [0u8; 8192];
        loop {
            let n = libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
            if n <= 0 {
                break;
            }
            text.extend_from_slice(&buf[..n as usize]);
        }
        libc::close(fd);
    }
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// Whether `a` and `b` lie in one mapping of the kernel's, read now (not
/// [`mapping_of`]'s ranges, which join adjacent mappings of one kind:
/// a page of code made executable beside a thread's stack joins it).
pub fn one_kernel_mapping(a: u64, b: u64) -> bool {
    let Some(text) = read_maps() else {
        return false;
    };
    text.lines()
        .filter_map(|l| hex_pair(l.split_whitespace().next()?, '-'))
        .any(|(lo, hi)| lo <= a && a < hi && lo <= b && b < hi)
}

/// Where the program goes on: the cache address `translated`, or, where
/// translating `target` failed because running there faults
/// ([`faults_when_run`]), `target` itself, for the processor to raise the
/// fault the program gets natively (a call through a null pointer, a
/// return to a smashed address, a handler's return there: its own SIGSEGV
/// handler runs, or the engine's, which writes the counts before the
/// program dies of it). Else the translation's error.
pub fn or_native_fault(
    translated: Result<u64, String>,
    target: Option<u64>,
) -> Result<u64, String> {
    translated.or_else(|e| target.filter(|t| faults_when_run(*t)).ok_or(e))
}

/// Whether running code at `addr` faults, by the kernel's mappings read
/// now: none holds it (a non-canonical address included), or the one that
/// does is not executable. Then the dispatcher sends the program there,
/// for the processor to raise the fault the program would get natively.
/// An executable mapping the engine cannot read (`[vsyscall]`, mapped
/// execute-only) does not fault: code there would run outside the cache.
pub fn faults_when_run(addr: u64) -> bool {
    let Some(text) = read_maps() else {
        return false;
    };
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some((lo, hi)), Some(perms)) = (f.next().and_then(|r| hex_pair(r, '-')), f.next())
        else {
            continue;
        };
        if lo <= addr && addr < hi {
            return perms.as_bytes().get(2) != Some(&b'x');
        }
    }
    true
}

/// The kernel's pages mapped into every process (`[vdso]` and `[vvar]`),
/// as (start, end) ranges, read once.
pub fn kernels_pages() -> &'static [(u64, u64)] {
    static PAGES: std::sync::OnceLock<Vec<(u64, u64)>> = std::sync::OnceLock::new();
    PAGES.get_or_init(|| {
        read_maps()
            .unwrap_or_default()
            .lines()
            .filter(|l| l.ends_with("[vdso]") || l.ends_with("[vvar]"))
            .filter_map(|l| hex_pair(l.split_whitespace().next()?, '-'))
            .collect()
    })
}

/// The mappings snapshots read so far, as /proc/self/maps texts.
pub fn snapshots() -> Vec<String> {
    TEXTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Parses the readable mappings of a /proc/PID/maps text.
pub fn parse(text: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        let Some((lo, hi)) = hex_pair(range, '-') else {
            continue;
        };
        if !perms.starts_with('r') {
            continue;
        }
        let writable = perms.as_bytes().get(1) == Some(&b'w');
        let exec = perms.as_bytes().get(2) == Some(&b'x');
        // The path, if any, is the fourth field after the permissions.
        let stack = f.nth(3) == Some("[stack]");
        match out.last_mut() {
            // Adjacent readable mappings read as one range.
            Some(m)
                if m.hi == lo && m.writable == writable && m.exec == exec && m.stack == stack =>
            {
                m.hi = hi
            }
            _ => out.push(Mapping {
                lo,
                hi,
                writable,
                exec,
                stack,
            }),
        }
    }
    out
}

fn reload(maps: &mut Vec<Mapping>) {
    let Some(text) = read_maps() else {
        return;
    };
    *maps = parse(&text);
    *VIEWS.lock().unwrap_or_else(|e| e.into_inner()) = parse_views(&text);
    crate::sampling::maps_changed(&text);
    TEXTS.lock().unwrap_or_else(|e| e.into_inner()).push(text);
}

/// The mapping holding `addr`, if readable.
pub fn mapping_of(addr: u64) -> Option<Mapping> {
    let mut maps = MAPS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = holding(&maps, addr) {
        return Some(m);
    }
    reload(&mut maps);
    holding(&maps, addr)
}

/// The mapping of `maps` (in address order, as the kernel lists them) that
/// holds `addr`: a binary search (hundreds of mappings in a Python or LLVM
/// process, looked up for every block translated).
fn holding(maps: &[Mapping], addr: u64) -> Option<Mapping> {
    let i = maps.partition_point(|m| m.hi <= addr);
    maps.get(i).copied().filter(|m| m.lo <= addr)
}

/// The end of the readable memory that runs on from `m` (a mapping
/// [`mapping_of`] returned) through adjacent readable mappings, up to
/// `limit`, and whether any of those is writable. Adjacent mappings differ
/// in their protection when the engine has made some pages of code
/// read-only (written_code.rs): an instruction crossing into the next one
/// must still be read whole.
pub fn readable_until(m: Mapping, limit: u64) -> (u64, bool) {
    run_on(&MAPS.lock().unwrap_or_else(|e| e.into_inner()), m, limit)
}

fn run_on(maps: &[Mapping], m: Mapping, limit: u64) -> (u64, bool) {
    let (mut end, mut writable) = (m.hi, m.writable);
    while end < limit {
        let i = maps.partition_point(|n| n.lo < end);
        match maps.get(i).filter(|n| n.lo == end) {
            Some(n) => {
                writable |= n.writable;
                end = n.hi;
            }
            None => break,
        }
    }
    (end.min(limit), writable)
}

/// Forgets what is known of `lo..hi` (unmapped, mapped anew or protected
/// anew).
pub fn forget(lo: u64, hi: u64) {
    let mut maps = MAPS.lock().unwrap_or_else(|e| e.into_inner());
    if maps.iter().any(|m| m.lo < hi && lo < m.hi) {
        maps.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_ranges_merge_and_unreadable_ones_drop() {
        let text = "\
55d0a0000000-55d0a0001000 r--p 00000000 08:01 1 /bin/x
55d0a0001000-55d0a0005000 r-xp 00001000 08:01 1 /bin/x
55d0a0005000-55d0a0006000 r-xp 00005000 08:01 1 /bin/x
55d0a0006000-55d0a0007000 ---p 00000000 00:00 0
55d0a0007000-55d0a0008000 rw-p 00000000 00:00 0
7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0                          [stack]
";
        let m = |lo, hi, writable, exec, stack| Mapping {
            lo,
            hi,
            writable,
            exec,
            stack,
        };
        assert_eq!(
            parse(text),
            vec![
                m(0x55d0a0000000, 0x55d0a0001000, false, false, false),
                m(0x55d0a0001000, 0x55d0a0006000, false, true, false),
                m(0x55d0a0007000, 0x55d0a0008000, true, false, false),
                m(0x7ffd10000000, 0x7ffd10021000, true, false, true),
            ]
        );
    }

    #[test]
    fn readable_memory_runs_on_across_protections() {
        let text = "\
55d0a0000000-55d0a0001000 r-xp 00000000 00:00 0
55d0a0001000-55d0a0002000 rwxp 00000000 00:00 0
55d0a0002000-55d0a0003000 r-xp 00000000 00:00 0
55d0a0004000-55d0a0005000 r-xp 00000000 00:00 0
";
        let maps = parse(text);
        let first = maps[0];
        assert_eq!(
            first.hi, 0x55d0a0001000,
            "the page the engine made read-only"
        );
        assert_eq!(
            run_on(&maps, first, 0x55d0a0000ff0 + 4096),
            (0x55d0a0001ff0, true),
            "on into the writable page, up to the limit"
        );
        assert_eq!(
            run_on(&maps, first, 0x55d0a0010000),
            (0x55d0a0003000, true),
            "up to the gap"
        );
        let last = maps[3];
        assert_eq!(run_on(&maps, last, 0x55d0a0009000), (0x55d0a0005000, false));
    }

    #[test]
    fn the_mapping_holding_an_address_is_found_or_none() {
        let text = "\
55d0a0000000-55d0a0001000 r-xp 00000000 00:00 0
55d0a0001000-55d0a0002000 rwxp 00000000 00:00 0
55d0a0004000-55d0a0005000 r--p 00000000 00:00 0
7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0                          [stack]
";
        let maps = parse(text);
        let lo = |addr| holding(&maps, addr).map(|m| m.lo);
        assert_eq!(lo(0x55d0a0000000), Some(0x55d0a0000000), "a first byte");
        assert_eq!(lo(0x55d0a0000fff), Some(0x55d0a0000000), "a last byte");
        assert_eq!(lo(0x55d0a0001000), Some(0x55d0a0001000), "the next one");
        assert_eq!(lo(0x55d0a0003000), None, "a gap");
        assert_eq!(lo(0x55d0a0004800), Some(0x55d0a0004000));
        assert_eq!(lo(0x7ffd10020fff), Some(0x7ffd10000000));
        assert_eq!(lo(0x1000), None, "below all");
        assert_eq!(lo(0x7ffd10021000), None, "above all");
    }

    #[test]
    fn a_page_of_a_shared_file_is_found_in_its_writable_views() {
        let text = "\
7f0000000000-7f0000002000 r-xs 00000000 00:01 1234 /memfd:code (deleted)
7f0000010000-7f0000011000 rw-s 00001000 00:01 1234 /memfd:code (deleted)
7f0000020000-7f0000021000 rw-p 00000000 00:00 0
7f0000030000-7f0000031000 rw-s 00000000 00:01 999 /memfd:other (deleted)
";
        let views = parse_views(text);
        assert_eq!(
            views.len(),
            3,
            "private and anonymous mappings are no views"
        );
        assert_eq!(
            views[1],
            View {
                lo: 0x7f0000010000,
                hi: 0x7f0000011000,
                offset: 0x1000,
                file: (1, 1234),
                writable: true,
                exec: false,
            }
        );
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        assert_eq!(
            aliases_in(&views, 0x7f0000001000),
            Some(vec![(0x7f0000010000, rw)]),
            "the second page of the code, at file offset 0x1000"
        );
        assert_eq!(
            aliases_in(&views, 0x7f0000000000),
            Some(vec![]),
            "the first page is in no writable view"
        );
        assert_eq!(aliases_in(&views, 0x7f0000020000), None);
    }

    #[test]
    fn this_process_code_is_found() {
        let here = this_process_code_is_found as *const () as u64;
        let m = mapping_of(here).expect("our own code is mapped");
        assert!(m.lo <= here && here < m.hi && !m.writable);
        assert_eq!(mapping_of(8), None);
    }
}
