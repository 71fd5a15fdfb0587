use flopscope_symbols::{Frame, Symbol, Symbolizer};

use crate::util::{first_instruction, nm, rebase, Run, Workdir};

#[test]
fn module_procedures() {
    let w = Workdir::new(&["axpy.f90"]);
    // -fno-inline keeps axpy out of the main program.
    let exe = w.build(
        "gfortran",
        &["axpy.f90"],
        &["-O2", "-g", "-fno-inline"],
        "axpy",
    );
    let run = Run::of(&exe);
    let nm = nm(&exe);
    let rt = |vaddr| rebase(vaddr, nm["main"].vaddr, run.value("main"));
    let src = w.path("axpy.f90").to_str().unwrap().to_string();
    let mut symbolizer = Symbolizer::new();

    let sym = nm["__mymod_MOD_axpy"];
    let mul = rt(first_instruction(&exe, "__mymod_MOD_axpy", "mul"));
    let location = symbolizer.locate(run.map(mul), mul);
    assert_eq!(
        location.symbol,
        Symbol {
            name: "mymod::axpy".into(),
            start: rt(sym.vaddr),
            size: Some(sym.size),
            module: exe.clone(),
        }
    );
    assert_eq!(
        location.frames,
        vec![Frame {
            function: Some("mymod::axpy".into()),
            file: Some(src.clone()),
            line: Some(w.line("axpy.f90", "axpy_body")),
            decl_file: Some(src.clone()),
            decl_line: Some(w.line("axpy.f90", "axpy_decl")),
        }]
    );

    // The main program keeps gfortran's name for it.
    let main = rt(nm["MAIN__"].vaddr);
    assert_eq!(symbolizer.locate(run.map(main), main).symbol.name, "MAIN__");
}
