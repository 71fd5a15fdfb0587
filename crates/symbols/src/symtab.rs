//! Function symbols of one ELF file, sorted for address lookup.
//!
//! `object` reads the tables; its own `SymbolMap` drops sizes, which we need
//! (a function's extent, and not attributing padding or data to the function
//! before it), so the sorted table is built here.

use std::collections::HashMap;

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use crate::demangle::demangle;

/// A function symbol, in the file's address space.
#[derive(Clone, Debug)]
pub(crate) struct FileSymbol {
    pub name: String,
    pub start: u64,
    pub size: Option<u64>,
}

struct Entry {
    start: u64,
    /// One past the last address attributed to it: start + size, or for a
    /// symbol without a size the next symbol's start, capped at its section's
    /// end.
    end: u64,
    size: Option<u64>,
    /// Preference among aliases at one address: strong global 0, weak 1,
    /// local 2.
    rank: u8,
    name: Box<str>,
}

#[derive(Default)]
pub(crate) struct SymbolTable {
    entries: Vec<Entry>,
    demangled: HashMap<usize, String>,
}

/// Which of an ELF file's two symbol tables to read.
#[derive(Clone, Copy)]
pub(crate) enum Table {
    Static,
    Dynamic,
}

impl SymbolTable {
    /// The function symbols of `file`'s `.symtab` or `.dynsym`; empty when it
    /// has none.
    pub fn read(file: &object::File<'_>, table: Table) -> SymbolTable {
        let symbols = match table {
            Table::Static => file.symbols(),
            Table::Dynamic => file.dynamic_symbols(),
        };
        let mut section_ends = HashMap::new();
        let mut entries = Vec::new();
        for sym in symbols {
            if sym.kind() != SymbolKind::Text || !sym.is_definition() {
                continue;
            }
            let Ok(name) = sym.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let start = sym.address();
            let size = sym.size();
            let end = if size > 0 {
                start.saturating_add(size)
            } else {
                // Bounded below by the next symbol once sorted.
                let index = sym.section_index();
                *section_ends.entry(index).or_insert_with(|| {
                    index
                        .and_then(|i| file.section_by_index(i).ok())
                        .map_or(u64::MAX, |s| s.address().saturating_add(s.size()))
                })
            };
            let rank = if sym.is_local() {
                2
            } else if sym.is_weak() {
                1
            } else {
                0
            };
            entries.push(Entry {
                start,
                end,
                size: (size > 0).then_some(size),
                rank,
                name: name.into(),
            });
        }
        // A table without symbols of its own stays empty (the caller then
        // reads the next table: .dynsym of a stripped library), whatever
        // PLT stubs the file has; they are named along with real symbols.
        let stubs = if entries.is_empty() {
            Vec::new()
        } else {
            crate::plt::stubs(file)
        };
        for (start, size, name) in stubs {
            entries.push(Entry {
                start,
                end: start + size,
                size: Some(size),
                rank: 2,
                name: name.into(),
            });
        }
        // Among aliases at one address, the one a reader knows: strong before
        // weak before local, then fewest leading underscores (glibc's
        // `printf` over `_IO_printf`), then by name, for stable answers.
        let underscores = |e: &Entry| e.name.len() - e.name.trim_start_matches('_').len();
        entries.sort_by(|a, b| {
            (a.start, a.rank, underscores(a), &a.name).cmp(&(
                b.start,
                b.rank,
                underscores(b),
                &b.name,
            ))
        });
        entries.dedup_by_key(|e| e.start);
        for i in 1..entries.len() {
            let next = entries[i].start;
            let prev = &mut entries[i - 1];
            if prev.size.is_none() && prev.end > next {
                prev.end = next;
            }
        }
        SymbolTable {
            entries,
            demangled: HashMap::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where `addr` falls: the position after the last entry starting at
    /// or before it, and the entry [`SymbolTable::lookup`] chooses, if any.
    /// A symbol nested in a larger one (rare: hand-written assembly) ends
    /// before addr while its container still covers it, so the search looks
    /// back a little (8 entries) before giving up.
    fn search(&self, addr: u64) -> (usize, Option<usize>) {
        let after = self.entries.partition_point(|e| e.start <= addr);
        let chosen = (after.saturating_sub(8)..after)
            .rev()
            .find(|&i| addr < self.entries[i].end);
        (after, chosen)
    }

    /// The next entry's start after position `after` (`u64::MAX` if none).
    fn next_start(&self, after: usize) -> u64 {
        self.entries.get(after).map_or(u64::MAX, |e| e.start)
    }

    /// Whether [`SymbolTable::lookup`] finds an entry for `addr`, and one
    /// past the last address from `addr` on that it answers as it answers
    /// `addr`: no entry starts before it (one would be chosen from there),
    /// and the entry chosen for `addr` still covers it (the later ones,
    /// searched first, have ended before `addr` and stay ended).
    pub fn same_until(&self, addr: u64) -> (bool, u64) {
        let (after, chosen) = self.search(addr);
        let next = self.next_start(after);
        match chosen {
            Some(i) => (true, self.entries[i].end.min(next)),
            None => (false, next),
        }
    }

    /// Around an address no entry covers: the furthest end of the entries
    /// [`SymbolTable::lookup`] would search before it (0 if none), and the
    /// next entry's start (`u64::MAX` if none).
    pub fn gap_around(&self, addr: u64) -> (u64, u64) {
        let (after, _) = self.search(addr);
        let before = self.entries[after.saturating_sub(8)..after]
            .iter()
            .map(|e| e.end)
            .filter(|&end| end <= addr)
            .max()
            .unwrap_or(0);
        (before, self.next_start(after))
    }

    /// The function containing file address `addr`, its name demangled.
    pub fn lookup(&mut self, addr: u64) -> Option<FileSymbol> {
        let index = self.search(addr).1?;
        let entry = &self.entries[index];
        let name = self
            .demangled
            .entry(index)
            .or_insert_with(|| demangle(&entry.name).into_owned())
            .clone();
        Some(FileSymbol {
            name,
            start: entry.start,
            size: entry.size,
        })
    }
}
