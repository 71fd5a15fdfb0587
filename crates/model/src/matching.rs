//! Which attribution rows of different reports are the same function, loop
//! or line: the one rule that [`crate::merge`] and [`crate::diff`] share.
//!
//! Rows are matched by what stays the same from one rank, run or build to
//! the next, never by load address (ASLR moves it) nor by a module's full
//! path (ranks may load a library from different directories):
//! - a function by (module file name, name);
//! - a loop by (module file name, function, file, line), and, among the
//!   loops of one report that share those (a vectorised loop and its scalar
//!   remainder, a loop nested in another of the same line), by its place in
//!   the order of their header addresses: a module's code keeps its layout
//!   wherever it is loaded;
//! - a line by (module file name, file, line, function).
//!
//! A diff also takes the two programs' own executables (the file names of
//! their `command[0]`) for one module, whatever their names: two builds of
//! one program (`app-scalar`, `app-avx2`) compare function by function.
//!
//! ```
//! use flopscope_model::matching::{loop_keys, FunctionKey};
//! use flopscope_model::{FunctionRow, LoopRow};
//! let f = |module: &str| FunctionRow { name: "dgemm_".into(), module: module.into(), ..Default::default() };
//! assert_eq!(
//!     FunctionKey::of(&f("/opt/a/libblas.so.3")),
//!     FunctionKey::of(&f("/usr/lib/libblas.so.3"))
//! );
//! let l = |header: &str| LoopRow { function: "triad".into(), line: Some(14), header: header.into(), ..Default::default() };
//! // Two runs, other addresses, the same loops in the same order.
//! assert_eq!(loop_keys(&[l("0x4011c0"), l("0x4011a0")]), loop_keys(&[l("0x5011c0"), l("0x5011a0")]));
//! ```

use crate::attribution::{FunctionRow, LineRow, LoopRow};
use crate::report::Report;
use std::collections::BTreeMap;
use std::fmt;

/// The file name of a module's path: `libm.so.6` for `/lib/x86_64-linux-gnu/libm.so.6`.
pub fn module_file_name(module: &str) -> &str {
    module.rsplit('/').next().unwrap_or(module)
}

/// The file name of the program a report ran (its `command[0]`).
pub fn program_name(r: &Report) -> Option<&str> {
    r.command.first().map(|c| module_file_name(c))
}

/// A function's identity across reports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FunctionKey {
    /// The module's file name.
    pub module: String,
    pub name: String,
}

impl FunctionKey {
    pub fn of(f: &FunctionRow) -> FunctionKey {
        FunctionKey {
            module: module_file_name(&f.module).to_string(),
            name: f.name.clone(),
        }
    }
}

/// `name [module]`.
impl fmt::Display for FunctionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.name, self.module)
    }
}

/// A loop's identity across reports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LoopKey {
    /// The module's file name.
    pub module: String,
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// 0 for the first (lowest header address) of the report's loops with
    /// the fields above, 1 for the next, ...
    pub nth: usize,
}

/// `function file:line [module]`, with `#2`, `#3`, ... for the second and
/// later loops of one place; the file as its last path component.
impl fmt::Display for LoopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.function)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " {}:{line}", module_file_name(file))?,
            (Some(file), None) => write!(f, " {}", module_file_name(file))?,
            (None, _) => write!(f, " (no line)")?,
        }
        if self.nth > 0 {
            write!(f, " #{}", self.nth + 1)?;
        }
        write!(f, " [{}]", self.module)
    }
}

/// The key of each of one report's loops, in the order of `loops`.
pub fn loop_keys(loops: &[LoopRow]) -> Vec<LoopKey> {
    let place = |l: &LoopRow| {
        (
            module_file_name(&l.module).to_string(),
            l.function.clone(),
            l.file.clone(),
            l.line,
        )
    };
    let mut same_place: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for (i, l) in loops.iter().enumerate() {
        same_place.entry(place(l)).or_default().push(i);
    }
    let mut nth = vec![0; loops.len()];
    for members in same_place.values_mut() {
        // An address that does not parse sorts last, in list order.
        members.sort_by_key(|&i| (header_address(&loops[i].header).unwrap_or(u64::MAX), i));
        for (n, &i) in members.iter().enumerate() {
            nth[i] = n;
        }
    }
    loops
        .iter()
        .zip(nth)
        .map(|(l, nth)| {
            let (module, function, file, line) = place(l);
            LoopKey {
                module,
                function,
                file,
                line,
                nth,
            }
        })
        .collect()
}

fn header_address(h: &str) -> Option<u64> {
    let hex = h.strip_prefix("0x").or_else(|| h.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// A source line's identity across reports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineKey {
    /// The module's file name.
    pub module: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub function: String,
}

impl LineKey {
    pub fn of(l: &LineRow) -> LineKey {
        LineKey {
            module: module_file_name(&l.module).to_string(),
            file: l.file.clone(),
            line: l.line,
            function: l.function.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(function: &str, line: Option<u32>, header: &str) -> LoopRow {
        LoopRow {
            function: function.into(),
            module: "/home/u/app".into(),
            file: line.map(|_| "/home/u/app.c".into()),
            line,
            header: header.into(),
            ..Default::default()
        }
    }

    #[test]
    fn loops_of_one_place_are_told_apart_by_header_order() {
        let keys = loop_keys(&[
            at("f", Some(3), "0x4020"),
            at("f", Some(9), "0x4100"),
            at("f", Some(3), "0x4010"),
            at("g", None, "0x5000"),
        ]);
        let labels: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        assert_eq!(
            labels,
            [
                "f app.c:3 #2 [app]",
                "f app.c:9 [app]",
                "f app.c:3 [app]",
                "g (no line) [app]"
            ]
        );
    }
}
