//! The per-function and per-loop part of a diff: rows of the two reports
//! matched as [`crate::matching`] says (the two programs' own executables
//! as one, under A's name), with FLOP, bytes, instructions and time on each
//! side, sorted by how much their FLOP changed.
//!
//! A row one report lacks did no work in that run: it is listed as added or
//! removed, its FLOP change being all of its FLOP. Nothing is compared when
//! only one report attributes its work (the other would show every row as
//! added or removed); [`Rows::note`] says so instead.

use crate::matching::{loop_keys, program_name, FunctionKey, LoopKey};
use crate::render::{duration, fit, thousands};
use crate::report::{Report, Summary};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Rows listed without `--all`, per table.
pub const ROWS_SHOWN: usize = 20;

/// One row's quantities in one report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub flop: u64,
    /// Bytes read + written, where known.
    pub bytes: Option<u64>,
    pub instructions: Option<u64>,
    /// From the sampled run, where timed.
    pub time_s: Option<f64>,
}

impl Side {
    fn of(s: &Summary, time_s: Option<f64>) -> Side {
        Side {
            flop: s.flop.total,
            bytes: s.bytes.map(|b| b.total().0),
            instructions: s.instructions,
            time_s,
        }
    }

    /// Another row of the same key in the same report (two paths of one
    /// library). Saturating: rows never add up to more than the totals.
    fn add(self, o: Side) -> Side {
        let both = |x: Option<u64>, y: Option<u64>| Some(x?.saturating_add(y?));
        Side {
            flop: self.flop.saturating_add(o.flop),
            bytes: both(self.bytes, o.bytes),
            instructions: both(self.instructions, o.instructions),
            time_s: match (self.time_s, o.time_s) {
                (Some(x), Some(y)) => Some(x + y),
                (x, y) => x.or(y),
            },
        }
    }
}

/// Whether a row is in both reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Both,
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
}

/// One function or loop in both reports.
#[derive(Debug, Clone, PartialEq)]
pub struct RowChange {
    /// `name [module]` or `function file:line [module]` (the key's display).
    pub label: String,
    pub a: Option<Side>,
    pub b: Option<Side>,
}

/// B / A of two known values, when A is not 0.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (a != 0.0).then(|| b / a)
}

impl RowChange {
    pub fn presence(&self) -> Presence {
        match (self.a, self.b) {
            (Some(_), None) => Presence::Removed,
            (None, Some(_)) => Presence::Added,
            _ => Presence::Both,
        }
    }

    /// FLOP B - A, a missing side counting as 0.
    pub fn flop_delta(&self) -> i128 {
        let flop = |s: Option<Side>| i128::from(s.map_or(0, |s| s.flop));
        flop(self.b) - flop(self.a)
    }

    /// B / A of a quantity, when both sides know it and A is not 0.
    pub fn ratio(&self, q: impl Fn(&Side) -> Option<f64>) -> Option<f64> {
        ratio(self.a.as_ref().and_then(&q), self.b.as_ref().and_then(&q))
    }

    /// In one report only, or with other counts (times always differ).
    pub fn changed(&self) -> bool {
        match (self.a, self.b) {
            (Some(a), Some(b)) => {
                (a.flop, a.bytes, a.instructions) != (b.flop, b.bytes, b.instructions)
            }
            _ => true,
        }
    }
}

/// The per-function and per-loop comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    /// Sorted by the absolute FLOP change, largest first, then by label.
    pub functions: Vec<RowChange>,
    pub loops: Vec<RowChange>,
    /// Why there is nothing to compare, when only one report attributes.
    pub note: Option<String>,
}

