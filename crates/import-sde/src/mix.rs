//! The instruction-mix parser: `sde -omix FILE` (with or without `-iform`).
//!
//! SDE writes, for each thread, the thread's histogram, a table of its
//! functions ranked by instructions and one histogram per function; then the
//! same function report for the whole process (`-global_functions`, on by
//! default); then the process's histogram:
//!
//! ```text
//! # EMIT_IMAGE_ADDRESSES
//! /home/user/app.exe                                  400000        402fff
//! # END_IMAGE_ADDRESSES
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
//! # FUNCTION TOTALS FOR TID 0  OS-TID 28764
//! ...
//! # END FUNCTION TOTALS
//! # EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 28764 EMIT# 1
//! #
//! # $dynamic-counts-for-function: kernel  IMG: /home/user/app.exe at [0x401a20, 0x401c00)  52.014%
//! #
//! # TID 0
//! # iform                                   count
//! #
//! *elements_fp_double_4                      12000
//! *total                                    513770
//! #
//! # $dynamic-counts-for-function: main  IMG: ...
//! ...
//! # END_PER_FUNCTION_STATS
//! ...
//! # EMIT_GLOBAL_DYNAMIC_STATS
//! # $dynamic-counts
//! *total                                         0
//! # END_DYNAMIC_STATS
//! #GLOBAL FUNCTION TOTALS
//! ...
//! # EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 0 EMIT# 2
//! ...
//! # END_PER_FUNCTION_STATS
//! # EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 2
//! #
//! # $global-dynamic-counts
//! ...
//! # END_GLOBAL_DYNAMIC_STATS
//! ```
//!
//! Rows are `NAME COUNT`; group rows start with `*`. Read: the image list,
//! the thread and process histograms, and the per-function histograms (each
//! starts at its `$dynamic-counts-for-function:` line and runs to the next
//! one). Top blocks, function totals tables and static counts are skipped;
//! any other `# EMIT_...` section outside those read is skipped with a note
//! (Pin's `EMIT_PC_STATS`, for one), never a failure.
//!
//! Variants met in public outputs and accepted: `# Mix output version 2`
//! (Pin's mix-mt) and `10` (SDE 8 and 9); thread headers with or without
//! `OS-TID`, with `EMIT# n`, `EMIT #n` or no number; a global section alone
//! (SDE 8.63, no thread sections) or after the threads; text after the
//! `$global-dynamic-counts` comment (read as a comment).
//! The markers follow Pin's `mix-mt` tool, which SDE's mix extends (it adds
//! `OS-TID`, `IMG:` and the whole-process report; `-global_functions` is in
//! SDE 9.33's list of mix knobs), and SDE 9's public `sde-mix-out.txt` files
//! (for one, SDE 9.24's in github.com/Pravesh-Jamgade/gapbs-exp, eight
//! threads), which show two quirks: the whole-process function
//! report opens with an `EMIT_GLOBAL_DYNAMIC_STATS` section closed by
//! `END_DYNAMIC_STATS` that holds `*total 0` (not the process's histogram:
//! skipped), and its `EMIT_PER_FUNCTION_STATS` says `FOR TID 0 OS-TID 0` like
//! thread 0's (told apart by following that section or `#GLOBAL FUNCTION
//! TOTALS`).

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
    /// Line of the section's `# EMIT_...` marker (of the function's
    /// `$dynamic-counts-for-function:` line for a function).
    pub line: usize,
    pub counters: BTreeMap<String, Counter>,
}

impl Histogram {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).map(|c| c.count)
    }

    /// Adds `count` to the row `counter` (first seen at `line`).
    pub(crate) fn add(
        &mut self,
        counter: &str,
        count: u64,
        line: usize,
        file: &str,
    ) -> Result<(), SdeError> {
        let slot = self
            .counters
            .entry(counter.to_string())
            .or_insert(Counter { count: 0, line });
        slot.count = slot.count.checked_add(count).ok_or_else(|| {
            SdeError::parse(
                file,
                line,
                "counts whose sum fits in 64 bits",
                format!("a second `{counter}` row"),
            )
        })?;
        Ok(())
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

/// One function's histogram, from its `$dynamic-counts-for-function:` line on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionHistogram {
    /// As SDE prints it (demangled unless `-demangle 0`; `UNKNOWN` for code
    /// without a symbol).
    pub name: String,
    /// The image holding it (`IMG:`), when printed (Pin's tool does not).
    pub image: Option<String>,
    /// Its code, `[start, end)` as loaded.
    pub range: Option<(u64, u64)>,
    pub histogram: Histogram,
}

