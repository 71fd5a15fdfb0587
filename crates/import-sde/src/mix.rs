//! The instruction-mix parser: `sde -omix FILE` (with or without `-iform`).
//!
//! SDE writes, among much else (top blocks, per-function tables), one
//! histogram per thread and one for the whole process:
//!
//! ```text
//! # EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 28764 EMIT# 1
//! #
//! # $dynamic-counts
//! #
//! # TID 0
//! # iform                                   count
//! #
//! *elements_fp_double_4                      12345
//! VFMADD231PD_YMMqq_YMMqq_YMMqq              47496
//! *total                                    987654
//! # END_DYNAMIC_STATS
//! ...
//! # EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
//! #
//! # $global-dynamic-counts
//! ...
//! # END_GLOBAL_DYNAMIC_STATS
//! ```
//!
//! Rows are `NAME COUNT`; group rows start with `*`. Only these two kinds of
//! section are read: the per-function tables hold the same rows again and
//! must not be added in. The markers follow Pin's `mix-mt` tool, which SDE's
//! mix extends (it adds `OS-TID`), and the parsers that public FLOP scripts
//! use on SDE output.

use crate::error::{quote, SdeError};
use std::collections::BTreeMap;

/// One counter row of a histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub count: u64,
    /// Where the row is (1-based), for messages.
    pub line: usize,
}

/// One histogram: counter name (as printed, `*` included) -> count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Line of the section's `# EMIT_...` marker.
    pub line: usize,
    pub counters: BTreeMap<String, Counter>,
}

impl Histogram {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).map(|c| c.count)
    }
}

/// One thread's histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadHistogram {
    /// SDE's thread number (0, 1, ...).
    pub tid: u64,
    /// The operating system's thread id, when SDE printed it.
    pub os_tid: Option<u64>,
    pub histogram: Histogram,
}

/// A parsed mix file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixFile {
    /// The name used in messages (usually the path).
    pub name: String,
    /// The `EMIT_GLOBAL_DYNAMIC_STATS` histogram: the whole process.
    pub global: Histogram,
    /// The `EMIT_DYNAMIC_STATS FOR TID` histograms, by thread number.
    pub threads: Vec<ThreadHistogram>,
    /// Things worth telling the user that are not errors.
    pub notes: Vec<String>,
}

enum Open {
    Global(Histogram),
    Thread(u64, Option<u64>, Histogram),
}

impl Open {
    fn end_marker(&self) -> &'static str {
        match self {
            Open::Global(_) => "`# END_GLOBAL_DYNAMIC_STATS`",
            Open::Thread(..) => "`# END_DYNAMIC_STATS`",
        }
    }
}

const WHAT_MIX: &str = "an Intel SDE instruction mix (`sde -omix FILE`, with or without `-iform`)";

/// Parses the text of an `-omix` file. `name` is used in messages.
pub fn parse_mix(text: &str, name: &str) -> Result<MixFile, SdeError> {
    if text.trim().is_empty() {
        return Err(SdeError::parse(name, 1, WHAT_MIX, "an empty file"));
    }
    let mut open: Option<Open> = None;
    let mut globals: Vec<Histogram> = Vec::new();
    let mut threads: BTreeMap<u64, Vec<(Option<u64>, Histogram)>> = BTreeMap::new();
    let mut saw_sde_marker = false;
    let mut last_line = 0;

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        last_line = line_no;
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.split_whitespace();
            let first = words.next().unwrap_or("");
            if first == "Mix" || first.starts_with("EMIT_") || first.starts_with("END_") {
                saw_sde_marker = true;
            }
            match first {
                "EMIT_GLOBAL_DYNAMIC_STATS" | "EMIT_DYNAMIC_STATS" => {
                    if let Some(o) = &open {
                        return Err(SdeError::parse(
                            name,
                            line_no,
                            o.end_marker(),
                            format!("a new section {}", quote(line)),
                        ));
                    }
                    let histogram = Histogram {
                        line: line_no,
                        counters: BTreeMap::new(),
                    };
                    open = Some(if first == "EMIT_GLOBAL_DYNAMIC_STATS" {
                        Open::Global(histogram)
                    } else {
                        let (tid, os_tid) = thread_header(words.collect(), name, line_no, line)?;
                        Open::Thread(tid, os_tid, histogram)
                    });
                }
                "END_GLOBAL_DYNAMIC_STATS" => match open.take() {
                    Some(Open::Global(h)) => globals.push(h),
                    other => return Err(misplaced_end(name, line_no, line, other.as_ref())),
                },
                "END_DYNAMIC_STATS" => match open.take() {
                    Some(Open::Thread(tid, os_tid, h)) => {
                        threads.entry(tid).or_default().push((os_tid, h))
                    }
                    other => return Err(misplaced_end(name, line_no, line, other.as_ref())),
                },
                // Another section's marker while ours is open: our end marker is missing.
                other if other.starts_with("EMIT_") || other.starts_with("END_") => {
                    if let Some(o) = &open {
                        return Err(SdeError::parse(name, line_no, o.end_marker(), quote(line)));
                    }
                }
                _ => {} // a comment, a column header, or a section we do not read
            }
            continue;
        }
        let histogram = match &mut open {
            Some(Open::Global(h)) | Some(Open::Thread(_, _, h)) => h,
            None => continue, // top blocks, function tables, image lists, program output
        };
        if line.is_empty() {
            continue;
        }
        let (counter, count) = data_row(line, name, line_no)?;
        let slot = histogram
            .counters
            .entry(counter.to_string())
            .or_insert(Counter {
                count: 0,
                line: line_no,
            });
        slot.count = slot.count.checked_add(count).ok_or_else(|| {
            SdeError::parse(
                name,
                line_no,
                "counts whose sum fits in 64 bits",
                format!("a second `{counter}` row"),
            )
        })?;
    }

    if let Some(o) = open {
        return Err(SdeError::parse(
            name,
            last_line,
            o.end_marker(),
            "the end of the file (the file is truncated: SDE completes it when the program exits)",
        ));
    }
    let mut notes = Vec::new();
    let global = match globals.len() {
        0 if saw_sde_marker || !threads.is_empty() => {
            return Err(SdeError::parse(
                name,
                last_line,
                "a `# EMIT_GLOBAL_DYNAMIC_STATS` section",
                "the end of the file (the file is truncated: SDE writes the global section last, when the program exits)",
            ))
        }
        0 => {
            let first = text.lines().next().unwrap_or("");
            return Err(SdeError::parse(name, 1, WHAT_MIX, format!("{} and no SDE section in the file", quote(first))));
        }
        1 => globals.pop().unwrap_or_default(),
        n => {
            let last = globals.pop().unwrap_or_default();
            notes.push(format!(
                "{n} `EMIT_GLOBAL_DYNAMIC_STATS` sections (one per stats emit); read the last one, at line {}, as the run's totals",
                last.line
            ));
            last
        }
    };
    let threads = threads
        .into_iter()
        .map(|(tid, mut emits)| {
            if emits.len() > 1 {
                notes.push(format!(
                    "thread {tid} has {} `EMIT_DYNAMIC_STATS` sections; read the last one",
                    emits.len()
                ));
            }
            let (os_tid, histogram) = emits.pop().unwrap_or_default();
            ThreadHistogram {
                tid,
                os_tid,
                histogram,
            }
        })
        .collect();
    Ok(MixFile {
        name: name.to_string(),
        global,
        threads,
        notes,
    })
}

