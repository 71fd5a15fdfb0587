//! The flame graph's frames, built from a report's `functions[]`,
//! `loops[]` and `lines[]`: root, module, function, loops (outer to inner),
//! source line; every frame's value is the sum of its children's, so
//! widths nest exactly (for time, a frame's own samples, which its
//! children's never exceed); see [`crate::flame`] for what goes where.

use super::Metric;
use crate::hotspots::file_name;
use flopscope_model::{LineRow, LoopRow, Report, Summary};
use std::collections::BTreeMap;

/// What a frame stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Root,
    Module,
    Function,
    Loop,
    Line,
    /// The part of the totals no row holds.
    Rest,
}

/// A frame's exact counts, for its tooltip.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub flop: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub instructions: u64,
    pub time_s: Option<f64>,
    pub samples: Option<u64>,
}

impl Totals {
    pub fn of(s: &Summary, time_s: Option<f64>, samples: Option<u64>) -> Totals {
        let b = s.bytes.unwrap_or_default();
        Totals {
            flop: s.flop.total,
            bytes_read: b.read,
            bytes_written: b.written,
            instructions: s.instructions.unwrap_or(0),
            time_s,
            samples,
        }
    }

    pub fn add(&mut self, o: &Totals) {
        self.flop += o.flop;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.instructions += o.instructions;
        self.time_s = match (self.time_s, o.time_s) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.samples = match (self.samples, o.samples) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }

    /// The frame width's measure: an exact count (samples for time).
    pub fn value(&self, m: Metric) -> u64 {
        match m {
            Metric::Flop => self.flop,
            Metric::Bytes => self.bytes_read + self.bytes_written,
            Metric::Instructions => self.instructions,
            Metric::Time => self.samples.unwrap_or(0),
        }
    }
}

/// One frame and the frames stacked on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub kind: FrameKind,
    /// What the frame shows: a module's file name, a function's name,
    /// `loop file:line`, `file:line`.
    pub name: String,
    /// The full name for the tooltip (module path, file path).
    pub detail: String,
    /// The module's index, for its colour.
    pub module: usize,
    pub totals: Totals,
    /// The width: the sum of the children's values where it has children
    /// (for time: its own samples, at least its children's).
    pub value: u64,
    /// A loop's iterations and entries.
    pub iterations: Option<(u64, u64)>,
    pub children: Vec<Frame>,
}

impl Frame {
    fn new(kind: FrameKind, name: String, detail: String, totals: Totals, value: u64) -> Frame {
        Frame {
            kind,
            name,
            detail,
            module: 0,
            totals,
            value,
            iterations: None,
            children: Vec::new(),
        }
    }

    /// Frames from the root to the deepest leaf.
    pub fn depth(&self) -> usize {
        1 + self.children.iter().map(Frame::depth).max().unwrap_or(0)
    }

    fn sort(&mut self) {
        self.children
            .sort_by(|a, b| b.value.cmp(&a.value).then_with(|| a.name.cmp(&b.name)));
        for c in &mut self.children {
            c.sort();
        }
    }

    fn set_module(&mut self, m: usize) {
        self.module = m;
        for c in &mut self.children {
            c.set_module(m);
        }
    }
}

/// A source line (or a function's code without lines) at the top of the stack.
struct Leaf<'a> {
    file: Option<&'a str>,
    line: Option<u32>,
    totals: Totals,
}

fn leaf_frame(l: &Leaf, m: Metric) -> Frame {
    let (name, detail) = match (l.file, l.line) {
        (Some(f), Some(n)) => (format!("{}:{n}", file_name(f)), format!("{f}:{n}")),
        (Some(f), None) => (file_name(f).to_string(), f.to_string()),
        _ => (
            "(no line information)".to_string(),
            "code without line information".to_string(),
        ),
    };
    Frame::new(FrameKind::Line, name, detail, l.totals, l.totals.value(m))
}

/// A loop's source range, `file` lines `from..=to`, found from its counts.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range<'a> {
    file: &'a str,
    from: u32,
    to: u32,
}