fn changes<K: Ord + ToString>(a: Vec<(K, Side)>, b: Vec<(K, Side)>) -> Vec<RowChange> {
    let mut by_key: BTreeMap<K, (Option<Side>, Option<Side>)> = BTreeMap::new();
    let put = |slot: &mut Option<Side>, s: Side| {
        *slot = Some(slot.map_or(s, |x| x.add(s)));
    };
    for (k, s) in a {
        put(&mut by_key.entry(k).or_default().0, s);
    }
    for (k, s) in b {
        put(&mut by_key.entry(k).or_default().1, s);
    }
    let mut out: Vec<RowChange> = by_key
        .into_iter()
        .map(|(k, (a, b))| RowChange {
            label: k.to_string(),
            a,
            b,
        })
        .collect();
    out.sort_by(|x, y| {
        Reverse(x.flop_delta().unsigned_abs())
            .cmp(&Reverse(y.flop_delta().unsigned_abs()))
            .then_with(|| x.label.cmp(&y.label))
    });
    out
}

/// Names `r`'s own executable `program` (A's), so that two builds of one
/// program match ([`crate::matching`]): as the module, and in the
/// `module+0x...` names of its code without a symbol.
fn rename(module: &mut String, function: &mut String, r: &Report, program: &str) {
    let Some(own) = program_name(r).filter(|own| *own == module.as_str() && !program.is_empty())
    else {
        return;
    };
    if let Some(offset) = function.strip_prefix(own).filter(|o| o.starts_with("+0x")) {
        *function = format!("{program}{offset}");
    }
    *module = program.to_string();
}

fn function_sides(r: &Report, program: &str) -> Vec<(FunctionKey, Side)> {
    r.functions
        .iter()
        .map(|f| {
            let mut k = FunctionKey::of(f);
            rename(&mut k.module, &mut k.name, r, program);
            (k, Side::of(&f.summary, f.time_s))
        })
        .collect()
}

fn loop_sides(r: &Report, program: &str) -> Vec<(LoopKey, Side)> {
    loop_keys(&r.loops)
        .into_iter()
        .zip(&r.loops)
        .map(|(mut k, l)| {
            rename(&mut k.module, &mut k.function, r, program);
            (k, Side::of(&l.summary, l.time_s))
        })
        .collect()
}

/// Compares the functions and loops of `a` (before) and `b` (after).
pub fn rows(a: &Report, b: &Report) -> Rows {
    match (a.functions.is_empty(), b.functions.is_empty()) {
        (true, true) => Rows::default(),
        (false, false) => {
            let program = program_name(a).unwrap_or_default();
            Rows {
                functions: changes(function_sides(a, program), function_sides(b, program)),
                loops: changes(loop_sides(a, program), loop_sides(b, program)),
                note: None,
            }
        }
        (no_a, _) => Rows {
            note: Some(format!(
                "Functions and loops: only {} attributes its work to functions; nothing to compare",
                if no_a { "B" } else { "A" }
            )),
            ..Rows::default()
        },
    }
}

/// The columns a table shows: bytes, instructions and time only where some
/// row has them.
struct Columns {
    bytes: bool,
    instructions: bool,
    time: bool,
}

impl Columns {
    fn of(rows: &[RowChange]) -> Columns {
        let any = |q: &dyn Fn(&Side) -> bool| {
            rows.iter()
                .flat_map(|r| [r.a, r.b])
                .flatten()
                .any(|s| q(&s))
        };
        Columns {
            bytes: any(&|s| s.bytes.is_some()),
            instructions: any(&|s| s.instructions.is_some()),
            time: any(&|s| s.time_s.is_some()),
        }
    }
}

fn count(n: Option<u64>) -> String {
    n.map(thousands).unwrap_or_else(|| "-".into())
}

fn time(t: Option<f64>) -> String {
    t.map(duration).unwrap_or_else(|| "-".into())
}

/// `x2.000`, or `-`.
fn ratio_cell(r: &RowChange, q: impl Fn(&Side) -> Option<f64>) -> String {
    r.ratio(q)
        .map(|x| format!("x{x:.3}"))
        .unwrap_or_else(|| "-".into())
}

/// The FLOP ratio, or `added` / `removed` for a row one side lacks.
fn flop_ratio_cell(r: &RowChange) -> String {
    match r.presence() {
        Presence::Added => "added".into(),
        Presence::Removed => "removed".into(),
        Presence::Both => ratio_cell(r, as_f64(flop)),
    }
}

