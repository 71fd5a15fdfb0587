use std::collections::HashMap;
use std::path::{Path, PathBuf};

use flopscope_symbols::{Location, Mapping, Symbol, Symbolizer};

use crate::util::{nm, path, rebase, tool, NmSymbol, Run, Workdir};

const FUNCTIONS: [&str; 4] = ["main", "sum_squares", "scale", "scale._omp_fn.0"];

struct Program {
    w: Workdir,
    exe: PathBuf,
    run: Run,
    nm: HashMap<String, NmSymbol>,
}

impl Program {
    fn build() -> Program {
        Program::build_with(&[])
    }

    fn build_with(extra: &[&str]) -> Program {
        let w = Workdir::new(&["kernels.c"]);
        let mut flags = vec!["-O2", "-g", "-fopenmp"];
        flags.extend(extra);
        let exe = w.build("gcc", &["kernels.c"], &flags, "kernels");
        let run = Run::of(&exe);
        let nm = nm(&exe);
        Program { w, exe, run, nm }
    }

    fn runtime(&self, vaddr: u64) -> u64 {
        rebase(vaddr, self.nm["main"].vaddr, self.run.value("main"))
    }

    /// Start, middle and last byte of each function.
    fn addresses(&self) -> Vec<u64> {
        FUNCTIONS
            .iter()
            .flat_map(|name| {
                let sym = self.nm[*name];
                let start = self.runtime(sym.vaddr);
                [start, start + sym.size / 2, start + sym.size - 1]
            })
            .collect()
    }

    /// Where `addr` is, read from `file`, a copy of the program with the
    /// same loaded bytes (strip and objcopy do not move them).
    fn locate(&self, symbolizer: &mut Symbolizer, file: &Path, addr: u64) -> Location {
        let map = Mapping {
            path: file.to_path_buf(),
            ..self.run.map(addr).clone()
        };
        symbolizer.locate(&map, addr)
    }

    /// The unstripped program's answers, as if they had been read from `file`.
    fn reference(&self, file: &Path) -> Vec<Location> {
        let mut symbolizer = Symbolizer::new();
        self.addresses()
            .into_iter()
            .map(|addr| {
                let mut location = self.locate(&mut symbolizer, &self.exe, addr);
                location.symbol.module = file.to_path_buf();
                assert!(!location.frames.is_empty());
                location
            })
            .collect()
    }

    fn answers(&self, symbolizer: &mut Symbolizer, file: &Path) -> Vec<Location> {
        self.addresses()
            .into_iter()
            .map(|addr| self.locate(symbolizer, file, addr))
            .collect()
    }

    /// A stripped copy, and its debug info alone in `debug`.
    fn split(&self, stripped: &str, debug: &Path) -> PathBuf {
        tool(
            "objcopy",
            &["--only-keep-debug", path(&self.exe), path(debug)],
        );
        let out = self.w.path(stripped);
        tool("strip", &["-o", path(&out), path(&self.exe)]);
        out
    }
}

#[test]
fn stripped_functions_are_named_by_their_fde() {
    let p = Program::build();
    let stripped = p.w.path("kernels.stripped");
    tool("strip", &["-o", path(&stripped), path(&p.exe)]);
    // Run the stripped copy itself: its own mappings, its own load base.
    let run = Run::of(&stripped);
    let rt = |vaddr| rebase(vaddr, p.nm["main"].vaddr, run.value("main"));
    let mut symbolizer = Symbolizer::new();
    for name in FUNCTIONS {
        let sym = p.nm[name];
        let start = rt(sym.vaddr);
        for addr in [start, start + sym.size / 2, start + sym.size - 1] {
            let location = symbolizer.locate(run.map(addr), addr);
            let want = Symbol {
                name: format!("kernels.stripped+{:#x}", sym.vaddr),
                start,
                size: Some(sym.size),
                module: stripped.clone(),
            };
            assert_eq!(location.symbol, want, "{name} at {addr:#x}");
            assert!(location.frames.is_empty());
        }
    }
}

