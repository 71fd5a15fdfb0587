//! Files the engines load into the counted program, embedded in the binary at
//! build time and written out to a cache file on first use: the QEMU plugin,
//! the exec shim, the native engine's runtime, the LIKWID marker functions.

use anyhow::Result;
use std::path::PathBuf;

static PLUGIN: &[u8] = include_bytes!(env!("FLOPSCOPE_PLUGIN_SO"));
static EXEC_SHIM: &[u8] = include_bytes!(env!("FLOPSCOPE_EXEC_SHIM_SO"));
static NATIVE_RUNTIME: &[u8] = include_bytes!(env!("FLOPSCOPE_NATIVE_RUNTIME_SO"));
static SAMPLER: &[u8] = include_bytes!(env!("FLOPSCOPE_SAMPLER_SO"));
static LIKWID_MARKERS: &[u8] = include_bytes!(env!("FLOPSCOPE_LIKWID_MARKERS_SO"));

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("flopscope");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".cache/flopscope");
    }
    std::env::temp_dir().join("flopscope")
}

/// Writes `bytes` as `<stem>-<version>-<hash>.so` in the cache (once per
/// content; older copies of the same stem are removed) and returns its path.
fn materialize(stem: &str, hash: &str, bytes: &[u8]) -> Result<PathBuf> {
    let name = format!("{stem}-{}-{hash}.so", env!("CARGO_PKG_VERSION"));
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for dir in [
        cache_dir(),
        std::env::temp_dir().join(format!("flopscope-{uid}")),
    ] {
        let p = dir.join(&name);
        if p.is_file() {
            return Ok(p);
        }
        if std::fs::create_dir_all(&dir).is_ok() && flopscope_model::write_atomic(&p, bytes).is_ok()
        {
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for e in rd.flatten() {
                    let f = e.file_name().to_string_lossy().into_owned();
                    if f.starts_with(&format!("{stem}-")) && f != name {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
            return Ok(p);
        }
    }
    anyhow::bail!(
        "cannot write {name} to {} or the temporary directory: make one writable, or set FLOPSCOPE_QEMU_PLUGIN to a copy of the plugin",
        cache_dir().display()
    )
}

/// The plugin's path: `FLOPSCOPE_QEMU_PLUGIN` if set, else the embedded copy.
pub fn path() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("FLOPSCOPE_QEMU_PLUGIN") {
        return Ok(PathBuf::from(p));
    }
    materialize("qemu-plugin", env!("FLOPSCOPE_PLUGIN_HASH"), PLUGIN)
}

/// The exec shim's path (the embedded copy).
pub fn exec_shim() -> Result<PathBuf> {
    materialize("exec-shim", env!("FLOPSCOPE_EXEC_SHIM_HASH"), EXEC_SHIM)
}

/// The native engine's runtime: `FLOPSCOPE_NATIVE_RUNTIME` if set, else the
/// embedded copy.
pub fn native_runtime() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("FLOPSCOPE_NATIVE_RUNTIME") {
        return Ok(PathBuf::from(p));
    }
    materialize(
        "native-runtime",
        env!("FLOPSCOPE_NATIVE_RUNTIME_HASH"),
        NATIVE_RUNTIME,
    )
}

/// The sampler preload library (time per function): the embedded copy.
pub fn sampler() -> Result<PathBuf> {
    materialize("sampler", env!("FLOPSCOPE_SAMPLER_HASH"), SAMPLER)
}

/// LIKWID's marker functions on flopscope's markers (crates/markers/likwid),
/// preloaded into programs that call LIKWID's: the embedded copy.
pub fn likwid_markers() -> Result<PathBuf> {
    materialize(
        "likwid-markers",
        env!("FLOPSCOPE_LIKWID_MARKERS_HASH"),
        LIKWID_MARKERS,
    )
}
