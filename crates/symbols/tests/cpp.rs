use flopscope_symbols::{Frame, Symbol, Symbolizer};

use crate::util::{nm, rebase, Run, Workdir};

#[test]
fn templates_and_virtual_methods() {
    let w = Workdir::new(&["shapes.cpp"]);
    let exe = w.build("g++", &["shapes.cpp"], &["-O2", "-g"], "shapes");
    let run = Run::of(&exe);
    let nm = nm(&exe);
    let rt = |vaddr| rebase(vaddr, nm["main"].vaddr, run.value("main"));
    let src = w.path("shapes.cpp").to_str().unwrap().to_string();
    let mut symbolizer = Symbolizer::new();

    let cases = [
        (
            "_ZNK2ns3BoxIiE3getEv",
            "ns::Box<int>::get() const",
            "get_def",
        ),
        (
            "_ZNK2ns6Square4areaEv",
            "ns::Square::area() const",
            "area_def",
        ),
        (
            "_ZNK2ns6Square9perimeterEv",
            "ns::Square::perimeter() const",
            "perimeter",
        ),
    ];
    for (mangled, name, line) in cases {
        let sym = nm[mangled];
        let start = rt(sym.vaddr);
        let location = symbolizer.locate(run.map(start), start);
        let want = Symbol {
            name: name.to_string(),
            start,
            size: Some(sym.size),
            module: exe.clone(),
        };
        assert_eq!(location.symbol, want);
        let outer = location.frames.last().unwrap();
        assert_eq!(outer.function.as_deref(), Some(name));
        assert_eq!(outer.file.as_deref(), Some(src.as_str()), "{name}");
        // Where it is defined: on the function's own DIE when defined
        // outside its class (get, area), on the in-class declaration its
        // DIE points to (DW_AT_specification) when defined inside (perimeter).
        assert_eq!(outer.decl_file.as_deref(), Some(src.as_str()), "{name}");
        assert_eq!(outer.decl_line, Some(w.line("shapes.cpp", line)), "{name}");
    }

    let area = rt(nm["_ZNK2ns6Square4areaEv"].vaddr);
    assert_eq!(
        symbolizer.locate(run.map(area), area).frames,
        vec![Frame {
            function: Some("ns::Square::area() const".into()),
            file: Some(src.clone()),
            line: Some(w.line("shapes.cpp", "area_def")),
            decl_file: Some(src.clone()),
            decl_line: Some(w.line("shapes.cpp", "area_def")),
        }]
    );

    let total = rt(nm["_Z5totalRKN2ns5ShapeE"].vaddr);
    let location = symbolizer.locate(run.map(total), total);
    assert_eq!(location.symbol.name, "total(ns::Shape const&)");
}
