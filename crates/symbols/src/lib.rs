//! Runtime code addresses -> the function (demangled), its module, and the
//! source file:line with inlined frames.
//!
//! flopscope's engines record executed code as runtime addresses inside the
//! process's mappings, as `/proc/PID/maps` shows them ([`parse_maps`] ->
//! [`Mapping`]). A [`Symbolizer`] loads each mapped file once and answers
//! [`Symbolizer::locate`] with a [`Location`]: the machine-code [`Symbol`]
//! (from `.symtab`, else `.dynsym`, else the `.eh_frame` FDE of stripped
//! code) and the DWARF source [`Frame`]s, innermost first.
//!
//! Debug info is read from the file itself, or from its separate debug file
//! (by build-id under `/usr/lib/debug/.build-id/`, or by `.gnu_debuglink`),
//! with a dwz supplementary file when the debug file names one.
//!
//! ```
//! use flopscope_symbols::{parse_maps, Symbolizer};
//!
//! // Where this test's own code is mapped, and where one of its functions is.
//! let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
//! let addr = flopscope_symbols::parse_maps as usize as u64;
//! let map = maps.iter().find(|m| m.contains(addr)).unwrap();
//!
//! let mut symbolizer = Symbolizer::new();
//! let location = symbolizer.locate(map, addr);
//! assert_eq!(location.symbol.name, "flopscope_symbols::maps::parse_maps");
//! assert_eq!(location.symbol.start, addr);
//! assert_eq!(location.symbol.module, map.path);
//! ```
//!
//! `locate` never fails: a file that cannot be read, or is not ELF, gives
//! `module+0xoffset` names, one a page (the offset of its first byte), and
//! no frames ([`Symbolizer::load_error`] says why).

mod debug_file;
mod demangle;
mod dwarf;
mod fde;
mod inflated;
mod maps;
mod module;
pub mod perf_map;
mod plt;
pub mod preload;
mod symtab;
mod units;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use demangle::demangle;
pub use inflated::keep_in as keep_inflated_sections_in;
pub use maps::{parse_maps, Mapping};
use module::{file_name, Module};
pub use perf_map::{JitSymbol, PerfMap};

/// The unit a file without symbols is named by: a page.
const PAGE: u64 = 0x1000;

/// What is at one runtime address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The machine-code function containing the address.
    pub symbol: Symbol,
    /// Source frames at the address from DWARF, innermost first: `frames[0]`
    /// is the function whose source line the instruction belongs to (an
    /// inlined function when the code was inlined), the last one the function
    /// the machine code belongs to. Empty without debug info.
    pub frames: Vec<Frame>,
}

impl Location {
    /// The function the instruction belongs to in the source: the innermost
    /// frame's (an inlined function), else the symbol's.
    pub fn source_function(&self) -> String {
        self.frames
            .first()
            .and_then(|f| f.function.clone())
            .unwrap_or_else(|| self.symbol.name.clone())
    }

    /// The function the source function was inlined into, if it was.
    pub fn inlined_into(&self) -> Option<String> {
        self.frames.get(1).and_then(|f| f.function.clone())
    }
}

/// A machine-code function.
///
/// Named from `.symtab`, else `.dynsym`; in stripped code, by the `.eh_frame`
/// FDE that covers the address, as `<module file name>+0x<FDE start>` (the
/// start in the file's address space, so the name is the same in every run);
/// where nothing covers it (C start-up code, `_init`, `_fini`), by the start
/// of the uncovered stretch of its code section, the same way; outside every
/// code section, `<module file name>+0x<file address>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Demangled name.
    pub name: String,
    /// Runtime start address: all instructions of one function share it.
    pub start: u64,
    /// Size in bytes, where the symbol table or FDE gives it.
    pub size: Option<u64>,
    /// The file the function is in.
    pub module: PathBuf,
}

/// One source-level frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Demangled name of the (possibly inlined) function.
    pub function: Option<String>,
    /// Source file of the address within this function (for an outer frame,
    /// the call site of the frame inside it), as DWARF names it: the
    /// compilation directory and include directory joined with the file name.
    pub file: Option<String>,
    /// Line in `file`.
    pub line: Option<u32>,
    /// Where `function` is declared (DW_AT_decl_file, on its DIE or on the
    /// abstract origin or specification it points to), written as `file`.
    pub decl_file: Option<String>,
    /// Line of that declaration (DW_AT_decl_line).
    pub decl_line: Option<u32>,
}

/// Why a module gives no names.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not an ELF file flopscope can read: {source}")]
    NotElf {
        path: PathBuf,
        source: object::Error,
    },
}

