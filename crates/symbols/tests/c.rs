use flopscope_symbols::{Frame, Symbol, Symbolizer};

use crate::util::{first_instruction, nm, rebase, Run, Workdir};

fn kernels(pie: &str) {
    let w = Workdir::new(&["kernels.c"]);
    let exe = w.build(
        "gcc",
        &["kernels.c"],
        &["-O2", "-g", "-fopenmp", pie],
        "kernels",
    );
    let run = Run::of(&exe);
    let nm = nm(&exe);
    let rt = |vaddr| rebase(vaddr, nm["main"].vaddr, run.value("main"));
    let src = w.path("kernels.c").to_str().unwrap().to_string();
    let mut symbolizer = Symbolizer::new();

    for name in ["main", "sum_squares", "scale", "scale._omp_fn.0"] {
        let sym = nm[name];
        let start = rt(sym.vaddr);
        for addr in [start, start + sym.size / 2, start + sym.size - 1] {
            let location = symbolizer.locate(run.map(addr), addr);
            let want = Symbol {
                name: name.to_string(),
                start,
                size: Some(sym.size),
                module: exe.clone(),
            };
            assert_eq!(location.symbol, want, "{addr:#x}");
            let outer = location.frames.last().unwrap();
            assert_eq!(outer.function.as_deref(), Some(name), "{addr:#x}");
        }
    }

    // square() is inlined into sum_squares: its multiply has both frames.
    let mul = rt(first_instruction(&exe, "sum_squares", "mul"));
    let location = symbolizer.locate(run.map(mul), mul);
    assert_eq!(location.symbol.name, "sum_squares");
    assert_eq!(
        location.frames,
        vec![
            Frame {
                function: Some("square".into()),
                file: Some(src.clone()),
                line: Some(w.line("kernels.c", "square_body")),
                decl_file: Some(src.clone()),
                decl_line: Some(w.line("kernels.c", "square_decl")),
            },
            Frame {
                function: Some("sum_squares".into()),
                file: Some(src.clone()),
                line: Some(w.line("kernels.c", "sum_call")),
                decl_file: Some(src.clone()),
                decl_line: Some(w.line("kernels.c", "sum_decl")),
            },
        ]
    );

    // gcc's outlined OpenMP body keeps its name; DWARF gives it no
    // declaration (it is artificial).
    let mul = rt(first_instruction(&exe, "scale._omp_fn.0", "mul"));
    let location = symbolizer.locate(run.map(mul), mul);
    assert_eq!(location.symbol.name, "scale._omp_fn.0");
    assert_eq!(
        location.frames,
        vec![Frame {
            function: Some("scale._omp_fn.0".into()),
            file: Some(src.clone()),
            line: Some(w.line("kernels.c", "omp_body")),
            decl_file: None,
            decl_line: None,
        }]
    );

    // Repeated lookups give the same answer.
    assert_eq!(symbolizer.locate(run.map(mul), mul), location);
}

#[test]
fn pie_executable() {
    kernels("-pie");
}

#[test]
fn non_pie_executable() {
    kernels("-no-pie");
}

#[test]
fn link_time_inlining_across_files() {
    let w = Workdir::new(&["lto_helper.c", "lto_main.c"]);
    let sources = ["lto_helper.c", "lto_main.c"];
    let exe = w.build("gcc", &sources, &["-O2", "-g", "-flto"], "lto");
    let run = Run::of(&exe);
    let nm = nm(&exe);
    let rt = |vaddr| rebase(vaddr, nm["main"].vaddr, run.value("main"));
    let helper = w.path("lto_helper.c").to_str().unwrap().to_string();
    let main = w.path("lto_main.c").to_str().unwrap().to_string();

    // helper's DIE is in its own file's unit: the inlined copy reaches it
    // through a cross-unit reference.
    let mul = rt(first_instruction(&exe, "accumulate", "mul"));
    let location = Symbolizer::new().locate(run.map(mul), mul);
    assert_eq!(location.symbol.name, "accumulate");
    assert_eq!(
        location.frames,
        vec![
            Frame {
                function: Some("helper".into()),
                file: Some(helper.clone()),
                line: Some(w.line("lto_helper.c", "helper_body")),
                decl_file: Some(helper.clone()),
                decl_line: Some(w.line("lto_helper.c", "helper_decl")),
            },
            Frame {
                function: Some("accumulate".into()),
                file: Some(main.clone()),
                line: Some(w.line("lto_main.c", "acc_call")),
                decl_file: Some(main.clone()),
                decl_line: Some(w.line("lto_main.c", "acc_decl")),
            },
        ]
    );
}
