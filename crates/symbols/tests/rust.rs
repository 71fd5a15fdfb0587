use flopscope_symbols::Symbolizer;

use crate::util::{nm, path, tool, Run, Workdir};

fn compute(mangling: &str) {
    let w = Workdir::new(&["compute.rs"]);
    let exe = w.path("compute");
    let src = w.path("compute.rs");
    let mut args = vec!["-O", "-g"];
    // Legacy is rustc's default; naming it needs -Z unstable-options.
    if mangling == "v0" {
        args.extend(["-C", "symbol-mangling-version=v0"]);
    }
    args.extend([path(&src), "-o", path(&exe)]);
    tool("rustc", &args);
    let run = Run::of(&exe);
    let addr = run.value("compute");
    let mut symbolizer = Symbolizer::new();

    let (mangled, sym) = nm(&exe)
        .into_iter()
        .find(|(name, _)| {
            name.starts_with(if mangling == "v0" { "_R" } else { "_ZN" })
                && name.contains("7compute7compute")
        })
        .unwrap();
    let location = symbolizer.locate(run.map(addr), addr);
    assert_eq!(location.symbol.name, "compute::compute", "{mangled}");
    assert_eq!(location.symbol.size, Some(sym.size));
    assert_eq!(location.symbol.start, addr);
    assert_eq!(
        location.frames.last().unwrap().function.as_deref(),
        Some("compute::compute")
    );
    assert_eq!(
        location.frames.last().unwrap().decl_line,
        Some(w.line("compute.rs", "compute_decl"))
    );
}

#[test]
fn legacy_mangling() {
    compute("legacy");
}

#[test]
fn v0_mangling() {
    compute("v0");
}
