use std::path::PathBuf;

use flopscope_symbols::{LoadError, Mapping, Symbol, Symbolizer};

use crate::util::{Run, Workdir};

fn mapping(path: PathBuf) -> Mapping {
    Mapping {
        start: 0x7f00_0000_0000,
        end: 0x7f00_0001_0000,
        file_offset: 0x2000,
        executable: true,
        path,
    }
}

#[test]
fn missing_and_non_elf_modules_are_named_by_the_page_of_their_offset() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an ELF file\n").unwrap();
    let truncated = dir.path().join("truncated");
    std::fs::write(&truncated, &std::fs::read("/proc/self/exe").unwrap()[..100]).unwrap();
    let missing = dir.path().join("missing.so");

    let mut symbolizer = Symbolizer::new();
    for (path, name) in [
        (&missing, "missing.so"),
        (&text, "notes.txt"),
        (&truncated, "truncated"),
    ] {
        let map = mapping(path.clone());
        // Every address of a page is one function, named by the page's
        // file offset (the mapping starts at offset 0x2000).
        for addr in [0x7f00_0000_1000, 0x7f00_0000_1123, 0x7f00_0000_1fff] {
            let location = symbolizer.locate(&map, addr);
            assert_eq!(
                location.symbol,
                Symbol {
                    name: format!("{name}+0x3000"),
                    start: 0x7f00_0000_1000,
                    size: Some(0x1000),
                    module: path.clone(),
                }
            );
            assert!(location.frames.is_empty());
            assert_eq!(symbolizer.same_until(&map, addr), 0x7f00_0000_2000);
        }
        // The mapping's last page ends with it.
        let last = Mapping {
            end: 0x7f00_0000_1800,
            ..map.clone()
        };
        assert_eq!(
            symbolizer.same_until(&last, 0x7f00_0000_1123),
            0x7f00_0000_1800
        );
    }
    assert!(matches!(
        symbolizer.load_error(&missing),
        Some(LoadError::Read { .. })
    ));
    assert!(matches!(
        symbolizer.load_error(&text),
        Some(LoadError::NotElf { .. })
    ));
}

#[test]
fn corrupt_debug_info_does_not_panic() {
    let w = Workdir::new(&["kernels.c"]);
    let exe = w.build("gcc", &["kernels.c"], &["-O2", "-g", "-fopenmp"], "kernels");
    let run = Run::of(&exe);
    // Overwrite every DWARF section and .eh_frame with a byte pattern;
    // .symtab stays, so names stay exact.
    let mut bytes = std::fs::read(&exe).unwrap();
    let headers = crate::util::tool("readelf", &["-SW", crate::util::path(&exe)]);
    for line in headers.lines() {
        let Some((_, rest)) = line.split_once("] ") else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 4 && (f[0].starts_with(".debug_") || f[0] == ".eh_frame") {
            let offset = usize::from_str_radix(f[3], 16).unwrap();
            let size = usize::from_str_radix(f[4], 16).unwrap();
            for (i, b) in bytes[offset..offset + size].iter_mut().enumerate() {
                *b = [0xff, 0x00, 0x7f, 0x80, 0x13][i % 5];
            }
        }
    }
    let corrupt = w.path("corrupt");
    std::fs::write(&corrupt, bytes).unwrap();

    let main = run.value("main");
    let map = Mapping {
        path: corrupt,
        ..run.map(main).clone()
    };
    let mut symbolizer = Symbolizer::new();
    for addr in (map.start..map.end).step_by(7) {
        symbolizer.locate(&map, addr);
    }
    assert_eq!(symbolizer.locate(&map, main).symbol.name, "main");
}
