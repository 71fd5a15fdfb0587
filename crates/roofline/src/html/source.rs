//! The HTML report's source view: the source files that `lines[]` names,
//! as read from disk when the page is made, each line with its FLOP, bytes
//! and share of the FLOP in columns beside the code (lines carry no time:
//! the share stands in for it), lines with counts highlighted; before them
//! the hottest lines, linked to their place. Files that cannot be read are
//! listed as not available.
//!
//! The files shown are those holding FLOP, or at least 1% of the bytes,
//! hottest first. Paths are read as the report gives them (relative ones
//! from the current directory). Files over [`MAX_LINES`] lines show only
//! the lines around counted ones.

use super::escape;
use flopscope_model::render::{share, thousands};
use flopscope_model::Report;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Files longer than this show only [`CONTEXT`] lines around counted lines.
pub const MAX_LINES: usize = 3000;
const CONTEXT: usize = 5;
/// Files larger than this are not shown.
pub const MAX_BYTES: u64 = 4 << 20;
/// The hottest lines listed first.
pub const HOT_LINES: usize = 20;

/// One source line's counts, over every function and module placed there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineCounts {
    pub flop: u64,
    pub bytes: u64,
    pub functions: Vec<String>,
}

/// A source file of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub path: String,
    /// The text, or why it is not available.
    pub text: Result<String, String>,
    /// Counts by line number.
    pub lines: BTreeMap<u32, LineCounts>,
    pub flop: u64,
    pub bytes: u64,
}

/// The report's source files worth showing, hottest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sources {
    pub files: Vec<SourceFile>,
    /// The report's total FLOP, for shares.
    pub total_flop: u64,
}

impl Sources {
    /// The files of `r`'s lines, their texts from `read` (a path's text or
    /// why it cannot be had).
    pub fn gather(r: &Report, read: impl Fn(&str) -> Result<String, String>) -> Sources {
        let mut by_file: BTreeMap<&str, BTreeMap<u32, LineCounts>> = BTreeMap::new();
        for l in &r.lines {
            let (Some(file), Some(line)) = (l.file.as_deref(), l.line) else {
                continue;
            };
            let b = l.summary.bytes.unwrap_or_default();
            let c = by_file.entry(file).or_default().entry(line).or_default();
            c.flop += l.summary.flop.total;
            c.bytes += b.read + b.written;
            if !c.functions.contains(&l.function) {
                c.functions.push(l.function.clone());
            }
        }
        let total_bytes = r.summary.bytes.map(|b| b.read + b.written).unwrap_or(0);
        let mut files: Vec<SourceFile> = by_file
            .into_iter()
            .map(|(path, lines)| SourceFile {
                path: path.to_string(),
                flop: lines.values().map(|c| c.flop).sum(),
                bytes: lines.values().map(|c| c.bytes).sum(),
                lines,
                text: Err(String::new()),
            })
            .filter(|f| f.flop > 0 || (total_bytes > 0 && f.bytes * 100 >= total_bytes))
            .collect();
        files.sort_by(|a, b| {
            b.flop
                .cmp(&a.flop)
                .then(b.bytes.cmp(&a.bytes))
                .then_with(|| a.path.cmp(&b.path))
        });
        for f in &mut files {
            f.text = read(&f.path);
        }
        Sources {
            files,
            total_flop: r.summary.flop.total,
        }
    }

    /// [`Sources::gather`] reading the files from disk now.
    pub fn read(r: &Report) -> Sources {
        Sources::gather(r, |path| {
            let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
            if meta.len() > MAX_BYTES {
                return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
            }
            let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        })
    }

    /// The anchor of `file:line` in the page, when the file is shown.
    pub fn anchor(&self, file: Option<&str>, line: Option<u32>) -> Option<String> {
        let (file, line) = (file?, line?);
        let i = self
            .files
            .iter()
            .position(|f| f.path == file && f.text.is_ok())?;
        Some(format!("L{i}-{line}"))
    }
}

/// `path:line`, linked to its place when the file is shown.
pub fn place(sources: &Sources, file: Option<&str>, line: Option<u32>) -> String {
    let text = match (file, line) {
        (Some(f), Some(l)) => format!("{}:{l}", crate::hotspots::file_name(f)),
        (Some(f), None) => crate::hotspots::file_name(f).to_string(),
        _ => return "-".into(),
    };
    match sources.anchor(file, line) {
        Some(a) => format!(
            "<a href=\"#{a}\" title=\"{}\">{}</a>",
            escape(file.unwrap_or_default()),
            escape(&text)
        ),
        None => format!(
            "<span title=\"{}\">{}</span>",
            escape(file.unwrap_or_default()),
            escape(&text)
        ),
    }
}