/// Turns runtime addresses into [`Location`]s, loading each module once.
///
/// `Send`, so an engine can symbolize on a thread of its own.
pub struct Symbolizer {
    debug_roots: Vec<PathBuf>,
    /// Loaded modules, and their indices in it by path.
    modules: Vec<(PathBuf, Result<Module, LoadError>)>,
    by_path: HashMap<PathBuf, usize>,
    /// The module asked last: most addresses in a row are in one module,
    /// and comparing a path's bytes is cheaper than hashing its components.
    last: usize,
    /// Keep every answer, for callers asking the same addresses again.
    memo: bool,
}

const _: () = {
    const fn send<T: Send>() {}
    send::<Symbolizer>();
};

/// Where separate debug files are looked for by default: `/usr/lib/debug`.
pub fn default_debug_roots() -> Vec<PathBuf> {
    vec![PathBuf::from("/usr/lib/debug")]
}

impl Default for Symbolizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Symbolizer {
    /// A symbolizer that finds separate debug files under `/usr/lib/debug`.
    pub fn new() -> Self {
        Self::with_debug_roots(default_debug_roots())
    }

    /// A symbolizer that finds separate debug files under `roots` (gdb's
    /// `debug-file-directory`), tried in order.
    pub fn with_debug_roots(roots: Vec<PathBuf>) -> Self {
        Symbolizer {
            debug_roots: roots,
            modules: Vec::new(),
            by_path: HashMap::new(),
            last: 0,
            memo: true,
        }
    }

    /// A symbolizer for a caller that asks each address once (it keeps the
    /// answers itself): no answers kept here, each costs a table look-up
    /// and a walk of the DWARF, not a copy into a map of a million entries.
    pub fn asked_once() -> Self {
        Symbolizer {
            memo: false,
            ..Self::new()
        }
    }

    /// What is at runtime address `addr`, which lies in `map`.
    pub fn locate(&mut self, map: &Mapping, addr: u64) -> Location {
        let memo = self.memo;
        let module = self.module(&map.path);
        let Ok(module) = module else {
            // No ELF to say where functions are: the page of the file the
            // address lies in names it, as a page names generated code
            // (a Lisp or Smalltalk image mapped from its file, such as
            // SBCL's core, would otherwise give a function per instruction).
            let offset = addr.wrapping_sub(map.start).wrapping_add(map.file_offset);
            let page = offset & !(PAGE - 1);
            return Location {
                symbol: Symbol {
                    name: format!("{}+{page:#x}", file_name(&map.path)),
                    start: addr - (offset - page),
                    size: Some(PAGE),
                    module: map.path.clone(),
                },
                frames: Vec::new(),
            };
        };
        let (vaddr, bias) = module.file_address(map, addr);
        let resolved = if memo {
            module.resolve(vaddr).clone()
        } else {
            module.resolve_uncached(vaddr)
        };
        Location {
            symbol: Symbol {
                name: resolved.symbol.name,
                start: resolved.symbol.start.wrapping_add(bias),
                size: resolved.symbol.size,
                module: map.path.clone(),
            },
            frames: resolved.frames,
        }
    }

    /// One past the last runtime address from `addr` on, within `map`, that
    /// [`Symbolizer::locate`] answers as it answers `addr` (but for the
    /// address in nothing but the offset), where that is known without
    /// asking each: the rest of its symbol in a module without source lines.
    /// `addr + 1` where each address may be answered differently.
    pub fn same_until(&mut self, map: &Mapping, addr: u64) -> u64 {
        let Ok(module) = self.module(&map.path) else {
            return ((addr | (PAGE - 1)) + 1).min(map.end).max(addr + 1);
        };
        let (vaddr, _) = module.file_address(map, addr);
        let span = module.same_until(vaddr).saturating_sub(vaddr).max(1);
        addr.saturating_add(span).min(map.end).max(addr + 1)
    }

    /// Why `path` gives no names, if it could not be loaded (loading it now
    /// if it was not yet).
    pub fn load_error(&mut self, path: &Path) -> Option<&LoadError> {
        self.module(path).as_ref().err()
    }

    fn module(&mut self, path: &Path) -> &mut Result<Module, LoadError> {
        // Look up before inserting: the common case must not clone the path.
        let same = |(p, _): &(PathBuf, _)| p.as_os_str() == path.as_os_str();
        if !self.modules.get(self.last).is_some_and(same) {
            self.last = match self.by_path.get(path) {
                Some(&i) => i,
                None => {
                    let module = preload::AHEAD
                        .take(path, &self.debug_roots)
                        .unwrap_or_else(|| Module::load(path, &self.debug_roots));
                    self.modules.push((path.to_path_buf(), module));
                    self.by_path
                        .insert(path.to_path_buf(), self.modules.len() - 1);
                    self.modules.len() - 1
                }
            };
        }
        &mut self.modules[self.last].1
    }
}
