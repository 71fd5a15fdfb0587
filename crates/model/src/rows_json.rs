//! The report's JSON layout: indented, with each row of a `functions`,
//! `loops` or `lines` list on one line of its own.
//!
//! A compiler's report holds tens of thousands of rows, each a summary of
//! a few dozen fields: indented field by field they made 110 MB of JSON
//! (gcc compiling a 5,000-line file), one line each about half that, still
//! read and searched a row a line (`grep '"name":"main"'`).
//!
//! The long lists are written on all cores: a list reached in a report's
//! field (`#[serde(serialize_with = "rows_json::rows")]`) is rendered in
//! pieces on several threads and the formatter writes the pieces where the
//! list goes, byte for byte what one thread would write (serde_json's
//! serializer is one stream: a field cannot hand it bytes of its own, so
//! the field writes a `null` the formatter replaces).

use serde::{Serialize, Serializer};
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::cell::{Cell, RefCell};
use std::io::{self, Write};

/// Calls formatter method `$m` of the compact formatter inside a row, of
/// the indenting one elsewhere.
macro_rules! in_row_or_not {
    ($self:ident, $m:ident, $w:ident $(, $arg:expr)*) => {
        if $self.in_row() {
            CompactFormatter.$m($w $(, $arg)*)
        } else {
            $self.pretty.$m($w $(, $arg)*)
        }
    };
}

/// The lists whose elements are written one a line.
const ROW_LISTS: [&str; 3] = ["functions", "loops", "lines"];

/// Rows below which a list is written on this thread: threads cost more
/// than they save on a short list.
const PARALLEL_ROWS: usize = 512;

/// Pieces a thread: pieces of equal rows do not cost the same (a function
/// row of many instruction kinds is longer), and each is taken by the next
/// free thread.
const PIECES_A_THREAD: usize = 4;

thread_local! {
    /// Set while the value of a row list's field is written by a
    /// [`RowsFormatter`] on this thread: the list's indentation level.
    static LIST_AT: Cell<Option<usize>> = const { Cell::new(None) };
    /// The rendered list [`rows`] left for the formatter's `write_null`.
    static RENDERED: RefCell<Option<Vec<Vec<u8>>>> = const { RefCell::new(None) };
}

/// Serializes a row list (`functions`, `loops`, `lines`): with a
/// [`RowsFormatter`] and many rows, rendered on all cores (see the module's
/// documentation); with any other serializer, as serde would.
pub fn rows<T: Serialize + Sync, S: Serializer>(list: &[T], s: S) -> Result<S::Ok, S::Error> {
    match LIST_AT.take() {
        Some(level) if list.len() >= PARALLEL_ROWS => {
            let pieces = render(list, level).map_err(serde::ser::Error::custom)?;
            RENDERED.set(Some(pieces));
            s.serialize_unit()
        }
        _ => list.serialize(s),
    }
}

/// `list` as [`RowsFormatter`] writes it at indentation `level` (its
/// key's): `[`, each row compact on a line of its own one level deeper,
/// `]` on a line at `level`. In pieces rendered on all cores, in order.
fn render<T: Serialize + Sync>(list: &[T], level: usize) -> serde_json::Result<Vec<Vec<u8>>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let size = list.len().div_ceil(threads * PIECES_A_THREAD).max(1);
    let chunks: Vec<&[T]> = list.chunks(size).collect();
    let row_indent = INDENT.repeat(level + 1);
    let piece = |i: usize| -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::new();
        if i == 0 {
            out.push(b'[');
        }
        for (j, row) in chunks[i].iter().enumerate() {
            out.extend_from_slice(if i == 0 && j == 0 { b"\n" } else { b",\n" });
            out.extend_from_slice(row_indent.as_bytes());
            serde_json::to_writer(&mut out, row)?;
        }
        if i + 1 == chunks.len() {
            out.push(b'\n');
            out.extend_from_slice(INDENT.repeat(level).as_bytes());
            out.push(b']');
        }
        Ok(out)
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<std::sync::Mutex<Option<serde_json::Result<Vec<u8>>>>> =
        chunks.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if i >= chunks.len() {
            break;
        }
        *done[i].lock().expect("no piece panicked") = Some(piece(i));
    };
    std::thread::scope(|s| {
        for _ in 1..threads.min(chunks.len()) {
            crate::started::help(s, work);
        }
        work();
    });
    done.into_iter()
        .map(|d| {
            d.into_inner()
                .expect("no piece panicked")
                .expect("every piece rendered")
        })
        .collect()
}

