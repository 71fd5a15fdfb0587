//! Names a JIT compiler gives its generated code in a perf map,
//! `/tmp/perf-<pid>.map`: one line per piece of code, `START SIZE name`
//! with START and SIZE in hexadecimal (`0x` optional), the convention
//! Linux perf reads (written by V8 with `--perf-basic-prof`, the JVM's
//! perf-map agents, Mono with `--jitmap`, .NET with
//! `DOTNET_PerfMapEnabled=1`, Erlang with `+JPperf map`, Julia,
//! CPython 3.12's `-X perf`).
//!
//! Code is moved and freed as the program runs, and the map only grows:
//! where entries overlap, the one written last for a start address wins,
//! and an address is named by the entry starting nearest below it that
//! covers it. Malformed lines are skipped.

use std::path::{Path, PathBuf};

/// One named piece of generated code: `start..end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitSymbol {
    pub start: u64,
    pub end: u64,
    pub name: String,
}

/// A perf map, by start address.
#[derive(Clone, Debug, Default)]
pub struct PerfMap {
    symbols: Vec<JitSymbol>,
}

/// How far back from an address's nearest start a covering entry is looked
/// for: entries nest only where code was moved over older code.
const OVERLAP_SCAN: usize = 64;

impl PerfMap {
    /// Where process `pid`'s perf map is, if it wrote one.
    pub fn path_of(pid: u64) -> PathBuf {
        PathBuf::from(format!("/tmp/perf-{pid}.map"))
    }

    /// Reads the perf map at `path`; `None` if there is none (or it cannot
    /// be read: the code then stays named by page).
    pub fn read(path: &Path) -> Option<PerfMap> {
        let text = std::fs::read(path).ok()?;
        Some(PerfMap::parse(&String::from_utf8_lossy(&text)))
    }

    /// The entries of a perf map's text.
    pub fn parse(text: &str) -> PerfMap {
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        let mut symbols: Vec<(u64, usize, JitSymbol)> = Vec::new();
        for (order, line) in text.lines().enumerate() {
            let mut f = line.trim().splitn(3, ' ');
            let (Some(start), Some(size), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Some(start), Some(size)) = (hex(start), hex(size)) else {
                continue;
            };
            if size == 0 {
                continue;
            }
            let end = start.saturating_add(size);
            let name = name.trim().to_string();
            symbols.push((start, order, JitSymbol { start, end, name }));
        }
        // By start, the last written first among equal starts; then one
        // entry a start.
        symbols.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        symbols.dedup_by_key(|s| s.0);
        PerfMap {
            symbols: symbols.into_iter().map(|(_, _, s)| s).collect(),
        }
    }

    /// Whether the map names nothing.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The entry naming `addr`, if any.
    pub fn lookup(&self, addr: u64) -> Option<&JitSymbol> {
        let below = self.symbols.partition_point(|s| s.start <= addr);
        self.symbols[below.saturating_sub(OVERLAP_SCAN)..below]
            .iter()
            .rev()
            .find(|s| addr < s.end)
    }

    /// The first address above `addr` where another entry starts (where
    /// the name [`PerfMap::lookup`] gives `addr` may change), `u64::MAX`
    /// if none.
    pub fn next_start(&self, addr: u64) -> u64 {
        let i = self.symbols.partition_point(|s| s.start <= addr);
        self.symbols.get(i).map_or(u64::MAX, |s| s.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_by_start_with_the_last_written_winning() {
        let map = PerfMap::parse(
            "1000 100 Builtin:A\n\
             0x2000 0x80 JS:*run /x.js:27:13\n\
             bad line\n\
             3000 0 empty\n\
             2000 40 JS:*run again\n\
             2040 10 inner\n",
        );
        let name = |a| map.lookup(a).map(|s| s.name.as_str());
        assert_eq!(name(0xfff), None);
        assert_eq!(name(0x1000), Some("Builtin:A"));
        assert_eq!(name(0x10ff), Some("Builtin:A"));
        assert_eq!(name(0x1100), None);
        // 0x2000 was written twice: the second (0x40 long) counts.
        assert_eq!(name(0x2000), Some("JS:*run again"));
        assert_eq!(name(0x2045), Some("inner"));
        assert_eq!(name(0x2050), None);
        assert_eq!(name(0x3000), None, "a zero-sized entry names nothing");
        assert_eq!(map.next_start(0x1000), 0x2000);
        assert_eq!(map.next_start(0x2000), 0x2040);
        assert_eq!(map.next_start(0x2040), u64::MAX);
        assert!(PerfMap::parse("").is_empty());
    }
}