fn hottest(out: &mut String, s: &Sources) {
    let mut hot: Vec<(&SourceFile, u32, &LineCounts)> = s
        .files
        .iter()
        .flat_map(|f| f.lines.iter().map(move |(n, c)| (f, *n, c)))
        .filter(|(_, _, c)| c.flop > 0)
        .collect();
    hot.sort_by(|a, b| {
        b.2.flop
            .cmp(&a.2.flop)
            .then(b.2.bytes.cmp(&a.2.bytes))
            .then_with(|| a.0.path.cmp(&b.0.path))
            .then(a.1.cmp(&b.1))
    });
    if hot.is_empty() {
        return;
    }
    out.push_str("<h3>Hottest lines</h3>\n<table class=\"sortable\">\n<thead><tr><th class=\"name\">line</th><th class=\"name\">function</th><th class=\"num\">FLOP</th><th class=\"num\">share</th><th class=\"num\">bytes</th></tr></thead>\n<tbody>\n");
    for (f, n, c) in hot.into_iter().take(HOT_LINES) {
        let _ = writeln!(
            out,
            "<tr><td class=\"name\" data-v=\"{}:{n:08}\">{}</td><td class=\"name\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td></tr>",
            escape(&f.path),
            place(s, Some(&f.path), Some(n)),
            escape(&c.functions.join(", ")),
            c.flop,
            thousands(c.flop),
            c.flop,
            share(c.flop, s.total_flop),
            c.bytes,
            thousands(c.bytes),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn file(out: &mut String, s: &Sources, i: usize, f: &SourceFile, text: &str) {
    let _ = writeln!(
        out,
        "<h3 id=\"F{i}\">{}</h3>\n<p class=\"file-sum\">{} FLOP ({} of the total), {} bytes</p>",
        escape(&f.path),
        thousands(f.flop),
        share(f.flop, s.total_flop),
        thousands(f.bytes)
    );
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = vec![lines.len() <= MAX_LINES; lines.len()];
    if lines.len() > MAX_LINES {
        for n in f.lines.keys() {
            let at = (*n as usize).saturating_sub(1);
            for s in shown
                .iter_mut()
                .take((at + CONTEXT + 1).min(lines.len()))
                .skip(at.saturating_sub(CONTEXT))
            {
                *s = true;
            }
        }
    }
    out.push_str("<div class=\"src\"><table class=\"src\">\n<tr><th>line</th><th>FLOP</th><th>bytes</th><th title=\"share of the FLOP (lines carry no time)\">share</th><th class=\"name\">source</th></tr>\n");
    let mut gap = false;
    for (k, code) in lines.iter().enumerate() {
        if !shown[k] {
            gap = true;
            continue;
        }
        if gap {
            out.push_str("<tr class=\"gap\"><td>&#8942;</td><td></td><td></td><td></td><td class=\"code\"></td></tr>\n");
            gap = false;
        }
        let n = k as u32 + 1;
        let code = escape(code);
        match f.lines.get(&n).filter(|c| c.flop > 0 || c.bytes > 0) {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "<tr id=\"L{i}-{n}\" class=\"{}\"><td class=\"ln\">{n}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"code\">{code}</td></tr>",
                    if c.flop > 0 { "f" } else { "b" },
                    thousands(c.flop),
                    thousands(c.bytes),
                    share(c.flop, s.total_flop),
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<tr id=\"L{i}-{n}\"><td class=\"ln\">{n}</td><td></td><td></td><td></td><td class=\"code\">{code}</td></tr>"
                );
            }
        }
    }
    if gap {
        out.push_str("<tr class=\"gap\"><td>&#8942;</td><td></td><td></td><td></td><td class=\"code\"></td></tr>\n");
    }
    out.push_str("</table></div>\n");
    let beyond: Vec<String> = f
        .lines
        .keys()
        .filter(|n| **n as usize > lines.len())
        .map(|n| n.to_string())
        .collect();
    if !beyond.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"warnings\">Counted lines beyond the file's end (the file changed since the build?): {}</p>",
            beyond.join(", ")
        );
    }
}

/// The source section: hottest lines, each available file annotated, the
/// files not available.
pub fn section(out: &mut String, s: &Sources) {
    if s.files.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"source\">Source</h2>\n<p>FLOP, bytes and share of the FLOP of each source line, beside the code as it was on disk when this page was made; lines with counts are highlighted (with FLOP: orange; bytes only: blue).</p>\n");
    hottest(out, s);
    for (i, f) in s.files.iter().enumerate() {
        if let Ok(text) = &f.text {
            file(out, s, i, f, text);
        }
    }
    let missing: Vec<String> = s
        .files
        .iter()
        .filter_map(|f| {
            f.text.as_ref().err().map(|why| {
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", escape(why))
                };
                format!(
                    "<li><code>{}</code>: {} FLOP, {} bytes{why}</li>",
                    escape(&f.path),
                    thousands(f.flop),
                    thousands(f.bytes)
                )
            })
        })
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Not available</h3>\n<p>These files could not be read when the page was made:</p>\n<ul class=\"missing\">\n{}\n</ul>",
            missing.join("\n")
        );
    }
}