fn signed(d: i128) -> String {
    match d {
        0 => "=".into(),
        d if d > 0 => format!("+{}", thousands(d.unsigned_abs() as u64)),
        d => format!("-{}", thousands(d.unsigned_abs() as u64)),
    }
}

/// B - A of a count, a missing side counting as 0 (as for the FLOP).
fn signed_count(a: Option<&Side>, b: Option<&Side>, q: fn(&Side) -> Option<u64>) -> String {
    let value = |s: Option<&Side>| s.map_or(Some(0), q);
    match (value(a), value(b)) {
        (Some(a), Some(b)) => signed(i128::from(b) - i128::from(a)),
        _ => "-".into(),
    }
}

/// A counted quantity of a side.
type Count = fn(&Side) -> Option<u64>;

fn flop(s: &Side) -> Option<u64> {
    Some(s.flop)
}
fn bytes(s: &Side) -> Option<u64> {
    s.bytes
}
fn instructions(s: &Side) -> Option<u64> {
    s.instructions
}
fn as_f64(q: Count) -> impl Fn(&Side) -> Option<f64> {
    move |s| q(s).map(|n| n as f64)
}

/// The rows a table lists (changed ones, at most [`ROWS_SHOWN`], unless
/// `all`) and what it leaves out, as a sentence.
fn shown(rows: &[RowChange], all: bool) -> (Vec<&RowChange>, String) {
    if all {
        return (rows.iter().collect(), String::new());
    }
    let changed: Vec<&RowChange> = rows.iter().filter(|r| r.changed()).collect();
    let unchanged = rows.len() - changed.len();
    let more = changed.len().saturating_sub(ROWS_SHOWN);
    let mut left = Vec::new();
    if more > 0 {
        left.push(format!("{more} more changed"));
    }
    if unchanged > 0 {
        left.push(format!("{unchanged} unchanged"));
    }
    let note = if left.is_empty() {
        String::new()
    } else {
        format!("(not listed: {}; --all lists them)", left.join(", "))
    };
    (changed.into_iter().take(ROWS_SHOWN).collect(), note)
}

/// `2 changed, 1 added, 1 removed, 3 unchanged`.
fn tally(rows: &[RowChange]) -> String {
    let n = |p: Presence| rows.iter().filter(|r| r.presence() == p).count();
    let changed = rows
        .iter()
        .filter(|r| r.presence() == Presence::Both && r.changed())
        .count();
    format!(
        "{changed} changed, {} added, {} removed, {} unchanged",
        n(Presence::Added),
        n(Presence::Removed),
        rows.len() - changed - n(Presence::Added) - n(Presence::Removed)
    )
}

impl Rows {
    /// The plain-text tables ("Functions", "Loops"); empty when there are
    /// no rows.
    pub fn table(&self, all: bool) -> String {
        let mut out = String::new();
        if let Some(n) = &self.note {
            let _ = writeln!(out, "\n{n}");
        }
        for (title, what, rows) in [
            ("Functions", "function", &self.functions),
            ("Loops", "loop", &self.loops),
        ] {
            if rows.is_empty() {
                continue;
            }
            let c = Columns::of(rows);
            let _ = writeln!(out, "\n{title} (A -> B: {})", tally(rows));
            let mut head = format!(
                "  {:<40} {:>20} {:>20} {:>20} {:>9}",
                what, "FLOP A", "FLOP B", "B - A", "B / A"
            );
            if c.bytes {
                let _ = write!(head, " {:>11}", "bytes B/A");
            }
            if c.instructions {
                let _ = write!(head, " {:>11}", "instr. B/A");
            }
            if c.time {
                let _ = write!(head, " {:>12} {:>12} {:>9}", "time A", "time B", "B / A");
            }
            let _ = writeln!(out, "{}", head.trim_end());
            let (list, left) = shown(rows, all);
            for r in list {
                let mut line = format!(
                    "  {:<40} {:>20} {:>20} {:>20} {:>9}",
                    fit(&r.label, 40),
                    count(r.a.map(|s| s.flop)),
                    count(r.b.map(|s| s.flop)),
                    signed(r.flop_delta()),
                    flop_ratio_cell(r),
                );
                if c.bytes {
                    let _ = write!(line, " {:>11}", ratio_cell(r, as_f64(bytes)));
                }
                if c.instructions {
                    let _ = write!(line, " {:>11}", ratio_cell(r, as_f64(instructions)));
                }
                if c.time {
                    let _ = write!(
                        line,
                        " {:>12} {:>12} {:>9}",
                        time(r.a.and_then(|s| s.time_s)),
                        time(r.b.and_then(|s| s.time_s)),
                        ratio_cell(r, |s| s.time_s)
                    );
                }
                let _ = writeln!(out, "{line}");
            }
            if !left.is_empty() {
                let _ = writeln!(out, "{left}");
            }
        }
        out
    }

