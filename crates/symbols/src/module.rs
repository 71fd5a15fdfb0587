//! One loaded ELF module: its load segments (runtime -> file addresses),
//! function symbols, FDE extents and DWARF, and the answers given so far.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSegment, SectionKind, SegmentFlags};

use crate::debug_file;
use crate::dwarf::{has_dwarf, Dwarf, Elf};
use crate::fde::FdeTable;
use crate::symtab::{FileSymbol, SymbolTable, Table};
use crate::{Frame, LoadError, Mapping};

/// A PT_LOAD program header.
#[derive(Clone, Copy, Debug)]
struct Segment {
    offset: u64,
    file_size: u64,
    vaddr: u64,
    executable: bool,
}

/// What a file address resolves to, before rebasing to a mapping.
#[derive(Clone)]
pub(crate) struct Resolved {
    pub symbol: FileSymbol,
    pub frames: Vec<Frame>,
}

pub(crate) struct Module {
    /// The file name, used in `name+0x...` names.
    pub name: String,
    segments: Vec<Segment>,
    symbols: SymbolTable,
    /// `.dynsym`, asked only where `symbols` (`.symtab`) is empty.
    dynamic: SymbolTable,
    fdes: FdeTable,
    /// Address ranges of the code sections (`.init`, `.plt`, `.text`, ...).
    code: Vec<(u64, u64)>,
    dwarf: Option<Dwarf>,
    resolved: HashMap<u64, Resolved>,
}

/// `path`'s file name, as module names show it.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
        .into_owned()
}

