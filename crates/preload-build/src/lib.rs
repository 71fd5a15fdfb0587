//! Builds a library of this workspace as a release cdylib in a target
//! directory of its own: the QEMU plugin, and the libraries loaded into
//! every counted program (the native engine's runtime, the sampler).
//!
//! Cargo cannot yet depend on a cdylib artifact, so this runs a nested
//! cargo (no lock shared with the outer build). The CLI's build script
//! embeds what it builds; the tests of the runtime and the sampler load
//! what they build, built the same way here, so that they test the
//! library that ships.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the cdylib of the crate in `dir` in release mode, in `target_dir`,
/// and returns the path of `file` there; `extra` are cargo arguments
/// (features), `rustc_args` go to the library's own compilation only.
///
/// # Panics
/// When cargo cannot run, the build fails (with cargo's output) or `file`
/// is missing after it: a build script or a test cannot go on then.
pub fn cdylib(
    dir: &Path,
    target_dir: &Path,
    extra: &[&str],
    rustc_args: &[String],
    file: &str,
    what: &str,
) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    if rustc_args.is_empty() {
        cmd.arg("build").arg("--lib");
    } else {
        cmd.args(["rustc", "--lib", "--crate-type", "cdylib"]);
    }
    cmd.arg("--release")
        .args(extra)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        // The outer build's flags (coverage, sanitizers) are not the library's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        // Loaded into every counted run: keep it small (no debug info); a
        // panic must not unwind into the program.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort");
    if !rustc_args.is_empty() {
        cmd.arg("--").args(rustc_args);
    }
    let out = cmd.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "building {what} ({}) failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let so = target_dir.join("release").join(file);
    assert!(
        so.is_file(),
        "{what} was built but {} is missing",
        so.display()
    );
    so
}

/// Builds a library loaded into counted programs (the crate in `dir` with
/// its `preload` feature: its constructor and interposers) with the C
/// compiler's unwinder linked in ([`static_unwinder`]).
pub fn preload(dir: &Path, target_dir: &Path, file: &str, what: &str) -> PathBuf {
    cdylib(
        dir,
        target_dir,
        &["--features", "preload"],
        &static_unwinder(),
        file,
        what,
    )
}

/// rustc arguments linking the C compiler's static unwinder (libgcc_eh.a)
/// into a library, so that it needs no libgcc_s.so (whose constructor
/// alone costs tens of microseconds of CPUID in a virtual machine, in
/// every counted program); none when the compiler has no such archive (the
/// library then loads libgcc_s as usual).
pub fn static_unwinder() -> Vec<String> {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let Ok(out) = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return Vec::new();
    };
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    match path.parent() {
        Some(dir) if path.is_absolute() && path.is_file() => vec![
            "-L".into(),
            dir.display().to_string(),
            "-l".into(),
            "static:+whole-archive=gcc_eh".into(),
        ],
        _ => Vec::new(),
    }
}
