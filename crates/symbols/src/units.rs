//! A context per compile unit, made when an address in the unit is first
//! asked for, found through `.debug_aranges`.
//!
//! Each unit's context sees a `.debug_info` holding that unit alone. That
//! is exact only for units that refer to no other: a unit whose
//! abbreviations use a form that points into another unit (`ref_addr`,
//! dwz's `GNU_ref_alt`, `ref_sup`) turns the file back to one context for
//! every unit, as does a file whose compile units are not all listed in
//! `.debug_aranges` (clang writes none), or one with partial, skeleton or
//! split units.

use std::collections::HashSet;

use gimli::{DebugAranges, DebugInfo, DwarfSections, Reader as _, Section};

use crate::dwarf::Reader;

/// Compile units from which a file gets a context per unit: below, one
/// context costs little (a program's own DWARF), and a handful of unit
/// contexts would cost more than it saves.
pub(crate) const MIN_UNITS: usize = 64;

type Context = addr2line::Context<Reader>;

pub(crate) struct Lazy {
    sections: DwarfSections<Reader>,
    /// Address ranges by start: (start, end, unit).
    ranges: Vec<(u64, u64, usize)>,
    units: Vec<Unit>,
}

struct Unit {
    /// Where it is in `.debug_info`, and its length with its header.
    offset: usize,
    len: usize,
    /// Its context once asked for (`Some(None)`: it did not parse).
    context: Option<Option<Context>>,
}

/// What [`Lazy::prepare`] found at an address.
pub(crate) enum Prepared {
    /// The context of unit `.0`, which holds it, is made ([`Lazy::unit`]).
    Ready(usize),
    /// No unit holds it.
    Nothing,
    /// The unit refers to other units: a context for the whole file.
    Whole(Box<Context>),
}

impl Lazy {
    /// Contexts per unit for `sections`, whose units [`index`] listed.
    pub fn new(sections: DwarfSections<Reader>, index: Index) -> Lazy {
        Lazy {
            sections,
            ranges: index.ranges,
            units: index.units,
        }
    }

    fn unit_at(&self, addr: u64) -> Option<usize> {
        let i = self
            .ranges
            .partition_point(|r| r.0 <= addr)
            .checked_sub(1)?;
        // Ranges of different units do not overlap in what compilers
        // write; the nearest start below is the one.
        let (_, end, unit) = self.ranges[i];
        (addr < end).then_some(unit)
    }

    /// Makes the context of the unit holding `addr`, if it has none yet.
    pub fn prepare(&mut self, addr: u64) -> Prepared {
        let Some(i) = self.unit_at(addr) else {
            return Prepared::Nothing;
        };
        if self.units[i].context.is_some() {
            return Prepared::Ready(i);
        }
        let Some(mut dwarf) = unit_alone(&self.sections, self.units[i].offset, self.units[i].len)
        else {
            self.units[i].context = Some(None);
            return Prepared::Ready(i);
        };
        match refers_elsewhere(&dwarf) {
            Some(false) => {}
            _ => {
                if let Some(ctx) = whole(&self.sections, None) {
                    return Prepared::Whole(Box::new(ctx));
                }
                // Not tried again for this unit's other addresses.
                self.units[i].context = Some(None);
                return Prepared::Nothing;
            }
        }
        dwarf.debug_aranges = DebugAranges::from(empty(self.sections.debug_info.reader()));
        self.units[i].context = Some(addr2line::Context::from_dwarf(dwarf).ok());
        Prepared::Ready(i)
    }

    /// The context of unit `i` (made by [`Lazy::prepare`]), and where the
    /// unit begins in `.debug_info`.
    pub fn unit(&self, i: usize) -> Option<(&Context, usize)> {
        let unit = &self.units[i];
        Some((unit.context.as_ref()?.as_ref()?, unit.offset))
    }
}