/// One `EMIT_PER_FUNCTION_STATS` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionTable {
    /// The thread, or `None` for the whole process's table.
    pub tid: Option<u64>,
    /// Line of the section's marker.
    pub line: usize,
    pub functions: Vec<FunctionHistogram>,
}

/// One loaded image of `EMIT_IMAGE_ADDRESSES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub path: String,
    /// `[low, high]` as loaded.
    pub low: u64,
    pub high: u64,
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
    /// The per-function sections: one per thread (by number), then the
    /// whole process's, when the file has them.
    pub function_tables: Vec<FunctionTable>,
    /// The images SDE listed.
    pub images: Vec<Image>,
    /// Things worth telling the user that are not errors.
    pub notes: Vec<String>,
}

enum Open {
    Global(Histogram),
    Thread(u64, Option<u64>, Histogram),
    Functions(FunctionTable),
    Images,
}

impl Open {
    fn end_marker(&self) -> &'static str {
        match self {
            Open::Global(_) => "`# END_GLOBAL_DYNAMIC_STATS`",
            Open::Thread(..) => "`# END_DYNAMIC_STATS`",
            Open::Functions(_) => "`# END_PER_FUNCTION_STATS`",
            Open::Images => "`# END_IMAGE_ADDRESSES`",
        }
    }
}

/// Sections SDE writes that hold nothing the report needs: top blocks
/// (`-top_blocks`), static counts. Any other unknown `EMIT_` section is
/// skipped with a note.
const SKIPPED: [&str; 3] = [
    "EMIT_TOP_BLOCK_STATS",
    "EMIT_GLOBAL_TOP_BLOCK_STATS",
    "EMIT_STATIC_STATS",
];

const WHAT_MIX: &str = "an Intel SDE instruction mix (`sde -omix FILE`, with or without `-iform`)";

