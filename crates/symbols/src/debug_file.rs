//! Finding a module's separate debug file, the way gdb does
//! ("Debugging Information in Separate Files" in the gdb manual):
//! first by build-id under `<root>/.build-id/xx/rest.debug` (Debian's
//! -dbgsym packages install there), then by `.gnu_debuglink` name in the
//! module's directory, its `.debug/` subdirectory and `<root>/<directory>/`.
//! A debuglink candidate must match the module's build-id, or when either
//! lacks one, the CRC-32 the link records. Also the dwz supplementary file a
//! debug file names in `.gnu_debugaltlink`.

use std::fs::{self, File};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::Object;

/// A whole file's bytes, shared by reference count with the DWARF readers
/// that slice it (so a loaded module needs no self-reference).
#[derive(Clone, Debug)]
pub(crate) struct Bytes(Arc<Storage>);

#[derive(Debug)]
enum Storage {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &*self.0 {
            Storage::Mapped(map) => map,
            Storage::Owned(vec) => vec,
        }
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(vec: Vec<u8>) -> Bytes {
        Bytes(Arc::new(Storage::Owned(vec)))
    }
}

// SAFETY: the bytes live in a mapping or a Vec owned by the Arc; neither
// moves nor changes while any clone of the Arc exists, so the slice `deref`
// returns stays put when a `Bytes` is moved or cloned (what gimli's
// `EndianReader` requires of its storage).
unsafe impl gimli::StableDeref for Bytes {}
// SAFETY: as above; clones share the same storage.
unsafe impl gimli::CloneStableDeref for Bytes {}

/// `path`'s bytes: mapped, or read where it cannot be mapped (empty files,
/// pseudo-files).
pub(crate) fn read(path: &Path) -> std::io::Result<Bytes> {
    let file = File::open(path)?;
    // SAFETY: a private read-only mapping. Memory safety then rests on no
    // one truncating the file while it is mapped (reads past the new end
    // fault): the trade-off gdb, perf and addr2line's own loader make, as
    // copying a 1 GB debug file into memory is not an option. Profiled
    // binaries are not rewritten while the profiler reads them.
    match unsafe { memmap2::Mmap::map(&file) } {
        Ok(map) => Ok(Bytes(Arc::new(Storage::Mapped(map)))),
        Err(_) => Ok(fs::read(path)?.into()),
    }
}

/// The separate debug file of `module` (at `path`): its path, read into
/// memory.
pub(crate) fn find(
    path: &Path,
    module: &object::File<'_>,
    roots: &[PathBuf],
) -> Option<(PathBuf, Bytes)> {
    let build_id = module.build_id().ok().flatten();
    if let Some(id) = build_id {
        for root in roots {
            if let Some(found) = by_build_id(root, id) {
                return Some(found);
            }
        }
    }
    let (name, crc) = module.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real.parent()?;
    let mut candidates = vec![dir.join(name), dir.join(".debug").join(name)];
    for root in roots {
        candidates.push(root.join(dir.strip_prefix("/").unwrap_or(dir)).join(name));
    }
    candidates.into_iter().find_map(|candidate| {
        if fs::canonicalize(&candidate).ok()? == real {
            return None;
        }
        let bytes = read(&candidate).ok()?;
        let file = object::File::parse(&*bytes).ok()?;
        let matches = match (build_id, file.build_id().ok().flatten()) {
            (Some(a), Some(b)) => a == b,
            _ => crc32fast::hash(&bytes) == crc,
        };
        matches.then_some((candidate, bytes))
    })
}

/// The dwz supplementary file named by `debug`'s `.gnu_debugaltlink`; a
/// relative name is relative to the debug file's directory (`debug_dir`).
pub(crate) fn find_sup(
    debug: &object::File<'_>,
    debug_dir: Option<&Path>,
    roots: &[PathBuf],
) -> Option<Bytes> {
    let (name, id) = debug.gnu_debugaltlink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let named = match debug_dir {
        Some(dir) => dir.join(name),
        None => name.to_path_buf(),
    };
    let check = |bytes: Bytes| {
        let file = object::File::parse(&*bytes).ok()?;
        (file.build_id().ok().flatten() == Some(id)).then_some(bytes)
    };
    read(&named)
        .ok()
        .and_then(check)
        .or_else(|| roots.iter().find_map(|root| Some(by_build_id(root, id)?.1)))
}

fn by_build_id(root: &Path, id: &[u8]) -> Option<(PathBuf, Bytes)> {
    let (first, rest) = id.split_first()?;
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let path = root
        .join(".build-id")
        .join(hex(&[*first]))
        .join(format!("{}.debug", hex(rest)));
    let bytes = read(&path).ok()?;
    let file = object::File::parse(&*bytes).ok()?;
    (file.build_id().ok().flatten() == Some(id)).then_some((path, bytes))
}