/// One level of [`PrettyFormatter`]'s default indentation.
const INDENT: &str = "  ";

/// Indents like [`PrettyFormatter`] but writes the elements of the lists
/// named in [`ROW_LISTS`] (at any depth) compactly, one a line.
pub struct RowsFormatter {
    pretty: PrettyFormatter<'static>,
    /// Containers open.
    depth: usize,
    /// The depth of the row list being written (its elements are deeper).
    rows: Option<usize>,
    /// The object key being written, and whether one is.
    key: Vec<u8>,
    in_key: bool,
    /// Whether long row lists may be rendered on all cores ([`rows`]).
    parallel: bool,
}

impl RowsFormatter {
    pub fn new() -> RowsFormatter {
        RowsFormatter {
            pretty: PrettyFormatter::new(),
            depth: 0,
            rows: None,
            key: Vec::new(),
            in_key: false,
            parallel: true,
        }
    }

    /// Writes every list on the serializing thread, element by element:
    /// what the rendering on all cores must equal.
    #[cfg(test)]
    fn one_thread() -> RowsFormatter {
        RowsFormatter {
            parallel: false,
            ..RowsFormatter::new()
        }
    }

    /// Whether what is written at the current depth is inside a row.
    fn in_row(&self) -> bool {
        self.rows.is_some_and(|d| self.depth > d)
    }

    /// Whether a container opened (or closed) at the current depth is a
    /// row or inside one.
    fn row_container(&self) -> bool {
        self.rows.is_some_and(|d| self.depth >= d)
    }
}

impl Default for RowsFormatter {
    fn default() -> Self {
        RowsFormatter::new()
    }
}