/// Parses the text of an `-omix` file. `name` is used in messages.
pub fn parse_mix(text: &str, name: &str) -> Result<MixFile, SdeError> {
    if text.trim().is_empty() {
        return Err(SdeError::parse(name, 1, WHAT_MIX, "an empty file"));
    }
    let mut open: Option<Open> = None;
    let mut globals: Vec<Histogram> = Vec::new();
    let mut threads: BTreeMap<u64, Vec<(Option<u64>, Histogram)>> = BTreeMap::new();
    let mut tables: Vec<FunctionTable> = Vec::new();
    let mut images: Vec<Image> = Vec::new();
    let mut notes = Vec::new();
    // The next `EMIT_PER_FUNCTION_STATS` is the whole process's.
    let mut process_table_next = false;
    let mut saw_sde_marker = false;
    let mut last_line = 0;

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        last_line = line_no;
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(header) = comment.strip_prefix("$dynamic-counts-for-function:") {
                match &mut open {
                    Some(Open::Functions(table)) => table.functions.push(FunctionHistogram {
                        histogram: Histogram {
                            line: line_no,
                            counters: BTreeMap::new(),
                        },
                        ..function_header(header)
                    }),
                    Some(o) => {
                        return Err(SdeError::parse(name, line_no, o.end_marker(), quote(line)))
                    }
                    None => {} // outside any section: not ours to read
                }
                continue;
            }
            if comment.starts_with("GLOBAL FUNCTION TOTALS") {
                process_table_next = true;
            }
            let mut words = comment.split_whitespace();
            let first = words.next().unwrap_or("");
            if first == "Mix" || first.starts_with("EMIT_") || first.starts_with("END_") {
                saw_sde_marker = true;
            }
            match first {
                "EMIT_GLOBAL_DYNAMIC_STATS"
                | "EMIT_DYNAMIC_STATS"
                | "EMIT_PER_FUNCTION_STATS"
                | "EMIT_IMAGE_ADDRESSES" => {
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
                    open = Some(match first {
                        "EMIT_GLOBAL_DYNAMIC_STATS" => Open::Global(histogram),
                        "EMIT_IMAGE_ADDRESSES" => Open::Images,
                        "EMIT_DYNAMIC_STATS" => {
                            process_table_next = false;
                            let (tid, os_tid) =
                                thread_header(first, words.collect(), name, line_no, line)?;
                            Open::Thread(tid, os_tid, histogram)
                        }
                        _ => {
                            let (tid, _) =
                                thread_header(first, words.collect(), name, line_no, line)?;
                            let tid = (!process_table_next).then_some(tid);
                            process_table_next = false;
                            Open::Functions(FunctionTable {
                                tid,
                                line: line_no,
                                functions: Vec::new(),
                            })
                        }
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
                    // The head of SDE's whole-process function report, not the process's histogram.
                    Some(Open::Global(h)) => {
                        if h.counters.values().any(|c| c.count > 0) {
                            notes.push(format!(
                                "the `EMIT_GLOBAL_DYNAMIC_STATS` section at line {} ends with `END_DYNAMIC_STATS`: \
                                 read as the head of SDE's whole-process function report, not as the run's totals",
                                h.line
                            ));
                        }
                        process_table_next = true;
                    }
                    other => return Err(misplaced_end(name, line_no, line, other.as_ref())),
                },
                "END_PER_FUNCTION_STATS" => match open.take() {
                    Some(Open::Functions(t)) => tables.push(t),
                    other => return Err(misplaced_end(name, line_no, line, other.as_ref())),
                },
                "END_IMAGE_ADDRESSES" => match open.take() {
                    Some(Open::Images) => {}
                    other => return Err(misplaced_end(name, line_no, line, other.as_ref())),
                },
                // Another section's marker while ours is open: our end marker is missing.
                other if other.starts_with("EMIT_") || other.starts_with("END_") => {
                    if let Some(o) = &open {
                        return Err(SdeError::parse(name, line_no, o.end_marker(), quote(line)));
                    }
                    if other.starts_with("EMIT_") && !SKIPPED.contains(&other) {
                        notes.push(format!(
                            "line {line_no}: section `{other}` is not one flopscope reads: skipped"
                        ));
                    }
                }
                _ => {} // a comment, a column header, or a section we do not read
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let histogram = match &mut open {
            Some(Open::Global(h)) | Some(Open::Thread(_, _, h)) => h,
            Some(Open::Functions(t)) => match t.functions.last_mut() {
                Some(f) => &mut f.histogram,
                None => return Err(SdeError::parse(
                    name,
                    line_no,
                    "a `# $dynamic-counts-for-function: NAME ...` line before a function's rows",
                    quote(line),
                )),
            },
            Some(Open::Images) => {
                images.extend(image_row(line));
                continue;
            }
            None => continue, // top blocks, function totals, program output
        };
        let (counter, count) = data_row(line, name, line_no)?;
        histogram.add(counter, count, line_no, name)?;
    }

    if let Some(o) = open {
        return Err(SdeError::parse(
            name,
            last_line,
            o.end_marker(),
            "the end of the file (the file is truncated: SDE completes it when the program exits)",
        ));
    }
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
        function_tables: last_tables(tables, &mut notes),
        images,
        notes,
    })
}

/// One table per thread and one for the process: the last of each (a file
/// with several stats emits has several).
fn last_tables(tables: Vec<FunctionTable>, notes: &mut Vec<String>) -> Vec<FunctionTable> {
    let mut by_scope: BTreeMap<(bool, u64), (usize, FunctionTable)> = BTreeMap::new();
    for t in tables {
        // Threads first by number, then the process.
        let key = (t.tid.is_none(), t.tid.unwrap_or(0));
        let seen = by_scope.get(&key).map_or(0, |(n, _)| *n);
        by_scope.insert(key, (seen + 1, t));
    }
    by_scope
        .into_values()
        .map(|(n, t)| {
            if n > 1 {
                let whose = match t.tid {
                    Some(tid) => format!("thread {tid} has"),
                    None => "the whole-process function report has".to_string(),
                };
                notes.push(format!(
                    "{whose} {n} `EMIT_PER_FUNCTION_STATS` sections; read the last one, at line {}",
                    t.line
                ));
            }
            t
        })
        .collect()
}

