use flopscope_symbols::{Frame, Mapping, Symbol, Symbolizer};

use crate::util::{first_instruction, nm, path, rebase, tool, Run, Workdir};

#[test]
fn shared_library_at_its_load_base() {
    let w = Workdir::new(&["lib.c", "uselib.c"]);
    let lib = w.path("libk.so");
    let src = w.path("lib.c");
    tool(
        "gcc",
        &[
            "-O2",
            "-g",
            "-fPIC",
            "-shared",
            path(&src),
            "-o",
            path(&lib),
        ],
    );
    let rpath = format!("-Wl,-rpath,{}", w.dir.path().display());
    let libdir = format!("-L{}", w.dir.path().display());
    let exe = w.build(
        "gcc",
        &["uselib.c"],
        &["-O2", "-g", &libdir, &rpath, "-lk"],
        "uselib",
    );
    let run = Run::of(&exe);
    let nm = nm(&lib);
    let kernel = run.value("lib_kernel");
    let rt = |vaddr| rebase(vaddr, nm["lib_kernel"].vaddr, kernel);
    let map = run.map(kernel).clone();
    assert_eq!(map.path, lib);
    assert_ne!(map.start, 0);
    let src = src.to_str().unwrap().to_string();
    let mut symbolizer = Symbolizer::new();

    for name in ["lib_kernel", "lib_entry", "lib_kernel_address"] {
        let sym = nm[name];
        let start = rt(sym.vaddr);
        let location = symbolizer.locate(&map, start + sym.size - 1);
        assert_eq!(
            location.symbol,
            Symbol {
                name: name.to_string(),
                start,
                size: Some(sym.size),
                module: lib.clone(),
            }
        );
    }
    assert_eq!(run.value("lib_entry"), rt(nm["lib_entry"].vaddr));

    let mul = rt(first_instruction(&lib, "lib_kernel", "mul"));
    assert_eq!(
        symbolizer.locate(&map, mul).frames,
        vec![Frame {
            function: Some("lib_kernel".into()),
            file: Some(src.clone()),
            line: Some(w.line("lib.c", "kernel_body")),
            decl_file: Some(src.clone()),
            decl_line: Some(w.line("lib.c", "kernel_decl")),
        }]
    );

    // Stripped, the exported functions keep their .dynsym names (the PLT
    // stub of lib_home's getenv call does not stand for a symbol table)
    // and the static one is named by its FDE. Strip leaves the loaded bytes where
    // they were, so the same mapping serves.
    let stripped = w.path("libk-stripped.so");
    tool("strip", &["-o", path(&stripped), path(&lib)]);
    let map = Mapping {
        path: stripped.clone(),
        ..map
    };
    let cases = [
        ("lib_entry", "lib_entry".to_string()),
        (
            "lib_kernel",
            format!("libk-stripped.so+{:#x}", nm["lib_kernel"].vaddr),
        ),
    ];
    for (name, want) in cases {
        let sym = nm[name];
        let start = rt(sym.vaddr);
        let location = symbolizer.locate(&map, start + sym.size / 2);
        assert_eq!(
            location.symbol,
            Symbol {
                name: want,
                start,
                size: Some(sym.size),
                module: stripped.clone(),
            }
        );
        assert!(location.frames.is_empty());
    }
}