impl Range<'_> {
    fn holds(&self, file: Option<&str>, line: Option<u32>) -> bool {
        file == Some(self.file) && line.is_some_and(|l| l >= self.from && l <= self.to)
    }

    fn inside(&self, o: &Range) -> bool {
        self.file == o.file && self.from >= o.from && self.to <= o.to
    }

    fn disjoint(&self, o: &Range) -> bool {
        self.file != o.file || self.to < o.from || o.to < self.from
    }
}

/// The range of a loop whose count `v` (in `check`) the function's lines
/// reproduce exactly: the shortest run of lines from its line on whose
/// counts sum to `v`, or failing that from the line after it (its `for`
/// line's code also runs before the loop: when all of that line's count
/// is outside, the run starts after it); `None` when no run does.
fn range_of<'a>(l: &'a LoopRow, leaves: &[Leaf], check: Metric) -> Option<Range<'a>> {
    let (file, line) = (l.file.as_deref()?, l.line?);
    let v = Totals::of(&l.summary, None, None).value(check);
    let mut after: Vec<&Leaf> = leaves
        .iter()
        .filter(|x| x.file == Some(file) && x.line.is_some_and(|n| n >= line))
        .collect();
    after.sort_by_key(|x| x.line);
    let run = |from: u32| {
        let mut sum = 0;
        for x in after.iter().filter(|x| x.line.is_some_and(|n| n >= from)) {
            sum += x.totals.value(check);
            if sum == v {
                return Some(Range {
                    file,
                    from,
                    to: x.line.unwrap_or(from),
                });
            }
            if sum > v {
                return None;
            }
        }
        None
    };
    run(line).or_else(|| run(line + 1))
}

/// Which of one function's loops can stand between it and its lines,
/// exactly: each kept loop's range holds lines summing to its count in
/// `check`, nested loops' ranges lie inside their parent's, and
/// siblings' ranges are apart. A loop tree failing any of it is left out
/// whole. Returns the kept loops' ranges (`None`: left out).
fn kept_ranges<'a>(
    loops: &[&'a LoopRow],
    parents: &[Option<usize>],
    leaves: &[Leaf],
    check: Metric,
) -> Vec<Option<Range<'a>>> {
    let n = loops.len();
    let value = |i: usize| Totals::of(&loops[i].summary, None, None).value(check);
    let root = |mut i: usize| {
        while let Some(p) = parents[i] {
            i = p;
        }
        i
    };
    let ranges: Vec<Option<Range>> = (0..n)
        .map(|i| {
            if value(i) == 0 {
                None
            } else {
                range_of(loops[i], leaves, check)
            }
        })
        .collect();
    let mut bad_tree = vec![false; n];
    for i in 0..n {
        if value(i) == 0 {
            continue;
        }
        let Some(r) = ranges[i] else {
            bad_tree[root(i)] = true;
            continue;
        };
        if let Some(p) = parents[i] {
            if !ranges[p].is_some_and(|pr| r.inside(&pr)) {
                bad_tree[root(i)] = true;
            }
        }
        for j in (i + 1)..n {
            if parents[j] == parents[i] && value(j) > 0 {
                if let Some(o) = ranges[j] {
                    if !r.disjoint(&o) {
                        bad_tree[root(i)] = true;
                        bad_tree[root(j)] = true;
                    }
                }
            }
        }
    }
    (0..n)
        .map(|i| {
            if bad_tree[root(i)] || value(i) == 0 {
                None
            } else {
                ranges[i]
            }
        })
        .collect()
}

fn loop_frame(l: &LoopRow, m: Metric) -> Frame {
    let name = match (l.file.as_deref(), l.line) {
        (Some(f), Some(n)) => format!("loop {}:{n}", file_name(f)),
        _ => "loop".to_string(),
    };
    let detail = match (l.file.as_deref(), l.line) {
        (Some(f), Some(n)) => format!("loop at {f}:{n} in {}", l.function),
        _ => format!("loop at {} in {}", l.header, l.function),
    };
    let totals = Totals::of(&l.summary, l.time_s, l.samples);
    let mut f = Frame::new(FrameKind::Loop, name, detail, totals, totals.value(m));
    f.iterations = Some((l.iterations, l.entries));
    f
}

/// Gives each frame the sum of its children's values (leaves keep theirs).
fn sum_up(f: &mut Frame) -> u64 {
    if !f.children.is_empty() {
        f.value = f.children.iter_mut().map(sum_up).sum();
    }
    f.value
}