/// The text after `$dynamic-counts-for-function:`: `NAME  IMG: IMAGE at
/// [0xSTART, 0xEND)  SHARE%`, where Pin's tool leaves out `IMG: IMAGE` and
/// names may hold spaces (`void f<1ul>(void*, unsigned long)`).
fn function_header(text: &str) -> FunctionHistogram {
    let mut rest = text.trim();
    if let Some((head, last)) = rest.rsplit_once(char::is_whitespace) {
        let share = last
            .strip_suffix('%')
            .is_some_and(|n| n.parse::<f64>().is_ok());
        if share {
            rest = head.trim_end();
        }
    }
    let mut range = None;
    if let Some(at) = rest.rfind(" at [") {
        if let Some(r) = address_range(&rest[at + " at [".len()..]) {
            range = Some(r);
            rest = rest[..at].trim_end();
        }
    }
    let (name, image) = match rest.find("IMG:") {
        Some(i) if i == 0 || rest[..i].ends_with(char::is_whitespace) => {
            let image = rest[i + "IMG:".len()..].trim();
            (
                rest[..i].trim(),
                (!image.is_empty()).then(|| image.to_string()),
            )
        }
        _ => (rest, None),
    };
    FunctionHistogram {
        name: if name.is_empty() { "UNKNOWN" } else { name }.to_string(),
        image,
        range,
        histogram: Histogram::default(),
    }
}

/// `0x401a20, 0x401c00)` -> (0x401a20, 0x401c00).
fn address_range(text: &str) -> Option<(u64, u64)> {
    let (start, end) = text.trim().strip_suffix(')')?.split_once(',')?;
    Some((hex(start)?, hex(end)?))
}

fn hex(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u64::from_str_radix(digits, 16).ok()
}

/// `PATH  LOW  HIGH` (hexadecimal, no `0x`); rows that do not read are skipped.
fn image_row(line: &str) -> Option<Image> {
    let (rest, high) = line.trim_end().rsplit_once(char::is_whitespace)?;
    let (path, low) = rest.trim_end().rsplit_once(char::is_whitespace)?;
    let path = path.trim();
    (!path.is_empty()).then_some(())?;
    Some(Image {
        path: path.to_string(),
        low: hex(low)?,
        high: hex(high)?,
    })
}

