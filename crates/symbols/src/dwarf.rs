//! Source frames from DWARF: addr2line's `Context` for lines and inlined
//! frames, and gimli for what addr2line does not report, the declaration
//! position (DW_AT_decl_file/DW_AT_decl_line) of each frame's function.
//!
//! A file of many compile units gets a context per unit, made when an
//! address in it is first asked for (`units`): addr2line reads every
//! unit's abbreviations and line program header when a context is made,
//! which for the C library's detached DWARF (4,126 units) took some 20 ms
//! of every run that executed a few of its functions.

use std::collections::HashMap;
use std::path::Path;

use gimli::{AttributeValue, DebugInfoOffset, Reader as _, UnitOffset};
use object::{CompressionFormat, Object, ObjectSection};

use crate::debug_file::Bytes;
use crate::demangle::demangle;
use crate::inflated;
use crate::units;
use crate::Frame;

/// Sections are slices of the whole file, shared by reference count, so the
/// context owns its data and the module needs no self-reference.
pub(crate) type Reader = gimli::EndianReader<gimli::RunTimeEndian, Bytes>;
type UnitRef<'a> = gimli::UnitRef<'a, Reader>;

pub(crate) struct Dwarf {
    source: Source,
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
    /// Where its compressed sections are kept inflated (inflated.rs).
    pub keep: Option<&'a Path>,
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
        Self::load_as(elf, sup, units::MIN_UNITS)
    }

    /// [`Dwarf::load`], a context per unit from `min_units` compile units
    /// on (`usize::MAX`: one context for the whole file).
    fn load_as(elf: &Elf<'_>, sup: Option<&Elf<'_>>, min_units: usize) -> Option<Dwarf> {
        if !has_dwarf(elf.file) {
            return None;
        }
        let sections = gimli::DwarfSections::load(|id| section(elf, id.name())).ok()?;
        let source = match sup {
            None => match units::index(&sections, min_units) {
                Some(index) => Source::Lazy(Box::new(units::Lazy::new(sections, index))),
                None => Source::Whole(Box::new(units::whole(&sections, None)?)),
            },
            Some(sup) => {
                let sup = gimli::DwarfSections::load(|id| section(sup, id.name())).ok()?;
                Source::Whole(Box::new(units::whole(&sections, Some(&sup))?))
            }
        };
        Some(Dwarf {
            source,
            units: OtherUnits::default(),
            functions: HashMap::new(),
        })
    }

    /// The source frames at file address `addr`, innermost first.
    pub fn frames(&mut self, addr: u64) -> Vec<Frame> {
        let mut frames = Vec::new();
        // `base`: where the context's units begin in the file's .debug_info
        // (a unit's own context sees only it, at 0).
        let Some((ctx, base)) = self.source.context(addr) else {
            return frames;
        };
        let Ok(mut iter) = ctx.find_frames(addr).skip_all_loads() else {
            return frames;
        };
        let unit = ctx.find_dwarf_and_unit(addr).skip_all_loads();
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
                    .entry((base + unit.header.offset().0, offset))
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

/// Where a file's frames come from.
enum Source {
    /// One context over every unit.
    Whole(Box<addr2line::Context<Reader>>),
    /// A context per compile unit, each made on first use.
    Lazy(Box<units::Lazy>),
}

impl Source {
    /// The context holding `addr`, and where its units begin in the file's
    /// .debug_info.
    fn context(&mut self, addr: u64) -> Option<(&addr2line::Context<Reader>, usize)> {
        let mut unit = None;
        if let Source::Lazy(lazy) = self {
            match lazy.prepare(addr) {
                units::Prepared::Ready(i) => unit = Some(i),
                units::Prepared::Nothing => return None,
                units::Prepared::Whole(ctx) => *self = Source::Whole(ctx),
            }
        }
        match self {
            Source::Whole(ctx) => Some((ctx, 0)),
            Source::Lazy(lazy) => lazy.unit(unit?),
        }
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
    // Kept only where a directory is named and the file has a build-id.
    let build_id = elf.keep.and_then(|_| elf.file.build_id().ok().flatten());
    let place = build_id.map(|build_id| inflated::Place {
        build_id,
        section: name,
        offset: range.offset,
        compressed: range.compressed_size,
        inflated: range.uncompressed_size,
    });
    let keep = elf.keep.zip(place.as_ref());
    if let Some(copy) = keep.and_then(|(dir, place)| inflated::kept(dir, place)) {
        let end = copy.len();
        return Ok(Reader::new(copy, endian).range(inflated::HEADER..end));
    }
    Ok(match section.uncompressed_data() {
        Ok(data) => {
            let data = data.into_owned();
            if let Some((dir, place)) = keep {
                inflated::keep(dir, place, &data);
            }
            Reader::new(Bytes::from(data), endian)
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use object::ObjectSection;
    use std::process::Command;

    /// A program of `n` C files, each with an inlined helper and a loop,
    /// built with `flags`.
    fn program(dir: &std::path::Path, n: usize, flags: &[&str]) -> std::path::PathBuf {
        let mut sources = Vec::new();
        let mut main = String::from("#include <stdio.h>\n");
        for i in 0..n {
            let name = format!("unit{i}.c");
            let text = format!(
                "static inline double sq{i}(double x) {{ return x * x + {i}.0; }}\n\
                 double f{i}(const double *a, int m) {{\n  double s = 0;\n  \
                 for (int k = 0; k < m; k++)\n    s += sq{i}(a[k]);\n  return s;\n}}\n"
            );
            std::fs::write(dir.join(&name), text).unwrap();
            main.push_str(&format!("double f{i}(const double *, int);\n"));
            sources.push(name);
        }
        main.push_str("int main(void) { double a[4] = {1, 2, 3, 4}, s = 0;\n");
        for i in 0..n {
            main.push_str(&format!("  s += f{i}(a, 4);\n"));
        }
        main.push_str("  printf(\"%g\\n\", s);\n  return 0;\n}\n");
        std::fs::write(dir.join("main.c"), main).unwrap();
        sources.push("main.c".into());
        let exe = dir.join("prog");
        let out = Command::new("gcc")
            .current_dir(dir)
            .args(flags)
            .args(&sources)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("gcc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    }

    /// Every address of `exe`'s .text: frames from a context per unit and
    /// from one context for the file are the same. Returns whether the
    /// file kept its contexts per unit after all the look-ups.
    fn same_frames(exe: &std::path::Path) -> bool {
        let bytes = Bytes::from(std::fs::read(exe).unwrap());
        let file = object::File::parse(&*bytes).unwrap();
        let elf = Elf {
            file: &file,
            bytes: &bytes,
            keep: None,
        };
        let mut per_unit = Dwarf::load_as(&elf, None, 1).unwrap();
        let mut whole = Dwarf::load_as(&elf, None, usize::MAX).unwrap();
        assert!(matches!(whole.source, Source::Whole(_)));
        let text = file.section_by_name(".text").unwrap();
        let mut with_line = 0;
        for addr in text.address()..text.address() + text.size() {
            let (a, b) = (per_unit.frames(addr), whole.frames(addr));
            assert_eq!(a, b, "{addr:#x}");
            with_line += usize::from(a.first().is_some_and(|f| f.line.is_some()));
        }
        assert!(with_line > 0, "no line found: the comparison tells nothing");
        matches!(per_unit.source, Source::Lazy(_))
    }

    /// For each unit of `exe`, whether it may refer to another.
    fn referring(exe: &std::path::Path) -> Vec<bool> {
        let bytes = Bytes::from(std::fs::read(exe).unwrap());
        let file = object::File::parse(&*bytes).unwrap();
        let elf = Elf {
            file: &file,
            bytes: &bytes,
            keep: None,
        };
        let sections = gimli::DwarfSections::load(|id| section(&elf, id.name())).unwrap();
        let dwarf = sections.borrow(Reader::clone);
        let mut headers = dwarf.units();
        let mut out = Vec::new();
        while let Some(h) = headers.next().unwrap() {
            let one = units::unit_alone(&sections, h.offset().0, h.length_including_self());
            out.push(units::refers_elsewhere(&one.unwrap()).unwrap());
        }
        out
    }

    /// Every .text address's frames from `exe` loaded with its compressed
    /// sections kept in `keep` (or inflated, with `None`).
    fn all_frames(exe: &std::path::Path, keep: Option<&Path>) -> Vec<Vec<Frame>> {
        let bytes = Bytes::from(std::fs::read(exe).unwrap());
        let file = object::File::parse(&*bytes).unwrap();
        let elf = Elf {
            file: &file,
            bytes: &bytes,
            keep,
        };
        let mut dwarf = Dwarf::load(&elf, None).unwrap();
        let text = file.section_by_name(".text").unwrap();
        (text.address()..text.address() + text.size())
            .map(|a| dwarf.frames(a))
            .collect()
    }

    /// The copies in `dir`, with their modification times.
    fn copies(dir: &Path) -> Vec<(String, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, e.metadata().unwrap().modified().unwrap())
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn compressed_sections_kept_inflated_give_the_same_frames() {
        let dir = tempfile::tempdir().unwrap();
        let exe = program(dir.path(), 3, &["-O2", "-g", "-gz=zlib"]);
        let inflated = all_frames(&exe, None);
        let lines = inflated
            .iter()
            .filter(|f| f.first().is_some_and(|f| f.line.is_some()));
        assert!(
            lines.count() > 0,
            "no line found: the comparison tells nothing"
        );
        let keep = dir.path().join("kept");
        assert_eq!(
            all_frames(&exe, Some(&keep)),
            inflated,
            "the first load, which keeps"
        );
        let kept = copies(&keep);
        assert!(
            kept.iter().any(|(n, _)| n.contains(".debug_info-")),
            "the compressed .debug_info is kept: {kept:?}"
        );
        assert_eq!(
            all_frames(&exe, Some(&keep)),
            inflated,
            "a load from the copies"
        );
        assert_eq!(
            copies(&keep),
            kept,
            "the copies were used, not written again"
        );
    }

    #[test]
    fn a_context_per_unit_gives_the_frames_of_one_context() {
        let dir = tempfile::tempdir().unwrap();
        let exe = program(dir.path(), 12, &["-O2", "-g"]);
        assert!(same_frames(&exe), "no unit refers to another here");
        assert_eq!(referring(&exe), [false; 13]);
    }

    #[test]
    fn units_that_refer_to_others_get_one_context() {
        // Link-time optimization: the functions' abstract origins are in
        // the units of the early debug information (DW_FORM_ref_addr), and
        // those units have no address ranges listed.
        let dir = tempfile::tempdir().unwrap();
        let exe = program(dir.path(), 12, &["-O2", "-g", "-flto"]);
        assert!(!same_frames(&exe), "one context for the LTO program");
        assert!(referring(&exe).contains(&true));
    }
}