/// One function's children: its kept loops (outer to inner) and its lines,
/// each line under the innermost kept loop whose range holds it.
fn function_children(
    leaves: &[Leaf],
    loops: &[&LoopRow],
    parents: &[Option<usize>],
    ranges: &[Option<Range>],
    m: Metric,
) -> Vec<Frame> {
    let n = loops.len();
    let depth = |mut i: usize| {
        let mut d = 0;
        while let Some(p) = parents[i] {
            d += 1;
            i = p;
        }
        d
    };
    let mut loop_children: Vec<Vec<Frame>> = vec![Vec::new(); n];
    let mut top = Vec::new();
    for x in leaves.iter().filter(|x| x.totals.value(m) > 0) {
        let home = (0..n)
            .filter(|i| ranges[*i].is_some_and(|r| r.holds(x.file, x.line)))
            .max_by_key(|i| depth(*i));
        match home {
            Some(i) => loop_children[i].push(leaf_frame(x, m)),
            None => top.push(leaf_frame(x, m)),
        }
    }
    // Inner loops first, each into its kept parent.
    let mut order: Vec<usize> = (0..n).filter(|i| ranges[*i].is_some()).collect();
    order.sort_by_key(|i| std::cmp::Reverse(depth(*i)));
    let mut frames: Vec<Option<Frame>> = vec![None; n];
    for i in order {
        let mut f = loop_frame(loops[i], m);
        f.children = std::mem::take(&mut loop_children[i]);
        f.children.extend(
            (0..n)
                .filter(|c| parents[*c] == Some(i))
                .filter_map(|c| frames[c].take()),
        );
        frames[i] = Some(f);
    }
    top.extend(frames.into_iter().flatten());
    top
}

