//! Whether a program calls LIKWID's marker API as functions
//! (`likwid_markerStartRegion("name")`, linked with `-llikwid`), and which
//! library would answer: [`marker_calls`].
//!
//! flopscope takes such calls over by preloading its own definitions
//! (`likwid/likwid.c`) into the counted run, but only for programs that make
//! them: every other program's symbol resolution stays as it is. The answer
//! comes from the dynamic symbols of the program and of the shared libraries
//! it needs, found where glibc's dynamic loader finds them (ld.so(8));
//! libraries the program opens itself with `dlopen` are not seen.
//!
//! ```no_run
//! use flopscope_markers::likwid::{marker_calls, MarkerCalls};
//! if marker_calls("./app".as_ref()) == MarkerCalls::Likwid {
//!     println!("preload flopscope's likwid_marker* functions");
//! }
//! ```

use object::read::elf::ElfFile64;
use object::{Object, ObjectSymbol};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// The prefix of every LIKWID marker function, C (`likwid_markerStartRegion`)
/// and Fortran (`likwid_markerstartregion_`).
const PREFIX: &[u8] = b"likwid_marker";
/// Exported by flopscope's own library only (`likwid/likwid.c`).
const FLOPSCOPE_MARK: &[u8] = b"flopscope_likwid_markers";
/// More objects than any real program loads: the walk stops there.
const MAX_OBJECTS: usize = 1024;

/// How a program's `likwid_marker*` calls are answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerCalls {
    /// Neither the program nor a library it needs calls them, or the
    /// program defines them itself (a preload cannot take over an
    /// executable's own definitions), or it is not an ELF file.
    None,
    /// They reach flopscope's own `liblikwid` (the program was linked
    /// against it): they are flopscope's markers already.
    Flopscope,
    /// They reach another library (LIKWID's `liblikwid.so.5`), or none
    /// that could be found: flopscope's definitions must take them over.
    Likwid,
}

/// What one ELF object contributes.
struct Elf {
    /// It imports a `likwid_marker*` symbol.
    calls: bool,
    /// It exports `likwid_marker*` functions; `Some(true)` when they are
    /// flopscope's.
    defines: Option<bool>,
    needed: Vec<String>,
    rpath: Vec<String>,
    runpath: Option<Vec<String>>,
}

impl Elf {
    /// `path`'s dynamic symbols and dependencies; `None` when it is not a
    /// readable 64-bit x86-64 ELF file.
    fn read(path: &Path) -> Option<Elf> {
        let map = Mapped::open(path)?;
        let elf = ElfFile64::<object::Endianness>::parse(map.bytes()).ok()?;
        if elf.architecture() != object::Architecture::X86_64 {
            return None;
        }
        let (mut calls, mut markers, mut ours) = (false, false, false);
        for s in elf.dynamic_symbols() {
            let Ok(name) = s.name_bytes() else { continue };
            if s.is_undefined() {
                calls |= name.starts_with(PREFIX);
            } else if s.is_definition() && s.is_global() {
                markers |= name.starts_with(PREFIX);
                ours |= name == FLOPSCOPE_MARK;
            }
        }
        let (mut needed, mut rpath, mut runpath) = (Vec::new(), Vec::new(), None);
        let table = elf.elf_dynamic_table().ok()?;
        for d in table.iter() {
            let Ok(s) = table.string(d) else { continue };
            let s = String::from_utf8_lossy(s).into_owned();
            let dirs = || s.split(':').map(str::to_string).collect::<Vec<_>>();
            match d.tag {
                object::elf::DT_NEEDED => needed.push(s),
                object::elf::DT_RPATH => rpath.extend(dirs()),
                object::elf::DT_RUNPATH => runpath.get_or_insert_with(Vec::new).extend(dirs()),
                _ => {}
            }
        }
        Some(Elf {
            calls,
            defines: markers.then_some(ours),
            needed,
            rpath,
            runpath,
        })
    }
}