#[test]
fn gnu_debuglink_beside_in_dot_debug_and_under_a_debug_root() {
    let p = Program::build();
    let debug = p.w.path("kernels.debug");
    let linked = p.split("kernels.linked", &debug);
    tool(
        "objcopy",
        &[
            &format!("--add-gnu-debuglink={}", path(&debug)),
            path(&linked),
        ],
    );
    let reference = p.reference(&linked);

    // Beside the binary.
    assert_eq!(p.answers(&mut Symbolizer::new(), &linked), reference);

    // In .debug/ beside it.
    let dot_debug = p.w.path(".debug");
    std::fs::create_dir(&dot_debug).unwrap();
    std::fs::rename(&debug, dot_debug.join("kernels.debug")).unwrap();
    assert_eq!(p.answers(&mut Symbolizer::new(), &linked), reference);

    // Under a debug root, at the binary's directory.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(p.w.dir.path().strip_prefix("/").unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::rename(dot_debug.join("kernels.debug"), dir.join("kernels.debug")).unwrap();
    let mut symbolizer = Symbolizer::with_debug_roots(vec![root.path().to_path_buf()]);
    assert_eq!(p.answers(&mut symbolizer, &linked), reference);
}

#[test]
fn debuglink_to_another_build_is_refused() {
    let p = Program::build();
    let debug = p.w.path("kernels.debug");
    let linked = p.split("kernels.linked", &debug);
    tool(
        "objcopy",
        &[
            &format!("--add-gnu-debuglink={}", path(&debug)),
            path(&linked),
        ],
    );
    // Another build's debug info under the linked name: its build-id (and
    // CRC) differ, so it must not name this binary's code.
    let other =
        p.w.build("gcc", &["kernels.c"], &["-O1", "-g", "-fopenmp"], "other");
    tool(
        "objcopy",
        &["--only-keep-debug", path(&other), path(&debug)],
    );
    let mut symbolizer = Symbolizer::new();
    for (addr, location) in p
        .addresses()
        .into_iter()
        .zip(p.answers(&mut symbolizer, &linked))
    {
        assert!(
            location.symbol.name.starts_with("kernels.linked+0x"),
            "{addr:#x}: {location:?}"
        );
        assert!(location.frames.is_empty());
    }
}

#[test]
fn debuglink_without_build_id_is_checked_by_crc() {
    let p = Program::build_with(&["-Wl,--build-id=none"]);
    let debug = p.w.path("kernels.debug");
    let linked = p.split("kernels.linked", &debug);
    tool(
        "objcopy",
        &[
            &format!("--add-gnu-debuglink={}", path(&debug)),
            path(&linked),
        ],
    );
    assert!(!tool("readelf", &["-n", path(&linked)]).contains("Build ID"));
    let reference = p.reference(&linked);
    assert_eq!(p.answers(&mut Symbolizer::new(), &linked), reference);

    // One byte more and the CRC no longer matches: refused.
    let mut bytes = std::fs::read(&debug).unwrap();
    bytes.push(0);
    std::fs::write(&debug, bytes).unwrap();
    let answers = p.answers(&mut Symbolizer::new(), &linked);
    assert!(answers
        .iter()
        .all(|l| l.symbol.name.starts_with("kernels.linked+0x") && l.frames.is_empty()));
}

#[test]
fn build_id_debug_file() {
    let p = Program::build();
    let root = tempfile::tempdir().unwrap();
    let notes = tool("readelf", &["-n", path(&p.exe)]);
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("gcc links a build-id")
        .trim()
        .to_string();
    let dir = root.path().join(".build-id").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    let stripped = p.split("kernels.stripped", &dir.join(format!("{}.debug", &id[2..])));
    let reference = p.reference(&stripped);

    let mut symbolizer = Symbolizer::with_debug_roots(vec![root.path().to_path_buf()]);
    assert_eq!(p.answers(&mut symbolizer, &stripped), reference);
    // Without the root, only FDE names.
    let mut symbolizer = Symbolizer::with_debug_roots(Vec::new());
    let answers = p.answers(&mut symbolizer, &stripped);
    assert!(answers
        .iter()
        .all(|l| l.symbol.name.starts_with("kernels.stripped+0x")));
}

