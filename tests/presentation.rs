//! Presentation of where the work is, through the command line, on a real
//! counted program (tests/kernels/attribution/where.c, timed natively):
//! `roofline` with a dot per loop or function (and its fallback and
//! warning without time), `flame` (an SVG that parses as XML, its root as
//! wide as the total), and `report --html` with its tables and source view.

use crate::attribution::source;
use crate::support::{gcc, FLOPSCOPE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// where.c and libwhere.c built with -O2 -g, once.
fn where_exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("presentation");
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libwhere.so");
        gcc(&[
            "-O2".as_ref(),
            "-g".as_ref(),
            "-shared".as_ref(),
            "-fPIC".as_ref(),
            "-o".as_ref(),
            lib.as_os_str(),
            source("libwhere.c").as_os_str(),
        ]);
        let exe = dir.join("where");
        let rpath = format!("-Wl,-rpath,{}", dir.display());
        let libdir = format!("-L{}", dir.display());
        gcc(&[
            "-O2".as_ref(),
            "-g".as_ref(),
            "-o".as_ref(),
            exe.as_os_str(),
            source("where.c").as_os_str(),
            libdir.as_ref(),
            "-lwhere".as_ref(),
            rpath.as_ref(),
        ]);
        exe
    })
    .clone()
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let out = Command::new(FLOPSCOPE).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "flopscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// where.c counted under the native engine into `dir/name`, timed (and
/// sampled) natively unless `no_native`. 400,000 elements x 40
/// repetitions: about a tenth of a second natively, most of it in
/// `nested`'s inner loop.
fn counted(dir: &Path, name: &str, no_native: bool) -> (PathBuf, Value) {
    let out = dir.join(name);
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["count".as_ref(), "--engine".as_ref(), "native".as_ref()];
    if no_native {
        args.push("--no-native".as_ref());
    }
    let exe = where_exe();
    args.extend([
        "-o".as_ref(),
        out.as_os_str(),
        "--".as_ref(),
        exe.as_os_str(),
        "400000".as_ref(),
        "40".as_ref(),
    ]);
    run(&args);
    let report = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (out, report)
}