/// A file mapped read-only: only the pages the symbols and the dynamic
/// section are on are read (libraries can be hundreds of megabytes).
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn open(path: &Path) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(path).ok()?;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh private read-only mapping of an open file; the
        // mapping outlives the descriptor, which may be closed.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapped { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes are mapped at `ptr` until drop. A
        // file truncated meanwhile would fault: libraries being read are not
        // being rewritten in place (installers replace them by renaming).
        unsafe { std::slice::from_raw_parts(self.ptr.cast(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmapping what `open` mapped, once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// Whether `program` (an executable) or a shared library it needs calls
/// `likwid_marker*` functions, and which library the dynamic loader would
/// bind them to: the first one, in the loader's breadth-first order, that
/// defines them.
pub fn marker_calls(program: &Path) -> MarkerCalls {
    let Ok(exe) = program.canonicalize() else {
        return MarkerCalls::None;
    };
    let Some(main) = Elf::read(&exe) else {
        return MarkerCalls::None;
    };
    if main.defines.is_some() {
        return MarkerCalls::None;
    }
    let resolver = Resolver::new(&exe, &main);
    let mut calls = main.calls;
    let mut provider = None;
    let mut seen: HashSet<PathBuf> = HashSet::from([exe.clone()]);
    let mut queue = VecDeque::from([(exe, main)]);
    while let Some((path, obj)) = queue.pop_front() {
        calls |= obj.calls;
        if provider.is_none() {
            provider = obj.defines;
        }
        for name in &obj.needed {
            if seen.len() >= MAX_OBJECTS {
                break;
            }
            if let Some((lib, elf)) = resolver.find(name, &path, &obj) {
                // Known by its real path; `$ORIGIN` is the path it was found at.
                if seen.insert(lib.canonicalize().unwrap_or_else(|_| lib.clone())) {
                    queue.push_back((lib, elf));
                }
            }
        }
    }
    match (calls, provider) {
        (false, _) => MarkerCalls::None,
        (true, Some(true)) => MarkerCalls::Flopscope,
        (true, _) => MarkerCalls::Likwid,
    }
}

/// Finds a `DT_NEEDED` library as glibc's dynamic loader does (ld.so(8)):
/// the needing object's `DT_RPATH` and then the executable's (when the
/// object has no `DT_RUNPATH`), `LD_LIBRARY_PATH`, the object's
/// `DT_RUNPATH`, `/etc/ld.so.cache`, the default directories. `$ORIGIN`
/// is expanded; other dynamic string tokens are not, and directories using
/// them are skipped.
struct Resolver {
    exe_rpath: Vec<PathBuf>,
    library_path: Vec<String>,
    cache: HashMap<String, Vec<PathBuf>>,
}

/// The loader's trusted directories, after the cache (Debian's multiarch
/// ones first).
const DEFAULT_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

impl Resolver {
    fn new(exe: &Path, main: &Elf) -> Resolver {
        let library_path = std::env::var("LD_LIBRARY_PATH")
            .map(|p| p.split([':', ';']).map(str::to_string).collect())
            .unwrap_or_default();
        let exe_rpath = if main.runpath.is_none() {
            expand(&main.rpath, exe)
        } else {
            Vec::new()
        };
        let cache = std::fs::read("/etc/ld.so.cache")
            .map(|data| ld_cache(&data))
            .unwrap_or_default();
        Resolver {
            exe_rpath,
            library_path,
            cache,
        }
    }

    fn find(&self, name: &str, by: &Path, obj: &Elf) -> Option<(PathBuf, Elf)> {
        let try_path = |p: PathBuf| Some((p.clone(), Elf::read(&p)?));
        if name.contains('/') {
            return try_path(PathBuf::from(name));
        }
        let mut dirs = Vec::new();
        if obj.runpath.is_none() {
            dirs.extend(expand(&obj.rpath, by));
            dirs.extend(self.exe_rpath.iter().cloned());
        }
        dirs.extend(
            self.library_path
                .iter()
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        );
        dirs.extend(expand(obj.runpath.as_deref().unwrap_or_default(), by));
        let cached = self.cache.get(name).into_iter().flatten().cloned();
        let defaults = DEFAULT_DIRS.iter().map(|d| Path::new(d).join(name));
        dirs.into_iter()
            .map(|d| d.join(name))
            .chain(cached)
            .chain(defaults)
            .find_map(try_path)
    }
}

/// `DT_RPATH`/`DT_RUNPATH` entries of the object at `by`, `$ORIGIN` made
/// its directory.
fn expand(dirs: &[String], by: &Path) -> Vec<PathBuf> {
    let origin = by.parent().unwrap_or(Path::new("/")).to_string_lossy();
    dirs.iter()
        .filter(|d| !d.is_empty())
        .map(|d| d.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin))
        .filter(|d| !d.contains('$'))
        .map(PathBuf::from)
        .collect()
}

/// The library names and paths of glibc's `/etc/ld.so.cache` (the
/// `glibc-ld.so.cache1.1` format of glibc's dl-cache.h, alone or after the
/// old `ld.so-1.7.0` table); empty when it is in neither.
fn ld_cache(data: &[u8]) -> HashMap<String, Vec<PathBuf>> {
    const OLD: &[u8] = b"ld.so-1.7.0";
    const NEW: &[u8] = b"glibc-ld.so.cache1.1";
    let u32_at = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let mut start = 0;
    if data.starts_with(OLD) {
        // magic (11 bytes, padded to 12), nlibs, 12-byte entries; the new
        // table follows, aligned to 8 bytes.
        let Some(n) = u32_at(12) else {
            return HashMap::new();
        };
        start = (16 + n * 12).next_multiple_of(8);
    }
    let new = &data[start.min(data.len())..];
    if !new.starts_with(NEW) {
        return HashMap::new();
    }
    let Some(n) = u32_at(start + 20) else {
        return HashMap::new();
    };
    // Strings are offsets from the new table's start.
    let string = |off: usize| {
        let s = new.get(off..)?;
        let end = s.iter().position(|b| *b == 0)?;
        Some(String::from_utf8_lossy(&s[..end]).into_owned())
    };
    let mut out: HashMap<String, Vec<PathBuf>> = HashMap::new();
    // 48-byte header; entries: flags, key, value, osversion (u32), hwcap (u64).
    for i in 0..n {
        let at = start + 48 + i * 24;
        let (Some(key), Some(value)) = (u32_at(at + 4), u32_at(at + 8)) else {
            break;
        };
        if let (Some(k), Some(v)) = (string(key), string(value)) {
            out.entry(k).or_default().push(PathBuf::from(v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn the_loader_cache_names_the_c_library() {
        let Ok(data) = std::fs::read("/etc/ld.so.cache") else {
            return; // no cache on this system: nothing to check
        };
        let cache = ld_cache(&data);
        let libc = cache.get("libc.so.6").expect("libc.so.6 in the cache");
        assert!(libc.iter().any(|p| p.is_file()), "{libc:?}");
        assert!(ld_cache(b"not a cache").is_empty());
    }

    #[test]
    fn origin_is_the_objects_directory_and_other_tokens_are_skipped() {
        let dirs = [
            "$ORIGIN/../lib".to_string(),
            "${ORIGIN}".into(),
            "$LIB/x".into(),
            "".into(),
        ];
        assert_eq!(
            expand(&dirs, Path::new("/opt/app/bin/app")),
            [
                PathBuf::from("/opt/app/bin/../lib"),
                PathBuf::from("/opt/app/bin")
            ]
        );
    }

    #[test]
    fn programs_without_likwid_and_other_files_make_no_calls() {
        assert_eq!(marker_calls(Path::new("/bin/sh")), MarkerCalls::None);
        assert_eq!(marker_calls(Path::new("/no/such/file")), MarkerCalls::None);
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("text");
        std::fs::write(&text, "#!/bin/sh\n").unwrap();
        assert_eq!(marker_calls(&text), MarkerCalls::None);
    }

    fn gcc(dir: &Path, args: &[&str]) {
        let out = Command::new("gcc")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("running gcc");
        assert!(
            out.status.success(),
            "gcc {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Calls through the program itself and through a library it needs,
    /// answered by a LIKWID stand-in or by flopscope's library, found
    /// through RUNPATH (`$ORIGIN` too).
    #[test]
    fn calls_are_found_in_programs_and_their_libraries_with_their_provider() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (likwid, ours, mid) = (d.join("likwid"), d.join("ours"), d.join("mid"));
        for sub in [&likwid, &ours, &mid] {
            std::fs::create_dir(sub).unwrap();
        }
        std::fs::write(
            d.join("stand_in.c"),
            "int likwid_markerStartRegion(const char *t) { (void)t; return 0; }\n",
        )
        .unwrap();
        std::fs::write(
            d.join("app.c"),
            "int likwid_markerStartRegion(const char *);\nint main(void) { return likwid_markerStartRegion(\"r\"); }\n",
        )
        .unwrap();
        std::fs::write(
            d.join("mid.c"),
            "int likwid_markerStartRegion(const char *);\nint mid(void) { return likwid_markerStartRegion(\"r\"); }\n",
        )
        .unwrap();
        std::fs::write(
            d.join("uses_mid.c"),
            "int mid(void);\nint main(void) { return mid(); }\n",
        )
        .unwrap();
        std::fs::write(d.join("plain.c"), "int main(void) { return 0; }\n").unwrap();
        let so = "-Wl,-soname,liblikwid.so.5";
        gcc(
            d,
            &[
                "-shared",
                "-fPIC",
                so,
                "-o",
                "likwid/liblikwid.so.5",
                "stand_in.c",
            ],
        );
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("likwid/likwid.c");
        let src = src.to_str().unwrap();
        gcc(
            d,
            &[
                "-shared",
                "-fPIC",
                "-fvisibility=hidden",
                so,
                "-o",
                "ours/liblikwid.so.5",
                src,
            ],
        );
        for sub in ["likwid", "ours"] {
            std::os::unix::fs::symlink("liblikwid.so.5", d.join(sub).join("liblikwid.so")).unwrap();
        }
        let runpath = format!("-Wl,-rpath,{}", likwid.display());
        gcc(d, &["-o", "app", "app.c", "-Llikwid", &runpath, "-llikwid"]);
        gcc(d, &["-o", "app_unfound", "app.c", "-Llikwid", "-llikwid"]);
        let ours_rpath = format!("-Wl,-rpath,{}", ours.display());
        gcc(
            d,
            &["-o", "app_ours", "app.c", "-Lours", &ours_rpath, "-llikwid"],
        );
        gcc(
            d,
            &[
                "-shared",
                "-fPIC",
                "-o",
                "mid/libmid.so",
                "mid.c",
                "-Llikwid",
                &runpath,
                "-llikwid",
            ],
        );
        let mid_rpath = "-Wl,-rpath,$ORIGIN/mid";
        gcc(
            d,
            &["-o", "uses_mid", "uses_mid.c", "-Lmid", mid_rpath, "-lmid"],
        );
        gcc(d, &["-o", "plain", "plain.c"]);

        assert_eq!(marker_calls(&d.join("app")), MarkerCalls::Likwid);
        assert_eq!(marker_calls(&d.join("app_ours")), MarkerCalls::Flopscope);
        assert_eq!(marker_calls(&d.join("uses_mid")), MarkerCalls::Likwid);
        assert_eq!(marker_calls(&d.join("plain")), MarkerCalls::None);
        // A library the loader cannot find gives no provider: taken over.
        assert_eq!(marker_calls(&d.join("app_unfound")), MarkerCalls::Likwid);
    }
}
