//! Compiling, running and inspecting the test programs with the real tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use flopscope_symbols::{parse_maps, Mapping};

/// The test programs' sources, beside this file.
pub fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name)
}

/// Runs `program` with `args`, panicking with its output if it fails.
pub fn tool(program: &str, args: &[&str]) -> String {
    tool_in(Path::new("."), program, args)
}

/// `tool` run in directory `dir` (gfortran writes its .mod files there).
pub fn tool_in(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A directory holding a copy of the test sources, so DWARF names them
/// there, and what is built from them.
pub struct Workdir {
    pub dir: tempfile::TempDir,
}

impl Workdir {
    pub fn new(sources: &[&str]) -> Workdir {
        let dir = tempfile::tempdir().unwrap();
        for name in sources.iter().chain(&["probe.c"]) {
            std::fs::copy(source(name), dir.path().join(name)).unwrap();
        }
        Workdir { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Where `// LINE:marker` (or `! LINE:marker`) is in source `name`.
    pub fn line(&self, name: &str, marker: &str) -> u32 {
        let text = std::fs::read_to_string(self.path(name)).unwrap();
        let tag = format!("LINE:{marker}");
        let lines: Vec<_> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.split_whitespace().any(|w| w == tag))
            .collect();
        assert_eq!(lines.len(), 1, "{tag} in {name}");
        lines[0].0 as u32 + 1
    }

    /// Compiles `sources` (paths in this directory) with `compiler` and
    /// `flags`, linking the probe, into `out`.
    pub fn build(&self, compiler: &str, sources: &[&str], flags: &[&str], out: &str) -> PathBuf {
        let probe = self.path("probe.o");
        if !probe.exists() {
            let src = self.path("probe.c");
            tool(
                "gcc",
                &["-O2", "-fPIC", "-c", path(&src), "-o", path(&probe)],
            );
        }
        let out = self.path(out);
        let sources: Vec<PathBuf> = sources.iter().map(|s| self.path(s)).collect();
        // Flags last, so libraries (-l) follow the objects that use them.
        let mut args: Vec<&str> = sources.iter().map(|s| path(s)).collect();
        args.push(path(&probe));
        args.extend(flags);
        args.extend(["-o", path(&out)]);
        tool_in(self.dir.path(), compiler, &args);
        out
    }
}

pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What a test program printed: `name=0x...` values and its maps.
pub struct Run {
    pub values: HashMap<String, u64>,
    pub maps: Vec<Mapping>,
}

impl Run {
    pub fn of(program: &Path) -> Run {
        Run::with_env(program, &[])
    }

    pub fn with_env(program: &Path, env: &[(&str, &Path)]) -> Run {
        let mut command = Command::new(program);
        for (k, v) in env {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{program:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut values = HashMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once("=0x") {
                values.insert(k.to_string(), u64::from_str_radix(v, 16).unwrap());
            }
        }
        Run {
            values,
            maps: parse_maps(&text),
        }
    }

    pub fn value(&self, name: &str) -> u64 {
        self.values[name]
    }

    /// The executable mapping holding `addr`.
    pub fn map(&self, addr: u64) -> &Mapping {
        self.maps
            .iter()
            .find(|m| m.contains(addr))
            .unwrap_or_else(|| panic!("{addr:#x} is in no executable mapping"))
    }
}

/// A defined function symbol as `nm` lists it.
#[derive(Clone, Copy, Debug)]
pub struct NmSymbol {
    pub vaddr: u64,
    pub size: u64,
}

/// The defined text symbols of `file` (weak ones too: C++ template
/// instances), by (mangled) name.
pub fn nm(file: &Path) -> HashMap<String, NmSymbol> {
    tool("nm", &["-S", "--defined-only", path(file)])
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[..] {
                [vaddr, size, "t" | "T" | "w" | "W", name] => Some((
                    name.to_string(),
                    NmSymbol {
                        vaddr: u64::from_str_radix(vaddr, 16).unwrap(),
                        size: u64::from_str_radix(size, 16).unwrap(),
                    },
                )),
                _ => None,
            }
        })
        .collect()
}

/// File address of the first instruction of function `symbol` (as objdump
/// labels it) whose mnemonic starts with `mnemonic`.
pub fn first_instruction(file: &Path, symbol: &str, mnemonic: &str) -> u64 {
    let text = tool("objdump", &["-d", "--no-show-raw-insn", path(file)]);
    let label = format!("<{symbol}>:");
    let body = text
        .split("\n\n")
        .find(|block| block.lines().next().is_some_and(|l| l.ends_with(&label)))
        .unwrap_or_else(|| panic!("{symbol} not in objdump output"));
    body.lines()
        .skip(1)
        .find_map(|line| {
            let (addr, insn) = line.split_once(':')?;
            insn.trim()
                .starts_with(mnemonic)
                .then(|| u64::from_str_radix(addr.trim(), 16).unwrap())
        })
        .unwrap_or_else(|| panic!("no {mnemonic} in {symbol}"))
}

/// Runtime address of file address `vaddr`, given one symbol's file and
/// runtime addresses in the same module.
pub fn rebase(vaddr: u64, known_vaddr: u64, known_runtime: u64) -> u64 {
    known_runtime - known_vaddr + vaddr
}