    /// The same as Markdown: one table per kind of row, with A, B, the
    /// change and the ratio of every quantity some row has.
    pub fn markdown(&self, all: bool) -> String {
        let esc = crate::markdown::escape;
        let mut out = String::new();
        if let Some(n) = &self.note {
            let _ = writeln!(out, "\n{}", esc(n));
        }
        for (title, what, rows) in [
            ("Functions", "function", &self.functions),
            ("Loops", "loop", &self.loops),
        ] {
            if rows.is_empty() {
                continue;
            }
            let c = Columns::of(rows);
            let _ = writeln!(out, "\n### {title}\n\n{}\n", tally(rows));
            let mut head = format!("| {what} | FLOP A | FLOP B | FLOP B - A | FLOP B / A |");
            let mut rule = String::from("| --- | ---: | ---: | ---: | ---: |");
            for (on, q) in [
                (c.bytes, "bytes"),
                (c.instructions, "instructions"),
                (c.time, "time"),
            ] {
                if on {
                    let _ = write!(head, " {q} A | {q} B | {q} B - A | {q} B / A |");
                    rule.push_str(" ---: | ---: | ---: | ---: |");
                }
            }
            let _ = writeln!(out, "{head}\n{rule}");
            let (list, left) = shown(rows, all);
            for r in list {
                let (a, b) = (r.a.as_ref(), r.b.as_ref());
                let mut line = format!(
                    "| {} | {} | {} | {} | {} |",
                    esc(&r.label),
                    count(a.map(|s| s.flop)),
                    count(b.map(|s| s.flop)),
                    signed(r.flop_delta()),
                    flop_ratio_cell(r),
                );
                let counts: [(bool, Count); 2] = [(c.bytes, bytes), (c.instructions, instructions)];
                for (on, q) in counts {
                    if on {
                        let _ = write!(
                            line,
                            " {} | {} | {} | {} |",
                            count(a.and_then(q)),
                            count(b.and_then(q)),
                            signed_count(a, b, q),
                            ratio_cell(r, as_f64(q))
                        );
                    }
                }
                if c.time {
                    let (x, y) = (a.and_then(|s| s.time_s), b.and_then(|s| s.time_s));
                    let d = match (x, y) {
                        (Some(x), Some(y)) if y >= x => format!("+{}", duration(y - x)),
                        (Some(x), Some(y)) => format!("-{}", duration(x - y)),
                        _ => "-".into(),
                    };
                    let _ = write!(
                        line,
                        " {} | {} | {d} | {} |",
                        time(x),
                        time(y),
                        ratio_cell(r, |s| s.time_s)
                    );
                }
                let _ = writeln!(out, "{line}");
            }
            if !left.is_empty() {
                let _ = writeln!(out, "\n{left}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::{FunctionRow, LoopRow};
    use crate::counts::{Counts, FpKey};
    use crate::vocab::{FlopOp, OpClass, Precision};

    /// `fma` 256-bit FMAs (8 FLOP, 64 bytes read each) among `other` instructions.
    fn code(fma: u64, other: u64) -> Summary {
        let mut c = Counts {
            instructions: fma + other,
            ..Default::default()
        };
        c.add_fp(
            FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
            fma,
            8 * fma,
            FlopOp::Fma,
        );
        c.mem_read.insert(32, 2 * fma);
        Summary::from_counts(&c)
    }

    fn function(module: &str, name: &str, s: Summary, time_s: Option<f64>) -> FunctionRow {
        FunctionRow {
            name: name.into(),
            module: module.into(),
            summary: s,
            time_s,
            ..Default::default()
        }
    }

    fn a_loop(module: &str, function: &str, line: u32, header: &str, s: Summary) -> LoopRow {
        LoopRow {
            function: function.into(),
            module: module.into(),
            file: Some("/home/u/solver.c".into()),
            line: Some(line),
            header: header.into(),
            summary: s,
            ..Default::default()
        }
    }

    /// Run A; run B, another build of the program under another name,
    /// doubles the kernel's work and has a new solver in place of the old
    /// one. Its code is loaded elsewhere (other header addresses).
    fn run(b: bool) -> Report {
        let app = if b {
            "/home/u/avx2/solver-avx2"
        } else {
            "/home/u/solver"
        };
        let lib = if b {
            "/usr/lib/libkern.so"
        } else {
            "/opt/lib/libkern.so"
        };
        let (kernel, solver) = if b {
            (
                code(2000, 500),
                function(app, "solve_new", code(625, 100), Some(0.2)),
            )
        } else {
            (
                code(1000, 500),
                function(app, "solve_old", code(375, 100), Some(0.3)),
            )
        };
        let base: u64 = if b { 0x5555_0000_0000 } else { 0x40_0000 };
        let at = |off: u64| format!("{:#x}", base + off);
        let mut r = Report::new("emulate", vec![app.into(), "100".into()]);
        let stub = format!("{}+0x1020", crate::matching::module_file_name(app));
        r.functions = vec![
            function(
                lib,
                "kernel",
                kernel.clone(),
                Some(if b { 1.5 } else { 1.0 }),
            ),
            solver.clone(),
            function(app, "main", code(0, 300), None),
            function(app, &stub, code(0, 12), None),
        ];
        r.loops = vec![
            a_loop(lib, "kernel", 12, &at(0x1120), kernel),
            a_loop(
                app,
                &solver.name,
                if b { 40 } else { 30 },
                &at(0x2000),
                solver.summary,
            ),
        ];
        r
    }

    #[test]
    fn functions_and_loops_are_matched_by_name_and_place() {
        let d = rows(&run(false), &run(true));
        let f: Vec<(&str, Presence, i128)> = d
            .functions
            .iter()
            .map(|r| (r.label.as_str(), r.presence(), r.flop_delta()))
            .collect();
        assert_eq!(
            f,
            [
                ("kernel [libkern.so]", Presence::Both, 8000),
                ("solve_new [solver]", Presence::Added, 5000),
                ("solve_old [solver]", Presence::Removed, -3000),
                ("main [solver]", Presence::Both, 0),
                ("solver+0x1020 [solver]", Presence::Both, 0),
            ]
        );
        assert_eq!(d.functions[0].ratio(|s| Some(s.flop as f64)), Some(2.0));
        assert_eq!(d.functions[0].ratio(|s| s.time_s), Some(1.5));
        // The kernel's loop at solver.c:12, at 0x401120 in A and 0x555500001120 in B.
        assert_eq!(d.loops[0].label, "kernel solver.c:12 [libkern.so]");
        assert_eq!(d.loops[0].presence(), Presence::Both);
        assert_eq!(
            (d.loops[0].a.unwrap().flop, d.loops[0].b.unwrap().flop),
            (8000, 16_000)
        );
        assert_eq!(d.loops.len(), 3);
        let all = d.table(true);
        assert!(all.contains("\n  main [solver]  "), "{all}");
        insta::assert_snapshot!("diff_rows_table", d.table(false));
        insta::assert_snapshot!("diff_rows_markdown", d.markdown(false));
    }

    #[test]
    fn one_report_without_functions_compares_none() {
        let mut a = run(false);
        a.functions.clear();
        let d = rows(&a, &run(true));
        assert!(d.functions.is_empty() && d.loops.is_empty());
        assert_eq!(
            d.note.as_deref(),
            Some(
                "Functions and loops: only B attributes its work to functions; nothing to compare"
            )
        );
        assert_eq!(rows(&a, &a), Rows::default());
    }
}
