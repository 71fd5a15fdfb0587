//! The flame graph: frames nest exactly (module, function, loops,
//! line), the root is the total, loops appear only where the lines
//! reproduce their counts; golden SVG that parses as XML.

mod hot;

use flopscope_roofline::flame::{flame, svg, FlameOptions, Frame, FrameKind, Metric};
use quick_xml::events::Event;
use quick_xml::Reader;

fn find<'a>(f: &'a Frame, kind: FrameKind, name: &str) -> Option<&'a Frame> {
    if f.kind == kind && f.name == name {
        return Some(f);
    }
    f.children.iter().find_map(|c| find(c, kind, name))
}

/// Every frame with children is exactly their sum (`exact`), or at least it.
fn check_nesting(f: &Frame, exact: bool) {
    if !f.children.is_empty() {
        let sum: u64 = f.children.iter().map(|c| c.value).sum();
        if exact {
            assert_eq!(sum, f.value, "{}", f.name);
        } else {
            assert!(sum <= f.value, "{}: {sum} > {}", f.name, f.value);
        }
    }
    for c in &f.children {
        check_nesting(c, exact);
    }
}

#[test]
fn frames_nest_exactly_with_loops_where_the_lines_reproduce_them() {
    let r = hot::report(true);
    let g = flame(&r, Metric::Flop);
    assert_eq!(g.metric, Metric::Flop);
    assert_eq!(g.root.value, r.summary.flop.total);
    check_nesting(&g.root, true);
    // module -> function -> loop 10 -> loop 11 -> loop 13 -> line 14.
    let dgemm = find(&g.root, FrameKind::Function, "dgemm_block").unwrap();
    let outer = &dgemm.children[0];
    assert_eq!(outer.name, "loop solver.c:10");
    assert_eq!(outer.children[0].name, "loop solver.c:11");
    let inner = &outer.children[0].children[0];
    assert_eq!(inner.name, "loop solver.c:13");
    assert_eq!(inner.iterations, Some((512 * 512 * 512, 512 * 512)));
    assert_eq!(inner.children[0].name, "solver.c:14");
    assert_eq!(inner.value, 2 * 512 * 512 * 512);
    // norm's loop holds the inlined sq: left out, its line under norm.
    let norm = find(&g.root, FrameKind::Function, "norm").unwrap();
    assert!(norm.children.iter().all(|c| c.kind == FrameKind::Line));
    assert!(
        g.notes.iter().any(|n| n.starts_with("1 loop is not shown")),
        "{:?}",
        g.notes
    );
    // sq is a function of its own; exp has no line information.
    assert!(find(&g.root, FrameKind::Function, "sq").is_some());
    let exp = find(&g.root, FrameKind::Function, "__exp_fma").unwrap();
    assert_eq!(exp.children[0].name, "(no line information)");
    let modules: Vec<&str> = g.root.children.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(modules, ["solver", "libm.so.6"]);
}

#[test]
fn other_metrics_nest_too() {
    let r = hot::report(true);
    let bytes = flame(&r, Metric::Bytes);
    let b = r.summary.bytes.unwrap();
    assert_eq!(bytes.root.value, b.read + b.written);
    check_nesting(&bytes.root, true);
    let insn = flame(&r, Metric::Instructions);
    assert_eq!(insn.root.value, r.summary.instructions.unwrap());
    check_nesting(&insn.root, true);
    assert!(find(&insn.root, FrameKind::Loop, "loop solver.c:13").is_some());
    // Time: functions are the leaves, loops nest in samples.
    let time = flame(&r, Metric::Time);
    assert_eq!(time.metric, Metric::Time);
    let samples: u64 = r.functions.iter().filter_map(|f| f.samples).sum();
    assert_eq!(time.root.value, samples);
    check_nesting(&time.root, false);
    let dgemm = find(&time.root, FrameKind::Function, "dgemm_block").unwrap();
    assert_eq!(dgemm.value, 600);
    assert_eq!(dgemm.children[0].value, 600);
    assert_eq!(dgemm.children[0].children[0].children[0].value, 590);
}

#[test]
fn a_loop_whose_for_line_also_runs_outside_starts_after_it() {
    // 160 bytes on the triad's `for` line, all before the loop (its
    // bytes are line 22's): the loop stands over line 22 alone.
    let mut r = hot::report(true);
    let line21 = r.lines.iter_mut().find(|l| l.line == Some(21)).unwrap();
    line21.summary.bytes.as_mut().unwrap().read = 160;
    r.summary.bytes.as_mut().unwrap().read += 160;
    let g = flame(&r, Metric::Bytes);
    check_nesting(&g.root, true);
    let triad = find(&g.root, FrameKind::Function, "stream_triad").unwrap();
    let names: Vec<&str> = triad.children.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["loop solver.c:21", "solver.c:21"]);
    assert_eq!(triad.children[0].children[0].name, "solver.c:22");
    assert_eq!(triad.children[1].value, 160);
}

#[test]
fn time_without_samples_falls_back_to_flop() {
    let r = hot::report(false);
    let g = flame(&r, Metric::Time);
    assert_eq!(g.metric, Metric::Flop);
    assert_eq!(g.root.value, r.summary.flop.total);
    assert!(g.notes[0].contains("add --runs N"));
}

fn flame_svg() -> String {
    let r = hot::report(true);
    svg(
        &flame(&r, Metric::Flop),
        &FlameOptions {
            width: 1000,
            title: "FLOP flame graph: solver.json".into(),
        },
    )
}

#[test]
fn svg_flame_graph() {
    insta::assert_snapshot!(flame_svg());
}

#[test]
fn svg_parses_and_the_root_spans_the_total() {
    let text = flame_svg();
    let mut reader = Reader::from_str(&text);
    let (mut depth, mut frames) = (0i32, 0);
    let (mut root, mut in_root, mut root_width) = (None, false, None);
    let attr = |e: &quick_xml::events::BytesStart, k: &[u8]| {
        e.attributes()
            .flatten()
            .find(|a| a.key.as_ref() == k)
            .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                depth += 1;
                if e.name().as_ref() == b"g" {
                    frames += 1;
                    in_root = attr(&e, b"data-kind").as_deref() == Some("root");
                    if in_root {
                        root = attr(&e, b"data-value");
                    }
                }
            }
            Event::Empty(e) if in_root && e.name().as_ref() == b"rect" => {
                root_width = attr(&e, b"width").zip(attr(&e, b"x"));
                in_root = false;
            }
            Event::End(_) => depth -= 1,
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0);
    assert!(frames > 20, "{frames} frames");
    let r = hot::report(true);
    assert_eq!(root, Some(r.summary.flop.total.to_string()));
    // The root's rectangle spans the width less the margins.
    assert_eq!(
        root_width,
        Some(("980.00".to_string(), "10.00".to_string()))
    );
}