/// `same_until` promises that `locate` answers alike over a stretch of
/// addresses: checked at every byte of each function, in a stripped copy
/// (named by FDE) and in one without DWARF but with its symbol table; the
/// stretch is the whole function from its start, and the next address is
/// answered otherwise. With DWARF, where each address may have a line of
/// its own, it promises nothing beyond the address itself.
#[test]
fn same_until_covers_only_addresses_answered_alike() {
    let p = Program::build();
    let stripped = p.w.path("kernels.stripped");
    tool("strip", &["-o", path(&stripped), path(&p.exe)]);
    let symbols_only = p.w.path("kernels.symbols");
    tool(
        "strip",
        &["--strip-debug", "-o", path(&symbols_only), path(&p.exe)],
    );
    for file in [&stripped, &symbols_only] {
        let run = Run::of(file);
        let mut symbolizer = Symbolizer::new();
        for name in FUNCTIONS {
            let sym = p.nm[name];
            let start = rebase(sym.vaddr, p.nm["main"].vaddr, run.value("main"));
            let map = run.map(start);
            let first = symbolizer.locate(map, start);
            let until = symbolizer.same_until(map, start);
            assert_eq!(until, start + sym.size, "{name} in {}", file.display());
            for addr in start..until {
                assert_eq!(symbolizer.locate(map, addr), first, "{name} at {addr:#x}");
                assert!(symbolizer.same_until(map, addr) <= until);
            }
            if map.contains(until) {
                assert_ne!(symbolizer.locate(map, until), first, "{name}'s end");
            }
        }
    }
    let run = Run::of(&p.exe);
    let start = rebase(
        p.nm["sum_squares"].vaddr,
        p.nm["main"].vaddr,
        run.value("main"),
    );
    let mut symbolizer = Symbolizer::new();
    assert_eq!(symbolizer.same_until(run.map(start), start), start + 1);
}

/// Code that no symbol and no FDE covers in a stripped file (the C start-up
/// code gcc links in, `deregister_tm_clones` to `frame_dummy`, has no FDE)
/// is one function per uncovered stretch of its section, named by the
/// stretch's start, not one per address; `same_until` spans it.
#[test]
fn code_nothing_covers_is_one_function_per_stretch() {
    let p = Program::build();
    let stripped = p.w.path("kernels.stripped");
    tool("strip", &["-o", path(&stripped), path(&p.exe)]);
    let crt = ["deregister_tm_clones", "register_tm_clones", "frame_dummy"];
    let vaddrs: Vec<u64> = tool("nm", &["--defined-only", path(&p.exe)])
        .lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [vaddr, "t", name] if crt.contains(&name) => u64::from_str_radix(vaddr, 16).ok(),
                _ => None,
            },
        )
        .collect();
    assert_eq!(vaddrs.len(), crt.len(), "{crt:?} in {}", p.exe.display());
    let run = Run::of(&stripped);
    let rt = |vaddr| rebase(vaddr, p.nm["main"].vaddr, run.value("main"));
    let mut symbolizer = Symbolizer::new();
    let first = rt(vaddrs[0]);
    let map = run.map(first);
    let symbol = symbolizer.locate(map, first).symbol;
    assert!(symbol.name.starts_with("kernels.stripped+0x"), "{symbol:?}");
    assert!(symbol.start <= first, "{symbol:?}");
    for &v in &vaddrs {
        for addr in [rt(v), rt(v) + 1] {
            assert_eq!(symbolizer.locate(map, addr).symbol, symbol, "at {addr:#x}");
        }
    }
    let last = vaddrs.iter().map(|&v| rt(v)).max().unwrap();
    assert!(symbolizer.same_until(map, symbol.start) > last + 1);
}