#[test]
fn roofline_draws_a_dot_per_loop_or_function() {
    let dir = tempfile::tempdir().unwrap();
    let (r, report) = counted(dir.path(), "where.json", false);
    assert!(
        report["loops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["time_s"].as_f64().is_some()),
        "the timed run gave the loops no time"
    );
    let svg = dir.path().join("loops.svg");
    run(&[
        "roofline".as_ref(),
        r.as_os_str(),
        "-o".as_ref(),
        svg.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    // The inner loop holds 16/21 of the FLOP: it has a dot and a row.
    assert!(
        text.contains("nested where.c:37"),
        "no dot for nested's inner loop"
    );
    assert!(!text.contains("whole program"));
    let png = dir.path().join("functions.png");
    run(&[
        "roofline".as_ref(),
        r.as_os_str(),
        "--points".as_ref(),
        "functions".as_ref(),
        "--min-share".as_ref(),
        "5".as_ref(),
        "-o".as_ref(),
        png.as_os_str(),
    ]);
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn roofline_without_time_says_how_to_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = counted(dir.path(), "untimed.json", true);
    let svg = dir.path().join("untimed.svg");
    let out = run(&[
        "roofline".as_ref(),
        r.as_os_str(),
        "--points".as_ref(),
        "loops".as_ref(),
        "-o".as_ref(),
        svg.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("add --runs N"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("cannot be placed on the performance axis"));
    assert!(text.contains("whole program"));
}

/// A minimal XML well-formedness check (declaration, comments, elements
/// with quoted attributes, character and entity references, one root),
/// giving each `<g>`'s attributes with those of its `<rect>`.
type Attrs = Vec<(String, String)>;

fn parse_xml(text: &str) -> Result<Vec<(Attrs, Attrs)>, String> {
    let mut s = text.trim_start();
    if let Some(rest) = s.strip_prefix("<?xml") {
        s = &rest[rest.find("?>").ok_or("unterminated declaration")? + 2..];
    }
    let mut open: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut frames: Vec<(Attrs, Attrs)> = Vec::new();
    let mut pending_g: Option<Attrs> = None;
    let entity = |t: &str| -> Result<(), String> {
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            let end = rest[i..].find(';').ok_or("unterminated reference")?;
            let name = &rest[i + 1..i + end];
            let ok = matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
                || name.strip_prefix('#').is_some_and(|n| {
                    n.parse::<u32>().is_ok()
                        || n.strip_prefix('x')
                            .is_some_and(|h| u32::from_str_radix(h, 16).is_ok())
                });
            if !ok {
                return Err(format!("bad reference &{name};"));
            }
            rest = &rest[i + end..];
        }
        Ok(())
    };
    while !s.is_empty() {
        let lt = s.find('<').unwrap_or(s.len());
        let text_part = &s[..lt];
        if open.is_empty() && !text_part.trim().is_empty() {
            return Err("text outside the root".into());
        }
        if text_part.contains('>') {
            return Err("stray >".into());
        }
        entity(text_part)?;
        s = &s[lt..];
        if s.is_empty() {
            break;
        }
        if let Some(rest) = s.strip_prefix("<!--") {
            s = &rest[rest.find("-->").ok_or("unterminated comment")? + 3..];
            continue;
        }
        let gt = s.find('>').ok_or("unterminated tag")?;
        let tag = &s[1..gt];
        s = &s[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if open.pop().as_deref() != Some(name.trim()) {
                return Err(format!("</{name}> closes nothing open"));
            }
            continue;
        }
        let empty = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == ':')
        {
            return Err(format!("bad element name {name:?}"));
        }
        // Attributes: name="value", each once.
        let mut attrs: Attrs = Vec::new();
        let mut a = tag[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a.find("=\"").ok_or(format!("bad attribute in <{name}>"))?;
            let key = a[..eq].trim().to_string();
            let close = a[eq + 2..].find('"').ok_or("unterminated attribute")?;
            let value = &a[eq + 2..eq + 2 + close];
            if value.contains('<') || attrs.iter().any(|(k, _)| *k == key) {
                return Err(format!("bad attribute {key} in <{name}>"));
            }
            entity(value)?;
            attrs.push((key, value.to_string()));
            a = a[eq + 3 + close..].trim_start();
        }
        if open.is_empty() {
            roots += 1;
        }
        if name == "g" {
            pending_g = Some(attrs);
        } else if name == "rect" {
            if let Some(g) = pending_g.take() {
                frames.push((g, attrs));
            }
        }
        if !empty {
            open.push(name.to_string());
        }
    }
    if !open.is_empty() || roots != 1 {
        return Err(format!("{} elements left open, {roots} roots", open.len()));
    }
    Ok(frames)
}

fn attr<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn flame_graph_parses_and_its_root_is_the_total() {
    let help = run(&["flame".as_ref(), "--help".as_ref()]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Examples:") && help.contains("--metric"),
        "{help}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (r, report) = counted(dir.path(), "where.json", false);
    for (metric, total) in [
        ("flop", report["flop"]["total"].as_u64().unwrap()),
        (
            "bytes",
            report["bytes"]["read"].as_u64().unwrap()
                + report["bytes"]["written"].as_u64().unwrap(),
        ),
    ] {
        let svg = dir.path().join(format!("{metric}.svg"));
        run(&[
            "flame".as_ref(),
            r.as_os_str(),
            "--metric".as_ref(),
            metric.as_ref(),
            "-o".as_ref(),
            svg.as_os_str(),
        ]);
        let text = std::fs::read_to_string(&svg).unwrap();
        let frames = parse_xml(&text).unwrap_or_else(|e| panic!("{metric}: not XML: {e}"));
        let (root, rect) = frames
            .iter()
            .find(|(g, _)| attr(g, "data-kind") == Some("root"))
            .expect("a root frame");
        assert_eq!(
            attr(root, "data-value"),
            Some(total.to_string().as_str()),
            "{metric}"
        );
        // 1200 pixels wide, 10 each side: the root spans 1180.
        assert_eq!(attr(rect, "width"), Some("1180.00"), "{metric}");
        assert_eq!(attr(rect, "x"), Some("10.00"), "{metric}");
        if metric == "flop" {
            // The inner loop of nested stands on the outer one, each with
            // its exact FLOP: 16 x 400,000 x 40.
            let inner = frames.iter().find(|(g, _)| {
                attr(g, "data-kind") == Some("loop") && attr(g, "data-value") == Some("256000000")
            });
            assert!(
                inner.is_some(),
                "no loop frame of nested's 256,000,000 FLOP"
            );
        }
    }
}

#[test]
fn html_report_has_sortable_tables_and_the_annotated_source() {
    let dir = tempfile::tempdir().unwrap();
    let (r, report) = counted(dir.path(), "where.json", false);
    let page = dir.path().join("where.html");
    run(&[
        "report".as_ref(),
        r.as_os_str(),
        "--html".as_ref(),
        page.as_os_str(),
    ]);
    let p = std::fs::read_to_string(&page).unwrap();
    for section in [
        "<h2 id=\"functions\">",
        "<h2 id=\"loops\">",
        "<h2 id=\"source\">",
        "Hottest lines",
    ] {
        assert!(p.contains(section), "no {section}");
    }
    assert_eq!(p.matches("<script>").count(), 1);
    assert!(!p.contains("<script src") && !p.contains("<link"));
    // where.c, read from disk, escaped, nested's line with its FLOP.
    let line = report["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["function"] == "nested" && l["flop"]["total"].as_u64() > Some(0))
        .map(|l| l["line"].as_u64().unwrap())
        .next()
        .unwrap();
    assert!(p.contains("x += b[j] * c[i];"));
    assert!(p.contains("for (int i = 0; i &lt; 8; i++)"));
    assert!(
        p.contains(&format!(
            "class=\"f\"><td class=\"ln\">{line}</td><td>256,000,000</td>"
        )),
        "line {line} of where.c is not annotated with its FLOP"
    );
}
