//! Source frames from DWARF: addr2line's `Context` for lines and inlined
//! frames, and gimli for what addr2line does not report, the declaration
//! position (DW_AT_decl_file/DW_AT_decl_line) of each frame's function.

use std::collections::HashMap;

use gimli::{AttributeValue, DebugInfoOffset, Reader as _, UnitOffset};
use object::{CompressionFormat, Object, ObjectSection};

use crate::debug_file::Bytes;
use crate::demangle::demangle;
use crate::Frame;

/// Sections are slices of the whole file, shared by reference count, so the
/// context owns its data and the module needs no self-reference.
type Reader = gimli::EndianReader<gimli::RunTimeEndian, Bytes>;
type UnitRef<'a> = gimli::UnitRef<'a, Reader>;

pub(crate) struct Dwarf {
    ctx: addr2line::Context<Reader>,
    units: OtherUnits,
    /// Demangled name and declaration per function DIE (unit offset, DIE
    /// offset). Once per function rather than once per address: it halved
    /// the time to locate 50,000 addresses in a 58 MB Rust binary.
    functions: HashMap<(usize, UnitOffset), Function>,
}

#[derive(Clone)]
struct Function {
    name: Option<String>,
    decl: Option<(String, u32)>,
}

/// One ELF file with its bytes.
pub(crate) struct Elf<'a> {
    pub file: &'a object::File<'a>,
    pub bytes: &'a Bytes,
}

/// Whether `file` holds DWARF: a `.debug_info` with contents, not an empty
/// or NOBITS section header.
pub(crate) fn has_dwarf(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_info")
        .and_then(|s| s.compressed_file_range().ok())
        .is_some_and(|r| r.uncompressed_size > 0)
}

impl Dwarf {
    /// The DWARF of `elf`, with its dwz supplementary file `sup`; `None`
    /// when it has none or it does not parse.
    pub fn load(elf: &Elf<'_>, sup: Option<&Elf<'_>>) -> Option<Dwarf> {
        if !has_dwarf(elf.file) {
            return None;
        }
        let mut dwarf = gimli::Dwarf::load(|id| section(elf, id.name())).ok()?;
        if let Some(sup) = sup {
            dwarf.load_sup(|id| section(sup, id.name())).ok()?;
        }
        dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::Duplicates);
        Some(Dwarf {
            ctx: addr2line::Context::from_dwarf(dwarf).ok()?,
            units: OtherUnits::default(),
            functions: HashMap::new(),
        })
    }

    /// The source frames at file address `addr`, innermost first.
    pub fn frames(&mut self, addr: u64) -> Vec<Frame> {
        let mut frames = Vec::new();
        let Ok(mut iter) = self.ctx.find_frames(addr).skip_all_loads() else {
            return frames;
        };
        let unit = self.ctx.find_dwarf_and_unit(addr).skip_all_loads();
        while let Ok(Some(frame)) = iter.next() {
            let name = || {
                frame
                    .function
                    .as_ref()
                    .and_then(|f| f.raw_name().ok())
                    .map(|name| demangle(name.as_ref()).into_owned())
            };
            let Function {
                name: function,
                decl,
            } = match (unit, frame.dw_die_offset) {
                (Some(unit), Some(offset)) => self
                    .functions
                    .entry((unit.header.offset().0, offset))
                    .or_insert_with(|| Function {
                        name: name(),
                        decl: decl(unit, offset, &mut self.units),
                    })
                    .clone(),
                _ => Function {
                    name: name(),
                    decl: None,
                },
            };
            let (file, line) = frame
                .location
                .map_or((None, None), |l| (l.file.map(String::from), l.line));
            if function.is_none() && file.is_none() && line.is_none() {
                continue;
            }
            let (decl_file, decl_line) = decl.unzip();
            frames.push(Frame {
                function,
                file,
                line,
                decl_file,
                decl_line,
            });
        }
        frames
    }
}

/// Deflating more than this many times the compressed size is taken as a
/// corrupt (or hostile) header rather than allocated: zlib's ratio tops out
/// near 1032:1, and debug sections compress 3-10:1.
const MAX_INFLATION: u64 = 4096;

/// Sections left unread (see `section`).
const UNUSED: [&str; 2] = [".debug_loc", ".debug_loclists"];

fn section(elf: &Elf<'_>, name: &str) -> Result<Reader, gimli::Error> {
    let endian = if elf.file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let empty = || Reader::new(Bytes::from(Vec::new()), endian);
    // Location lists say where variables live: neither lines nor frames
    // need them, and compressed (the C library's detached debug file) they
    // took 5 ms of each run to inflate.
    if UNUSED.contains(&name) {
        return Ok(empty());
    }
    let Some(section) = elf.file.section_by_name(name) else {
        return Ok(empty());
    };
    let Ok(range) = section.compressed_file_range() else {
        return Ok(empty());
    };
    if range.format == CompressionFormat::None {
        let start = usize::try_from(range.offset).ok();
        let end = start.and_then(|s| s.checked_add(usize::try_from(range.uncompressed_size).ok()?));
        return Ok(match (start, end) {
            (Some(start), Some(end)) if end <= elf.bytes.len() => {
                Reader::new(elf.bytes.clone(), endian).range(start..end)
            }
            _ => empty(),
        });
    }
    let limit = range.compressed_size.saturating_mul(MAX_INFLATION);
    if range.uncompressed_size > limit {
        return Ok(empty());
    }
    Ok(match section.uncompressed_data() {
        Ok(data) => Reader::new(Bytes::from(data.into_owned()), endian),
        Err(_) => empty(),
    })
}