/// The frames of one report for `metric`, and notes on what it could not
/// show. The root's value is the report's total (for time: the samples of
/// its functions).
pub fn build(r: &Report, metric: Metric) -> (Frame, Vec<String>) {
    let mut notes = Vec::new();
    // Function rows by (module, name): their time, and their counts when
    // the report has no lines.
    let mut functions: BTreeMap<(&str, &str), Totals> = BTreeMap::new();
    for f in &r.functions {
        functions
            .entry((f.module.as_str(), f.name.as_str()))
            .or_default()
            .add(&Totals::of(&f.summary, f.time_s, f.samples));
    }
    let mut lines: BTreeMap<(&str, &str), Vec<&LineRow>> = BTreeMap::new();
    for l in &r.lines {
        lines
            .entry((l.module.as_str(), l.function.as_str()))
            .or_default()
            .push(l);
    }
    let mut loops: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, l) in r.loops.iter().enumerate() {
        loops
            .entry((l.module.as_str(), l.function.as_str()))
            .or_default()
            .push(i);
    }
    let by_lines = metric != Metric::Time && !r.lines.is_empty();
    if metric != Metric::Time && r.lines.is_empty() && !r.functions.is_empty() {
        notes.push("the report has no lines[]: functions are the top frames".into());
    }
    let keys: Vec<(&str, &str)> = if by_lines {
        lines.keys().copied().collect()
    } else {
        functions.keys().copied().collect()
    };
    let mut left_out = 0;
    let mut modules: BTreeMap<&str, Vec<Frame>> = BTreeMap::new();
    for key in keys {
        let (module, name) = key;
        let leaves: Vec<Leaf> = lines
            .get(&key)
            .map(|ls| {
                ls.iter()
                    .map(|l| Leaf {
                        file: l.file.as_deref(),
                        line: l.line,
                        totals: Totals::of(&l.summary, None, None),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let own: Vec<&LoopRow> = loops
            .get(&key)
            .map(|v| v.iter().map(|i| &r.loops[*i]).collect())
            .unwrap_or_default();
        let index: Vec<usize> = loops.get(&key).cloned().unwrap_or_default();
        let parents: Vec<Option<usize>> = own
            .iter()
            .map(|l| l.parent.and_then(|p| index.iter().position(|i| *i == p)))
            .collect();
        // Time: loops whose FLOP the function's own lines reproduce
        // exactly hold no other function's floating-point code (inlined
        // callees' samples count for the callee), and their samples must
        // nest in the function's.
        let check = if metric == Metric::Time {
            Metric::Flop
        } else {
            metric
        };
        let mut ranges = kept_ranges(&own, &parents, &leaves, check);
        let row = functions.get(&key).copied();
        let totals = if by_lines {
            // The lines' sums (equal to the function rows' in any report
            // whose lines and functions both sum to the totals).
            let mut t = Totals::default();
            for x in &leaves {
                t.add(&x.totals);
            }
            t.time_s = row.and_then(|f| f.time_s);
            t.samples = row.and_then(|f| f.samples);
            t
        } else {
            row.unwrap_or_default()
        };
        let mut frame = Frame::new(
            FrameKind::Function,
            name.to_string(),
            format!("{name} in {module}"),
            totals,
            totals.value(metric),
        );
        if by_lines {
            frame.children = function_children(&leaves, &own, &parents, &ranges, metric);
        } else if metric == Metric::Time {
            // Loop frames keep their own samples: they nest, not sum.
            time_loops(&own, &parents, &mut ranges, frame.value);
            frame.children = function_children(&[], &own, &parents, &ranges, metric);
        }
        left_out += own
            .iter()
            .zip(&ranges)
            .filter(|(l, r)| {
                r.is_none() && Totals::of(&l.summary, l.time_s, l.samples).value(metric) > 0
            })
            .count();
        if by_lines {
            sum_up(&mut frame);
        }
        if frame.value > 0 {
            modules.entry(module).or_default().push(frame);
        }
    }
    if left_out > 0 {
        notes.push(format!(
            "{left_out} loop{} not shown as frames: the function's source lines do not reproduce {} counts exactly \
             (inlined code, or lines shared with code outside them); their work is under their function",
            if left_out == 1 { " is" } else { "s are" },
            if left_out == 1 { "its" } else { "their" }
        ));
    }
    let mut root = Frame::new(
        FrameKind::Root,
        "all".into(),
        format!("{} (the whole job)", r.command.join(" ")),
        Totals::of(&r.summary, r.native_time_s, None),
        0,
    );
    for (module, fns) in modules {
        let mut m = Frame::new(
            FrameKind::Module,
            file_name(module).to_string(),
            module.to_string(),
            Totals::default(),
            0,
        );
        for f in &fns {
            m.totals.add(&f.totals);
        }
        m.value = fns.iter().map(|f| f.value).sum();
        m.children = fns;
        root.children.push(m);
    }
    let attributed: u64 = root.children.iter().map(|m| m.value).sum();
    let total = match metric {
        Metric::Time => attributed,
        m => root.totals.value(m),
    };
    if total > attributed {
        let mut t = Totals::default();
        match metric {
            Metric::Flop => t.flop = total - attributed,
            Metric::Bytes => t.bytes_read = total - attributed,
            Metric::Instructions => t.instructions = total - attributed,
            Metric::Time => {}
        }
        root.children.push(Frame::new(
            FrameKind::Rest,
            "(not attributed)".into(),
            "counted in the totals but in no function or line".into(),
            t,
            total - attributed,
        ));
    }
    root.value = total.max(attributed);
    root.totals.samples = Some(attributed).filter(|_| metric == Metric::Time);
    root.sort();
    for (i, m) in root.children.iter_mut().enumerate() {
        m.set_module(i);
    }
    (root, notes)
}

/// Time: keeps a loop tree only when its samples nest (children within
/// their loop, top loops within the function's `own` samples).
fn time_loops(
    loops: &[&LoopRow],
    parents: &[Option<usize>],
    ranges: &mut [Option<Range>],
    own: u64,
) {
    let s = |i: usize| loops[i].samples.unwrap_or(0);
    let n = loops.len();
    let mut ok = true;
    for i in (0..n).filter(|i| ranges[*i].is_some()) {
        let children: u64 = (0..n)
            .filter(|c| parents[*c] == Some(i) && ranges[*c].is_some())
            .map(s)
            .sum();
        ok &= children <= s(i);
    }
    let top: u64 = (0..n)
        .filter(|i| ranges[*i].is_some() && parents[*i].is_none_or(|p| ranges[p].is_none()))
        .map(s)
        .sum();
    ok &= top <= own;
    if !ok {
        ranges.iter_mut().for_each(|r| *r = None);
    }
}