/// Reads `FOR TID <n> [OS-TID <m>] ...` after `EMIT_DYNAMIC_STATS`.
fn thread_header(
    words: Vec<&str>,
    name: &str,
    line_no: usize,
    line: &str,
) -> Result<(u64, Option<u64>), SdeError> {
    let expected = "`# EMIT_DYNAMIC_STATS FOR TID <number> [OS-TID <number>]`";
    let tid = match words.as_slice() {
        ["FOR", "TID", tid, ..] => tid.trim_end_matches(',').parse::<u64>().ok(),
        _ => None,
    };
    let tid = tid.ok_or_else(|| SdeError::parse(name, line_no, expected, quote(line)))?;
    let os_tid = match words.iter().position(|w| *w == "OS-TID") {
        Some(i) => Some(
            words
                .get(i + 1)
                .and_then(|w| w.trim_end_matches(',').parse::<u64>().ok())
                .ok_or_else(|| SdeError::parse(name, line_no, expected, quote(line)))?,
        ),
        None => None,
    };
    Ok((tid, os_tid))
}

fn misplaced_end(name: &str, line_no: usize, line: &str, open: Option<&Open>) -> SdeError {
    match open {
        Some(o) => SdeError::parse(name, line_no, o.end_marker(), quote(line)),
        None => SdeError::parse(
            name,
            line_no,
            "an `# EMIT_...` marker before this end marker",
            quote(line),
        ),
    }
}

/// `NAME COUNT`, where SDE's predicated-instruction profiling (`-p`) may add
/// further count columns: the first count is the executed one.
fn data_row<'a>(line: &'a str, name: &str, line_no: usize) -> Result<(&'a str, u64), SdeError> {
    let expected = "a histogram row `NAME COUNT` (e.g. `*elements_fp_double_4  12345`)";
    let mut words = line.split_whitespace();
    let counter = words.next().unwrap_or("");
    let count = words.next().and_then(|w| w.parse::<u64>().ok());
    let rest_numeric = words.all(|w| w.bytes().all(|b| b.is_ascii_digit()));
    match count {
        Some(count) if rest_numeric => Ok((counter, count)),
        _ => Err(SdeError::parse(name, line_no, expected, quote(line))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "\
# Mix output version 10
# EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 77 EMIT# 1
#
# $dynamic-counts
*total  10
# END_DYNAMIC_STATS
# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
#
# $global-dynamic-counts
#
*elements_fp_double_4   3
*total  10

# END_GLOBAL_DYNAMIC_STATS
";

    #[test]
    fn reads_the_global_and_thread_histograms() {
        let m = parse_mix(SMALL, "m").unwrap();
        assert_eq!(m.global.get("*total"), Some(10));
        assert_eq!(m.global.get("*elements_fp_double_4"), Some(3));
        assert_eq!(m.global.counters["*total"].line, 12);
        assert_eq!(m.threads.len(), 1);
        assert_eq!((m.threads[0].tid, m.threads[0].os_tid), (0, Some(77)));
    }

    #[test]
    fn pin_style_thread_header_without_os_tid() {
        let text = SMALL.replace("FOR TID 0  OS-TID 77 EMIT# 1", "FOR TID 3 EMIT #1");
        let m = parse_mix(&text, "m").unwrap();
        assert_eq!((m.threads[0].tid, m.threads[0].os_tid), (3, None));
    }

    #[test]
    fn a_row_that_is_not_name_count_is_an_error_with_its_line() {
        let text = SMALL.replace("*total  10\n\n", "*total  ten\n\n");
        let e = parse_mix(&text, "m").unwrap_err();
        assert_eq!(e.line(), Some(12));
        assert!(
            e.to_string().starts_with("m:12: expected a histogram row"),
            "{e}"
        );
    }
}
