//! What the attribution can load while the program runs: the modules
//! nearly every process maps (the C library and the dynamic loader, as
//! this process maps them: the same files the program gets) and the
//! program's own file, a copy for each worker that may meet them
//! (`flopscope_symbols::preload`).

use crate::parallel::MAX_WORKERS;
use flopscope_symbols::{default_debug_roots, parse_maps, preload};
use std::path::{Path, PathBuf};

/// Begins loading, on an idle-priority thread, the modules the attribution
/// of `program` (an ELF file; `None`: unknown) will most likely need: one
/// copy each for one rank of a parallel job (many ranks share a node and
/// its memory; a copy of the C library with its DWARF holds some 35 MB).
pub fn load_ahead(program: Option<&Path>, rank: bool) {
    let mut paths: Vec<PathBuf> = program.map(Path::to_path_buf).into_iter().collect();
    let own = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    for m in parse_maps(&own) {
        let name = m.path.file_name().map(|n| n.to_string_lossy().into_owned());
        let shared = name.is_some_and(|n| n.starts_with("libc.so") || n.starts_with("ld-linux"));
        if shared && m.path.is_absolute() && !paths.contains(&m.path) {
            paths.push(m.path);
        }
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let copies = if rank { 1 } else { workers };
    preload::start(&paths, copies, default_debug_roots());
}

/// The program has ended: nothing more is loaded ahead.
pub fn program_ended() {
    preload::stop();
}