impl Formatter for RowsFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        LIST_AT.set(None);
        let row = self.row_container();
        if row {
            CompactFormatter.begin_array(w)?;
        } else {
            self.pretty.begin_array(w)?;
        }
        self.depth += 1;
        if !row && ROW_LISTS.iter().any(|k| k.as_bytes() == self.key) {
            self.rows = Some(self.depth);
        }
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        if self.row_container() {
            return CompactFormatter.end_array(w);
        }
        if self.rows == Some(self.depth + 1) {
            self.rows = None;
        }
        self.pretty.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        in_row_or_not!(self, begin_array_value, w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        in_row_or_not!(self, end_array_value, w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        LIST_AT.set(None);
        let row = self.row_container();
        self.depth += 1;
        if row {
            CompactFormatter.begin_object(w)
        } else {
            self.pretty.begin_object(w)
        }
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        if self.row_container() {
            CompactFormatter.end_object(w)
        } else {
            self.pretty.end_object(w)
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.key.clear();
        self.in_key = true;
        in_row_or_not!(self, begin_object_key, w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.in_key = false;
        in_row_or_not!(self, end_object_key, w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.parallel && !self.in_row() && ROW_LISTS.iter().any(|k| k.as_bytes() == self.key) {
            LIST_AT.set(Some(self.depth));
        }
        in_row_or_not!(self, begin_object_value, w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        LIST_AT.set(None);
        in_row_or_not!(self, end_object_value, w)
    }

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        match RENDERED.take() {
            Some(pieces) => pieces.iter().try_for_each(|p| w.write_all(p)),
            None => w.write_all(b"null"),
        }
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.in_key {
            self.key.extend_from_slice(fragment.as_bytes());
        }
        w.write_all(fragment.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::{RowsFormatter, PARALLEL_ROWS};
    use crate::{FunctionRow, LineRow, LoopRow, Region, Report};
    use serde_json::json;

    fn write(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, RowsFormatter::new());
        serde::Serialize::serialize(v, &mut ser).expect("serializes");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn rows_are_one_a_line_and_the_rest_indented() {
        let v = json!({
            "summary": {"flop": {"total": 8}},
            "functions": [{"name": "main", "flop": {"total": 8}, "ops": [1, 2]}, {"name": "f"}],
            "processes": [{"lines": [{"line": 3}], "loops": []}],
            "empty": []
        });
        let text = write(&v);
        let expected = r#"{
  "empty": [],
  "functions": [
    {"flop":{"total":8},"name":"main","ops":[1,2]},
    {"name":"f"}
  ],
  "processes": [
    {
      "lines": [
        {"line":3}
      ],
      "loops": []
    }
  ],
  "summary": {
    "flop": {
      "total": 8
    }
  }
}"#;
        assert_eq!(text, expected);
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, v);
    }

    /// A function row unlike its neighbours: names to escape, inlined
    /// frames, instruction kinds and times on some rows only.
    fn function(i: usize) -> FunctionRow {
        let mut f = FunctionRow {
            name: format!("f{i}<\"q\"\\é\t>"),
            module: "/lib/libm.so.6".into(),
            address: format!("{:#x}", 0x1000 + 16 * i),
            line: (!i.is_multiple_of(3)).then_some(i as u32),
            file: (!i.is_multiple_of(3)).then(|| "/src/a.c".into()),
            time_s: i.is_multiple_of(2).then_some(i as f64 / 7.0),
            ..FunctionRow::default()
        };
        f.summary.flop.total = i as u64 * 3;
        f.summary.instructions = Some(i as u64);
        for k in 0..i % 5 {
            f.inlined_into.push(format!("caller{k}"));
            f.summary
                .flop_by_width
                .insert(format!("fp64.{}", 64 << k), k as u64);
        }
        f
    }

    fn line(i: usize) -> LineRow {
        let mut l = LineRow {
            file: Some("/src/a.c".into()),
            line: Some(i as u32),
            module: "a.out".into(),
            function: format!("g{}", i / 4),
            ..LineRow::default()
        };
        l.summary.flop.fp32 = Some(i as u64);
        l
    }

    fn rows_of(report: &mut Report, functions: usize, loops: usize, lines: usize) {
        report.functions = (0..functions).map(function).collect();
        report.loops = (0..loops)
            .map(|i| LoopRow {
                function: format!("h{i}"),
                iterations: 10 * i as u64,
                flop_per_iteration: Some(0.25 * i as f64),
                parent: i.checked_sub(1),
                ..LoopRow::default()
            })
            .collect();
        report.lines = (0..lines).map(line).collect();
    }

    /// The long lists are written on all cores, byte for byte as one
    /// thread writes them, at every depth (the top, a child process, a
    /// region) and beside lists too short to split, or empty.
    #[test]
    fn lists_written_on_all_cores_are_those_of_one_thread() {
        let mut report = Report::new("native", vec!["./app".into()]);
        rows_of(
            &mut report,
            3 * PARALLEL_ROWS + 7,
            PARALLEL_ROWS,
            PARALLEL_ROWS - 1,
        );
        let mut child = Report::new("native", vec!["./child".into()]);
        rows_of(&mut child, 2 * PARALLEL_ROWS, 0, 5 * PARALLEL_ROWS + 1);
        let mut grandchild = Report::new("native", vec!["./grandchild".into()]);
        rows_of(&mut grandchild, PARALLEL_ROWS + 1, 1, 0);
        child.processes.push(grandchild);
        report.processes.push(child);
        let mut region = Region {
            name: "solve".into(),
            ..Region::default()
        };
        region.functions = (0..PARALLEL_ROWS * 2 + 3).map(function).collect();
        region.lines = (0..3).map(line).collect();
        report.regions.push(region);

        let mut parallel = Vec::new();
        report.write_json(&mut parallel).expect("writes");
        let mut serial = Vec::new();
        let mut ser =
            serde_json::Serializer::with_formatter(&mut serial, RowsFormatter::one_thread());
        serde::Serialize::serialize(&report, &mut ser).expect("writes");
        serial.push(b'\n');
        assert_eq!(
            String::from_utf8(parallel).expect("UTF-8"),
            String::from_utf8(serial).expect("UTF-8")
        );
        // Lists written element by element elsewhere (to a value, a string).
        let back = Report::from_json(&report.to_json()).expect("reads back");
        assert_eq!(back, report);
        assert_eq!(
            serde_json::to_value(&back).expect("a value"),
            serde_json::to_value(&report).expect("a value")
        );
    }
}