/// The DWARF of `sections` with a `.debug_info` holding only the unit at
/// `offset`, `len` bytes with its header; `None` past the section's end.
pub(crate) fn unit_alone(
    sections: &DwarfSections<Reader>,
    offset: usize,
    len: usize,
) -> Option<gimli::Dwarf<Reader>> {
    let mut info = sections.debug_info.reader().clone();
    info.skip(offset).ok()?;
    info.truncate(len).ok()?;
    let mut dwarf = sections.borrow(Reader::clone);
    dwarf.debug_info = DebugInfo::from(info);
    Some(dwarf)
}

/// One context over every unit of `sections` (and of dwz's `sup`).
pub(crate) fn whole(
    sections: &DwarfSections<Reader>,
    sup: Option<&DwarfSections<Reader>>,
) -> Option<Context> {
    let mut dwarf = sections.borrow(Reader::clone);
    if let Some(sup) = sup {
        dwarf.set_sup(sup.borrow(Reader::clone));
    }
    dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::Duplicates);
    addr2line::Context::from_dwarf(dwarf).ok()
}

/// A file's compile units and their address ranges.
pub(crate) struct Index {
    units: Vec<Unit>,
    /// By start: (start, end, unit).
    ranges: Vec<(u64, u64, usize)>,
}

/// Every compile unit (offset, length) and the address ranges of each
/// from `.debug_aranges`; `None` below `min_units` compile units, when a
/// compile unit is missing there, or when the file has a unit of another
/// kind than compile and type units.
pub(crate) fn index(sections: &DwarfSections<Reader>, min_units: usize) -> Option<Index> {
    let dwarf = sections.borrow(Reader::clone);
    let mut units = Vec::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next().ok()? {
        match header.type_() {
            gimli::UnitType::Compilation => {}
            gimli::UnitType::Type { .. } => continue,
            _ => return None,
        }
        units.push(Unit {
            offset: header.offset().0,
            len: header.length_including_self(),
            context: None,
        });
    }
    if units.len() < min_units {
        return None;
    }
    let mut ranges = Vec::new();
    let mut listed = HashSet::new();
    let mut sets = dwarf.debug_aranges.headers();
    while let Some(set) = sets.next().ok()? {
        let at = set.debug_info_offset().0;
        let unit = units.binary_search_by_key(&at, |u| u.offset).ok()?;
        listed.insert(unit);
        let mut entries = set.entries();
        while let Some(e) = entries.next().ok()? {
            let r = e.range();
            if r.end > r.begin {
                ranges.push((r.begin, r.end, unit));
            }
        }
    }
    if listed.len() != units.len() {
        return None;
    }
    ranges.sort_unstable();
    Some(Index { units, ranges })
}

/// Whether the one unit of `dwarf` may refer to a DIE of another unit:
/// a form in its abbreviations that holds a `.debug_info` offset (or any
/// form, through `DW_FORM_indirect`). `None` when they do not parse.
///
/// Read here with gimli's reader because gimli's `Abbreviations` offers
/// no walk over a table's entries, only a look-up by code.
pub(crate) fn refers_elsewhere(dwarf: &gimli::Dwarf<Reader>) -> Option<bool> {
    use gimli::constants::*;
    let header = dwarf.units().next().ok()??;
    let mut r = dwarf.debug_abbrev.reader().clone();
    r.skip(header.debug_abbrev_offset().0).ok()?;
    loop {
        if r.read_uleb128().ok()? == 0 {
            return Some(false);
        }
        r.read_uleb128().ok()?; // tag
        r.read_u8().ok()?; // children
        loop {
            let (name, form) = (r.read_uleb128().ok()?, r.read_uleb128().ok()?);
            if name == 0 && form == 0 {
                break;
            }
            let form = DwForm(u16::try_from(form).ok()?);
            if [
                DW_FORM_ref_addr,
                DW_FORM_GNU_ref_alt,
                DW_FORM_ref_sup4,
                DW_FORM_ref_sup8,
                DW_FORM_indirect,
            ]
            .contains(&form)
            {
                return Some(true);
            }
            if form == DW_FORM_implicit_const {
                r.read_sleb128().ok()?;
            }
        }
    }
}

/// An empty section of `like`'s data and byte order.
fn empty(like: &Reader) -> Reader {
    let mut r = like.clone();
    r.truncate(0).ok();
    r
}