impl Module {
    pub fn load(path: &Path, debug_roots: &[PathBuf]) -> Result<Module, LoadError> {
        let bytes = debug_file::read(path).map_err(|source| LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let file = object::File::parse(&*bytes).map_err(|source| LoadError::NotElf {
            path: path.to_path_buf(),
            source,
        })?;
        let segments = file
            .segments()
            .filter_map(|s| {
                let (offset, file_size) = s.file_range();
                let executable = match s.flags() {
                    SegmentFlags::Elf { p_flags, .. } => p_flags.0 & object::elf::PF_X.0 != 0,
                    _ => false,
                };
                (file_size > 0).then_some(Segment {
                    offset,
                    file_size,
                    vaddr: s.address(),
                    executable,
                })
            })
            .collect();

        let separate = if has_dwarf(&file) && file.symbols().next().is_some() {
            None
        } else {
            debug_file::find(path, &file, debug_roots)
        };
        let separate_file = separate
            .as_ref()
            .and_then(|(_, b)| object::File::parse(&**b).ok());

        let mut symbols = SymbolTable::read(&file, Table::Static);
        if symbols.is_empty() {
            if let Some(debug) = &separate_file {
                symbols = SymbolTable::read(debug, Table::Static);
            }
        }
        let dynamic = if symbols.is_empty() {
            SymbolTable::read(&file, Table::Dynamic)
        } else {
            SymbolTable::default()
        };

        let keep = crate::inflated::dir();
        let main = Elf {
            file: &file,
            bytes: &bytes,
            keep,
        };
        let dwarf_elf = match (&separate, &separate_file) {
            (Some((_, b)), Some(f)) if !has_dwarf(&file) && has_dwarf(f) => Elf {
                file: f,
                bytes: b,
                keep,
            },
            _ => main,
        };
        let debug_dir = match &separate {
            Some((p, _)) if !std::ptr::eq(dwarf_elf.file, &file) => p.parent(),
            _ => path.parent(),
        };
        let sup_bytes = debug_file::find_sup(dwarf_elf.file, debug_dir, debug_roots);
        let sup_file = sup_bytes
            .as_ref()
            .and_then(|b| object::File::parse(&**b).ok());
        let sup = match (&sup_bytes, &sup_file) {
            (Some(bytes), Some(file)) => Some(Elf { file, bytes, keep }),
            _ => None,
        };
        let dwarf = Dwarf::load(&dwarf_elf, sup.as_ref());

        Ok(Module {
            name: file_name(path),
            segments,
            symbols,
            dynamic,
            fdes: FdeTable::read(&file),
            code: file
                .sections()
                .filter(|s| s.kind() == SectionKind::Text)
                .map(|s| (s.address(), s.address().saturating_add(s.size())))
                .collect(),
            dwarf,
            resolved: HashMap::new(),
        })
    }

    /// The file (virtual) address of runtime address `addr` in `map`, and the
    /// bias to add to a file address to get its runtime address.
    pub fn file_address(&self, map: &Mapping, addr: u64) -> (u64, u64) {
        let offset = addr.wrapping_sub(map.start).wrapping_add(map.file_offset);
        let holds = |s: &&Segment| offset >= s.offset && offset - s.offset < s.file_size;
        let segment = self
            .segments
            .iter()
            .filter(holds)
            .find(|s| s.executable == map.executable)
            .or_else(|| self.segments.iter().find(holds));
        // Outside every segment (a mapping that does not match the file):
        // file offsets stand in for addresses, as they are in most PIE code.
        let (seg_offset, seg_vaddr) = segment.map_or((0, 0), |s| (s.offset, s.vaddr));
        let vaddr = offset.wrapping_sub(seg_offset).wrapping_add(seg_vaddr);
        (vaddr, addr.wrapping_sub(vaddr))
    }

    /// Function and source frames at file address `vaddr`.
    pub fn resolve(&mut self, vaddr: u64) -> &Resolved {
        if !self.resolved.contains_key(&vaddr) {
            let resolved = self.resolve_uncached(vaddr);
            self.resolved.insert(vaddr, resolved);
        }
        &self.resolved[&vaddr]
    }

    /// One past the last file address from `vaddr` on that resolves as
    /// `vaddr` does, where that is known without resolving each: the rest
    /// of its symbol (or of its FDE, in stripped code) in a module without
    /// DWARF; `vaddr + 1` where each address may differ (source lines, a
    /// name made of the address itself).
    pub fn same_until(&self, vaddr: u64) -> u64 {
        if self.dwarf.is_some() {
            return vaddr + 1;
        }
        let (found, until) = self.table().same_until(vaddr);
        if found {
            return until;
        }
        match self.fdes.same_until(vaddr) {
            Some(end) => until.min(end),
            None => self.gap(vaddr).map_or(vaddr + 1, |(_, end)| end),
        }
    }

    /// The symbol table asked: `.symtab`, else `.dynsym`.
    fn table(&self) -> &SymbolTable {
        if self.symbols.is_empty() {
            &self.dynamic
        } else {
            &self.symbols
        }
    }

    /// [`Module::table`], to look up in (its names are demangled on demand).
    fn table_mut(&mut self) -> &mut SymbolTable {
        if self.symbols.is_empty() {
            &mut self.dynamic
        } else {
            &mut self.symbols
        }
    }

    /// The stretch of code around `vaddr` that no symbol and no FDE covers
    /// (C run-time start-up code in a stripped file, `_init`, `_fini`), within
    /// its code section: named as one function, by its start, rather than
    /// every address apart. `None` outside every code section.
    fn gap(&self, vaddr: u64) -> Option<(u64, u64)> {
        let &(section_start, section_end) =
            self.code.iter().find(|(s, e)| (*s..*e).contains(&vaddr))?;
        let (sym_before, sym_next) = self.table().gap_around(vaddr);
        let (fde_before, fde_next) = self.fdes.gap_around(vaddr);
        let start = section_start.max(sym_before).max(fde_before);
        let end = section_end.min(sym_next).min(fde_next);
        Some((start, end))
    }

    pub fn resolve_uncached(&mut self, vaddr: u64) -> Resolved {
        let found = self.table_mut().lookup(vaddr);
        let symbol = found.unwrap_or_else(|| {
            let (start, size) = match self.fdes.lookup(vaddr) {
                Some((start, len)) => (start, Some(len)),
                None => match self.gap(vaddr) {
                    Some((start, end)) => (start, Some(end - start)),
                    None => (vaddr, None),
                },
            };
            FileSymbol {
                name: format!("{}+{start:#x}", self.name),
                start,
                size,
            }
        });
        let frames = self
            .dwarf
            .as_mut()
            .map(|d| d.frames(vaddr))
            .unwrap_or_default();
        Resolved { symbol, frames }
    }
}
