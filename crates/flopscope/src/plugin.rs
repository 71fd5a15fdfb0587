//! The QEMU plugin, embedded in the binary at build time and written out to
//! a cache file on first use.

use anyhow::Result;
use std::path::PathBuf;

static PLUGIN: &[u8] = include_bytes!(env!("FLOPSCOPE_PLUGIN_SO"));

/// FNV-1a: a content key for the cache file name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100000001b3))
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("flopscope");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".cache/flopscope");
    }
    std::env::temp_dir().join("flopscope")
}

/// The plugin's path: `FLOPSCOPE_QEMU_PLUGIN` if set, else the embedded copy
/// written (atomically, once per content) into the user's cache directory.
pub fn path() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("FLOPSCOPE_QEMU_PLUGIN") {
        return Ok(PathBuf::from(p));
    }
    let name = format!("qemu-plugin-{}-{:016x}.so", env!("CARGO_PKG_VERSION"), fnv1a(PLUGIN));
    for dir in [cache_dir(), std::env::temp_dir().join(format!("flopscope-{}", unsafe { libc::getuid() }))] {
        let p = dir.join(&name);
        if p.is_file() {
            return Ok(p);
        }
        if std::fs::create_dir_all(&dir).is_ok() && flopscope_model::write_atomic(&p, PLUGIN).is_ok() {
            return Ok(p);
        }
    }
    anyhow::bail!(
        "cannot write the QEMU plugin to {} or the temporary directory: make one writable, or set FLOPSCOPE_QEMU_PLUGIN to a copy of the plugin",
        cache_dir().display()
    )
}