/// Where the declaration chain leads: a DIE in the unit we started from, or
/// one reached through a `.debug_info` offset in the main or dwz file.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Which {
    Main,
    Sup,
}

/// Units reached by cross-unit references (LTO's abstract origins, dwz's
/// partial units), parsed once on first use.
#[derive(Default)]
struct OtherUnits {
    headers: HashMap<Which, Vec<gimli::UnitHeader<Reader>>>,
    parsed: HashMap<(Which, usize), gimli::Unit<Reader>>,
}

impl OtherUnits {
    /// Parses the unit of `which` that holds `offset`; returns its key and
    /// the offset within it.
    fn find(
        &mut self,
        dwarf: &gimli::Dwarf<Reader>,
        which: Which,
        offset: DebugInfoOffset,
    ) -> Option<((Which, usize), UnitOffset)> {
        let headers = self.headers.entry(which).or_insert_with(|| {
            let mut headers = Vec::new();
            let mut iter = dwarf.units();
            while let Ok(Some(header)) = iter.next() {
                headers.push(header);
            }
            headers
        });
        let after = headers.partition_point(|h| h.offset().0 <= offset.0);
        let header = headers.get(after.checked_sub(1)?)?;
        let unit_offset = offset.to_unit_offset(header)?;
        let key = (which, header.offset().0);
        if let std::collections::hash_map::Entry::Vacant(slot) = self.parsed.entry(key) {
            slot.insert(dwarf.unit(header.clone()).ok()?);
        }
        Some((key, unit_offset))
    }
}

/// Declaration file and line of the function whose DIE is at `offset` in
/// `start`: its own DW_AT_decl_*, else those of its abstract origin (an
/// inlined or out-of-line instance of an inline function) or specification
/// (a C++ method defined outside its class).
fn decl(start: UnitRef<'_>, offset: UnitOffset, units: &mut OtherUnits) -> Option<(String, u32)> {
    let main = start.dwarf;
    let mut at: Option<(Which, usize)> = None;
    let mut offset = offset;
    // Chains are one or two links long; the bound stops a corrupt cycle.
    for _ in 0..8 {
        let (unit, which) = match at {
            None => (start, Which::Main),
            Some(key) => {
                let dwarf = if key.0 == Which::Sup {
                    main.sup()?
                } else {
                    main
                };
                (UnitRef::new(dwarf, units.parsed.get(&key)?), key.0)
            }
        };
        let entry = unit.entry(offset).ok()?;
        if let Some(line) = entry.attr_value(gimli::DW_AT_decl_line) {
            let line = u32::try_from(line.udata_value()?).ok()?;
            let file = match entry.attr_value(gimli::DW_AT_decl_file)? {
                AttributeValue::FileIndex(index) => index,
                other => other.udata_value()?,
            };
            return Some((render_file(unit, file)?, line));
        }
        let next = entry
            .attr_value(gimli::DW_AT_abstract_origin)
            .or_else(|| entry.attr_value(gimli::DW_AT_specification))?;
        match next {
            AttributeValue::UnitRef(o) => offset = o,
            AttributeValue::DebugInfoRef(o) => {
                let dwarf = if which == Which::Sup {
                    main.sup()?
                } else {
                    main
                };
                (at, offset) = units.find(dwarf, which, o).map(|(k, o)| (Some(k), o))?;
            }
            AttributeValue::DebugInfoRefSup(o) => {
                (at, offset) = units
                    .find(main.sup()?, Which::Sup, o)
                    .map(|(k, o)| (Some(k), o))?;
            }
            _ => return None,
        }
    }
    None
}

/// The path of file `index` of `unit`'s line table, built as addr2line
/// builds the paths of its locations (`render_file` in its line.rs), so a
/// declaration and a line in the same file read the same.
fn render_file(unit: UnitRef<'_>, index: u64) -> Option<String> {
    let header = unit.line_program.as_ref()?.header();
    let file = header.file(index)?;
    let mut path = match &unit.comp_dir {
        Some(dir) => dir.to_string_lossy().ok()?.into_owned(),
        None => String::new(),
    };
    if file.directory_index() != 0 {
        if let Some(dir) = file.directory(header) {
            path_push(
                &mut path,
                &unit.attr_string(dir).ok()?.to_string_lossy().ok()?,
            );
        }
    }
    path_push(
        &mut path,
        &unit
            .attr_string(file.path_name())
            .ok()?
            .to_string_lossy()
            .ok()?,
    );
    Some(path)
}

fn path_push(path: &mut String, part: &str) {
    if part.starts_with('/') {
        *path = part.to_string();
    } else {
        if !path.is_empty() && !path.ends_with('/') {
            path.push('/');
        }
        path.push_str(part);
    }
}
