//! Files the engines load into the counted program, embedded in the binary at
//! build time and written out to a cache file on first use: the QEMU plugin,
//! the exec shim, the native engine's runtime and its host of statically
//! linked programs, the LIKWID marker functions.

use anyhow::Result;
use std::path::PathBuf;

static PLUGIN: &[u8] = include_bytes!(env!("FLOPSCOPE_PLUGIN_SO"));
static EXEC_SHIM: &[u8] = include_bytes!(env!("FLOPSCOPE_EXEC_SHIM_SO"));
static NATIVE_RUNTIME: &[u8] = include_bytes!(env!("FLOPSCOPE_NATIVE_RUNTIME_SO"));
static SAMPLER: &[u8] = include_bytes!(env!("FLOPSCOPE_SAMPLER_SO"));
static LIKWID_MARKERS: &[u8] = include_bytes!(env!("FLOPSCOPE_LIKWID_MARKERS_SO"));
static STATIC_HOST: &[u8] = include_bytes!(env!("FLOPSCOPE_STATIC_HOST_SO"));

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
/// content; other versions' copies unused for a month are removed) and
/// returns its path.
fn materialize(stem: &str, hash: &str, bytes: &[u8]) -> Result<PathBuf> {
    materialize_as(stem, hash, ".so", bytes)
}

/// [`materialize`] with the name's suffix `ext`; an executable when `ext`
/// is empty (written executable before it takes its name).
fn materialize_as(stem: &str, hash: &str, ext: &str, bytes: &[u8]) -> Result<PathBuf> {
    let name = format!("{stem}-{}-{hash}{ext}", env!("CARGO_PKG_VERSION"));
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for dir in [
        cache_dir(),
        std::env::temp_dir().join(format!("flopscope-{uid}")),
    ] {
        let p = dir.join(&name);
        if p.is_file() {
            mark_used(&p);
            return Ok(p);
        }
        let written = if ext.is_empty() {
            std::fs::create_dir_all(&dir).is_ok() && write_executable(&p, bytes).is_ok()
        } else {
            std::fs::create_dir_all(&dir).is_ok()
                && flopscope_model::write_atomic(&p, bytes).is_ok()
        };
        if written {
            remove_unused(&dir, stem, &name);
            return Ok(p);
        }
    }
    anyhow::bail!(
        "cannot write {name} to {} or the temporary directory: make one writable, or set FLOPSCOPE_QEMU_PLUGIN to a copy of the plugin",
        cache_dir().display()
    )
}

/// Writes an executable file: a private name first, made executable, then
/// renamed (another flopscope never finds it half-written or unexecutable).
fn write_executable(p: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    let tmp = p.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        .and_then(|()| std::fs::rename(&tmp, p))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Another version's copy unused this long is removed. Copies in use stay:
/// two flopscope builds may run at once (a cluster's shared home, an old
/// build finishing a long job), and a running job's programs load its copy
/// at every exec.
const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Dates the copy's last use (its modification time).
fn mark_used(p: &std::path::Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(p) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Removes the other versions' copies of `stem` unused for [`UNUSED_FOR`].
fn remove_unused(dir: &std::path::Path, stem: &str, keep: &str) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let f = e.file_name().to_string_lossy().into_owned();
        let unused = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > UNUSED_FOR);
        if f.starts_with(&format!("{stem}-")) && f != keep && unused {
            let _ = std::fs::remove_file(e.path());
        }
    }
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

/// The native engine's host of statically linked programs (an executable):
/// the embedded copy.
pub fn static_host() -> Result<PathBuf> {
    materialize_as(
        "static-host",
        env!("FLOPSCOPE_STATIC_HOST_HASH"),
        "",
        STATIC_HOST,
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_versions_unused_for_a_month_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, days_ago: u64| {
            let p = dir.path().join(name);
            std::fs::write(&p, b"x").unwrap();
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(days_ago * 86400);
            std::fs::File::options()
                .append(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
            p
        };
        let ours = file("runtime-0.2.0-c.so", 0);
        let recent = file("runtime-0.1.0-b.so", 29);
        let old = file("runtime-0.0.9-a.so", 31);
        let other_stem = file("plugin-0.0.9-a.so", 40);
        remove_unused(dir.path(), "runtime", "runtime-0.2.0-c.so");
        assert!(ours.exists() && recent.exists() && other_stem.exists());
        assert!(!old.exists());
        // A use dates the copy anew: an old copy in use is kept.
        let used = file("runtime-0.0.8-d.so", 60);
        mark_used(&used);
        remove_unused(dir.path(), "runtime", "runtime-0.2.0-c.so");
        assert!(used.exists());
    }
}
