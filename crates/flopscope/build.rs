//! Builds the QEMU plugin (crates/engine-qemu, a cdylib) in release mode and
//! hands its path to the CLI, which embeds it: `cargo install --path
//! crates/flopscope` then yields one self-contained tool.
//!
//! Also the native engine's runtime and the sampler, loaded into counted
//! programs. Cargo cannot yet depend on a cdylib artifact: each is a nested
//! cargo build with its own target directory (crates/preload-build, which
//! the tests of those libraries build them with too).

use flopscope_preload_build as preload_build;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let plugin_dir = manifest_dir.join("../engine-qemu");
    let counter_file_dir = manifest_dir.join("../counter-file");
    let runtime_dir = manifest_dir.join("../native-runtime");
    let sampler_dir = manifest_dir.join("../sampler");
    let isa_dir = manifest_dir.join("../isa");
    let model_dir = manifest_dir.join("../model");
    for d in [
        &plugin_dir,
        &counter_file_dir,
        &runtime_dir,
        &sampler_dir,
        &isa_dir,
        &model_dir,
    ] {
        println!("cargo:rerun-if-changed={}", d.display());
    }
    println!("cargo:rerun-if-env-changed=FLOPSCOPE_PLUGIN_TARGET_DIR");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let target_dir = std::env::var_os("FLOPSCOPE_PLUGIN_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| out_dir.join("plugin-target"));
    let so = preload_build::cdylib(
        &plugin_dir,
        &target_dir,
        &[],
        &[],
        "libflopscope_engine_qemu.so",
        "the QEMU plugin",
    );
    embed("PLUGIN", &so);
    // The native engine's runtime: same nested build, with its preload
    // feature (its own allocator and the take-over constructor), and its
    // unwinder linked in (libgcc_eh) rather than loaded (libgcc_s): every
    // counted program loads the library.
    let rt = preload_build::preload(
        &runtime_dir,
        &target_dir,
        "libflopscope_native_runtime.so",
        "the native runtime",
    );
    embed("NATIVE_RUNTIME", &rt);
    // The sampler (time per function of the native timed run): loaded into
    // the program too, so built the same way.
    let sampler = preload_build::preload(
        &sampler_dir,
        &target_dir,
        "libflopscope_sampler.so",
        "the sampler",
    );
    embed("SAMPLER", &sampler);
    build_exec_shim(&plugin_dir.join("shim/exec_shim.c"), &out_dir);
    build_static_host(&runtime_dir.join("host/static_host.c"), &out_dir);
    build_likwid_markers(&manifest_dir.join("../markers"), &out_dir);
}

/// Hands a built file to the CLI: its path and a content key for the cache
/// file name (so that start-up need not hash it).
fn embed(name: &str, path: &std::path::Path) {
    let bytes = std::fs::read(path).expect("the built file is readable");
    let hash = bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    });
    println!("cargo:rustc-env=FLOPSCOPE_{name}_SO={}", path.display());
    println!("cargo:rustc-env=FLOPSCOPE_{name}_HASH={hash:016x}");
}

/// Compiles the C file `src` with `args` (then the output and the input,
/// then `libs`) into `out` and embeds it under `name`; `what` names it in
/// errors.
fn build_c(
    name: &str,
    what: &str,
    src: &std::path::Path,
    out: &std::path::Path,
    args: &[&str],
    libs: &[&str],
) {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = Command::new(&cc)
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(src)
        .args(libs)
        .status()
        .unwrap_or_else(|e| panic!("running the C compiler {cc:?} for {what}: {e} (install gcc)"));
    assert!(status.success(), "compiling {} failed", src.display());
    embed(name, out);
}

/// The exec shim is a small C preload library (it must run inside the
/// emulated program, with the program's own libc).
fn build_exec_shim(src: &std::path::Path, out_dir: &std::path::Path) {
    let so = out_dir.join("libflopscope_exec_shim.so");
    let args = ["-shared", "-fPIC", "-O2", "-Wall"];
    build_c("EXEC_SHIM", "the exec shim", src, &so, &args, &["-ldl"]);
}

/// The native engine's host of statically linked programs: a small
/// dynamically linked, position-independent executable the runtime is
/// preloaded into and loads the program into (crates/native-runtime's
/// loader.rs). Position-independent, so that it stays clear of the fixed
/// addresses of a non-PIE static program.
fn build_static_host(src: &std::path::Path, out_dir: &std::path::Path) {
    let exe = out_dir.join("flopscope-static-host");
    let args = ["-O2", "-Wall", "-fPIE", "-pie"];
    build_c(
        "STATIC_HOST",
        "the static-program host",
        src,
        &exe,
        &args,
        &[],
    );
}

/// LIKWID's marker functions on flopscope's markers (crates/markers/likwid),
/// preloaded into counted programs that call LIKWID's own: a C library, as
/// it runs inside the program. Its soname is its own, never LIKWID's: the
/// loader would otherwise take it for the program's liblikwid.so.5 and not
/// load LIKWID's library (whose other functions the program may use).
fn build_likwid_markers(markers: &std::path::Path, out_dir: &std::path::Path) {
    let src = markers.join("likwid/likwid.c");
    for f in [&src, &markers.join("include")] {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let so = out_dir.join("libflopscope_likwid.so");
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-fvisibility=hidden"])
        .arg("-Wl,-soname,libflopscope_likwid.so")
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| {
            panic!("running the C compiler {cc:?} for the LIKWID markers: {e} (install gcc)")
        });
    assert!(status.success(), "compiling {} failed", src.display());
    embed("LIKWID_MARKERS", &so);
}