/// Reads `FOR TID <n> [OS-TID <m>] ...` after `EMIT_DYNAMIC_STATS` (or
/// `EMIT_PER_FUNCTION_STATS`).
fn thread_header(
    marker: &str,
    words: Vec<&str>,
    name: &str,
    line_no: usize,
    line: &str,
) -> Result<(u64, Option<u64>), SdeError> {
    let expected = format!("`# {marker} FOR TID <number> [OS-TID <number>]`");
    let tid = match words.as_slice() {
        ["FOR", "TID", tid, ..] => tid.trim_end_matches(',').parse::<u64>().ok(),
        _ => None,
    };
    let tid = tid.ok_or_else(|| SdeError::parse(name, line_no, &expected, quote(line)))?;
    let os_tid = match words.iter().position(|w| *w == "OS-TID") {
        Some(i) => Some(
            words
                .get(i + 1)
                .and_then(|w| w.trim_end_matches(',').parse::<u64>().ok())
                .ok_or_else(|| SdeError::parse(name, line_no, &expected, quote(line)))?,
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
    fn function_headers_as_sde_and_pin_write_them() {
        let f =
            function_header(" kernel  IMG: /home/user/app.exe at [0x401a20, 0x401c00)  52.014%");
        assert_eq!(
            (f.name.as_str(), f.image.as_deref(), f.range),
            (
                "kernel",
                Some("/home/user/app.exe"),
                Some((0x401a20, 0x401c00))
            )
        );
        // Pin's mix-mt: no image.
        let f = function_header(" kernel at [0x401a20, 0x401c00)   1.500%");
        assert_eq!(
            (f.name.as_str(), f.image, f.range),
            ("kernel", None, Some((0x401a20, 0x401c00)))
        );
        // Demangled names hold spaces (and may hold " at "); paths may too.
        let f = function_header(
            " void q<1ul>(void*, unsigned long) at(int)  IMG: /opt/my app/lib.so at [0x7f00, 0x7f80)   0.008%",
        );
        assert_eq!(
            (f.name.as_str(), f.image.as_deref(), f.range),
            (
                "void q<1ul>(void*, unsigned long) at(int)",
                Some("/opt/my app/lib.so"),
                Some((0x7f00, 0x7f80))
            )
        );
        let f = function_header("  IMG: /lib/libm.so.6 at [0x10, 0x20)  0.1%");
        assert_eq!((f.name.as_str(), f.range), ("UNKNOWN", Some((0x10, 0x20))));
        let f = function_header(" odd header without a range");
        assert_eq!(
            (f.name.as_str(), f.image, f.range),
            ("odd header without a range", None, None)
        );
    }

    /// SDE 9's tail: the process's function report after a `*total 0`
    /// section that opens as global and closes as a thread's.
    const WITH_FUNCTIONS: &str = "\
# EMIT_IMAGE_ADDRESSES
#    IMAGE NAME          LOW ADDRESS   HIGH ADDRESS
/home/u/a.out            400000        404fff
# END_IMAGE_ADDRESSES
# EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 77 EMIT# 1
*total  10
# END_DYNAMIC_STATS
# FUNCTION TOTALS FOR TID 0  OS-TID 77
   0:           10 100.000 100.000             1            401000 f  IMG: /home/u/a.out
                10 TOTAL
# END FUNCTION TOTALS
# EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 77 EMIT# 1
#
# $dynamic-counts-for-function: f  IMG: /home/u/a.out at [0x401000, 0x401100)  100.000%
#
# TID 0
*elements_fp_double_4   3
*total  10
# END_PER_FUNCTION_STATS
# EMIT_GLOBAL_DYNAMIC_STATS
# $dynamic-counts
# TID 0
*total  0
# END_DYNAMIC_STATS
#GLOBAL FUNCTION TOTALS
# END FUNCTION TOTALS
# EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 0 EMIT# 1
# $dynamic-counts-for-function: f  IMG: /home/u/a.out at [0x401000, 0x401100)  100.000%
*elements_fp_double_4   3
*total  10
# END_PER_FUNCTION_STATS
# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
# $global-dynamic-counts
*elements_fp_double_4   3
*total  10
# END_GLOBAL_DYNAMIC_STATS
";

    #[test]
    fn thread_and_process_function_reports() {
        let m = parse_mix(WITH_FUNCTIONS, "m").unwrap();
        assert_eq!(
            m.global.get("*total"),
            Some(10),
            "the `*total 0` section is not the totals"
        );
        assert!(m.notes.is_empty(), "{:?}", m.notes);
        let scopes: Vec<Option<u64>> = m.function_tables.iter().map(|t| t.tid).collect();
        assert_eq!(scopes, [Some(0), None]);
        let f = &m.function_tables[1].functions[0];
        assert_eq!(
            (f.name.as_str(), f.histogram.get("*elements_fp_double_4")),
            ("f", Some(3))
        );
        assert_eq!(f.histogram.line, 28);
        assert_eq!(
            m.images,
            [Image {
                path: "/home/u/a.out".into(),
                low: 0x400000,
                high: 0x404fff
            }]
        );
    }

    #[test]
    fn malformed_function_sections_are_errors_with_their_line() {
        let rows_first = WITH_FUNCTIONS.replacen(
            "#\n# $dynamic-counts-for-function: f",
            "*total 1\n# $dynamic-counts-for-function: f",
            1,
        );
        let e = parse_mix(&rows_first, "m").unwrap_err();
        assert_eq!(e.line(), Some(13), "{e}");
        assert!(
            e.to_string()
                .contains("`# $dynamic-counts-for-function: NAME ...` line"),
            "{e}"
        );
        let cut: String = WITH_FUNCTIONS
            .lines()
            .take(18)
            .collect::<Vec<_>>()
            .join("\n");
        let e = parse_mix(&cut, "m").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("m:18: expected `# END_PER_FUNCTION_STATS`"),
            "{e}"
        );
        let inside_thread = WITH_FUNCTIONS.replacen(
            "*total  10\n# END_DYNAMIC_STATS",
            "# $dynamic-counts-for-function: g\n# END_DYNAMIC_STATS",
            1,
        );
        let e = parse_mix(&inside_thread, "m").unwrap_err();
        assert!(
            e.to_string().contains("expected `# END_DYNAMIC_STATS`"),
            "{e}"
        );
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
