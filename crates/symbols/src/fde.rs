//! Function extents of stripped code, from `.eh_frame`.
//!
//! Strip removes `.symtab` but not the unwind tables: each FDE (Frame
//! Description Entry) covers one function, or one part of a split function
//! (gcc's `.cold` parts have their own), so its start is a stable name for
//! code without symbols. gimli parses the section.

use gimli::UnwindSection;
use object::{Object, ObjectSection};

/// FDE address ranges of one file, sorted by start, in the file's address
/// space.
#[derive(Default)]
pub(crate) struct FdeTable {
    ranges: Vec<(u64, u64)>,
}

impl FdeTable {
    pub fn read(file: &object::File<'_>) -> FdeTable {
        let Some(section) = file.section_by_name(".eh_frame") else {
            return FdeTable::default();
        };
        let Ok(data) = section.data() else {
            return FdeTable::default();
        };
        let endian = if file.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let mut eh_frame = gimli::EhFrame::new(data, endian);
        eh_frame.set_address_size(if file.is_64() { 8 } else { 4 });
        let address_of = |name: &str| file.section_by_name(name).map(|s| s.address());
        let mut bases = gimli::BaseAddresses::default().set_eh_frame(section.address());
        if let Some(a) = address_of(".eh_frame_hdr") {
            bases = bases.set_eh_frame_hdr(a);
        }
        if let Some(a) = address_of(".text") {
            bases = bases.set_text(a);
        }
        if let Some(a) = address_of(".got") {
            bases = bases.set_got(a);
        }

        let mut ranges = Vec::new();
        let mut entries = eh_frame.entries(&bases);
        // A malformed entry ends the walk: the ranges read so far stay good.
        while let Ok(Some(entry)) = entries.next() {
            let gimli::CieOrFde::Fde(partial) = entry else {
                continue;
            };
            let Ok(fde) =
                partial.parse(|section, bases, offset| section.cie_from_offset(bases, offset))
            else {
                continue;
            };
            if fde.len() > 0 {
                ranges.push((fde.initial_address(), fde.len()));
            }
        }
        ranges.sort_unstable();
        ranges.dedup_by_key(|r| r.0);
        FdeTable { ranges }
    }

    /// The FDE covering file address `addr`: its start and length.
    pub fn lookup(&self, addr: u64) -> Option<(u64, u64)> {
        let after = self.ranges.partition_point(|r| r.0 <= addr);
        let &(start, len) = self.ranges.get(after.checked_sub(1)?)?;
        (addr - start < len).then_some((start, len))
    }

    /// One past the last address from `addr` on that [`FdeTable::lookup`]
    /// answers as it answers `addr`, where an FDE covers `addr`: its end,
    /// or the next FDE's start if one begins inside it.
    pub fn same_until(&self, addr: u64) -> Option<u64> {
        let after = self.ranges.partition_point(|r| r.0 <= addr);
        let (start, len) = self.lookup(addr)?;
        let next = self.ranges.get(after).map_or(u64::MAX, |r| r.0);
        Some((start + len).min(next))
    }

    /// Around an address no FDE covers: the end of the FDE before it (0 if
    /// none), and the next FDE's start (`u64::MAX` if none).
    pub fn gap_around(&self, addr: u64) -> (u64, u64) {
        let after = self.ranges.partition_point(|r| r.0 <= addr);
        let before = after
            .checked_sub(1)
            .map_or(0, |i| self.ranges[i].0 + self.ranges[i].1);
        let next = self.ranges.get(after).map_or(u64::MAX, |r| r.0);
        (before.min(addr), next)
    }
}
