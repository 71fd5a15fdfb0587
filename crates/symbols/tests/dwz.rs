use flopscope_symbols::{Mapping, Symbolizer};

use crate::util::{path, tool, Run, Workdir};

/// dwz (Debian's -dbgsym packages use it) moves DIEs that two files share
/// into a common file, which each names in `.gnu_debugaltlink`.
#[test]
fn dwz_common_file() {
    let w = Workdir::new(&["kernels.c"]);
    let flags = ["-O2", "-g", "-fopenmp"];
    let exe = w.build("gcc", &["kernels.c"], &flags, "kernels");
    // Same file names, so unnamed code reads the same in both.
    std::fs::create_dir(w.path("a")).unwrap();
    std::fs::create_dir(w.path("b")).unwrap();
    let a = w.build("gcc", &["kernels.c"], &flags, "a/kernels");
    let b = w.build("gcc", &["kernels.c"], &flags, "b/kernels");
    let common = w.path("common.debug");
    tool(
        "dwz",
        &["-m", path(&common), "-M", path(&common), path(&a), path(&b)],
    );
    let sections = tool("readelf", &["-S", path(&a)]);
    assert!(sections.contains(".gnu_debugaltlink"), "{sections}");

    let run = Run::of(&exe);
    let mut reference = Symbolizer::new();
    let mut symbolizer = Symbolizer::new();
    let mut with_frames = 0;
    for map in &run.maps {
        if map.path != exe {
            continue;
        }
        let moved = Mapping {
            path: a.clone(),
            ..map.clone()
        };
        for addr in (map.start..map.end).step_by(3) {
            let mut want = reference.locate(map, addr);
            want.symbol.module = a.clone();
            let got = symbolizer.locate(&moved, addr);
            with_frames += usize::from(!got.frames.is_empty());
            assert_eq!(got, want, "{addr:#x}");
        }
    }
    assert!(with_frames > 100, "{with_frames}");

    // The common file carries part of the answers: without it they differ.
    std::fs::remove_file(&common).unwrap();
    let mut without = Symbolizer::new();
    let differ = run
        .maps
        .iter()
        .filter(|m| m.path == exe)
        .flat_map(|m| (m.start..m.end).step_by(3).map(move |addr| (m, addr)))
        .filter(|&(map, addr)| {
            let moved = Mapping {
                path: a.clone(),
                ..map.clone()
            };
            without.locate(&moved, addr) != symbolizer.locate(&moved, addr)
        })
        .count();
    assert!(differ > 0);
}
