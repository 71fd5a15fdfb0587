//! The report's JSON layout: indented, with each row of a `functions`,
//! `loops` or `lines` list on one line of its own.
//!
//! A compiler's report holds tens of thousands of rows, each a summary of
//! a few dozen fields: indented field by field they made 110 MB of JSON
//! (gcc compiling a 5,000-line file), one line each about half that, still
//! read and searched a row a line (`grep '"name":"main"'`).

use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
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
}

impl RowsFormatter {
    pub fn new() -> RowsFormatter {
        RowsFormatter {
            pretty: PrettyFormatter::new(),
            depth: 0,
            rows: None,
            key: Vec::new(),
            in_key: false,
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
        in_row_or_not!(self, begin_object_value, w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        in_row_or_not!(self, end_object_value, w)
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
    use super::RowsFormatter;
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
}
