//! Builds the QEMU plugin (crates/engine-qemu, a cdylib) in release mode and
//! hands its path to the CLI, which embeds it: `cargo install --path
//! crates/flopscope` then yields one self-contained tool.
//!
//! Cargo cannot yet depend on a cdylib artifact, so this runs a nested cargo
//! with its own target directory (no lock shared with the outer build).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let plugin_dir = manifest_dir.join("../engine-qemu");
    let isa_dir = manifest_dir.join("../isa");
    let model_dir = manifest_dir.join("../model");
    for d in [&plugin_dir, &isa_dir, &model_dir] {
        println!("cargo:rerun-if-changed={}", d.display());
    }
    println!("cargo:rerun-if-env-changed=FLOPSCOPE_PLUGIN_TARGET_DIR");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let target_dir = std::env::var_os("FLOPSCOPE_PLUGIN_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| out_dir.join("plugin-target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .arg("build")
        .arg("--release")
        .arg("--lib")
        .arg("--manifest-path")
        .arg(plugin_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        // The outer build's flags (coverage, sanitizers) are not the plugin's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the QEMU plugin (crates/engine-qemu) failed");
    let so = target_dir.join("release/libflopscope_engine_qemu.so");
    assert!(so.is_file(), "the plugin was built but {} is missing", so.display());
    println!("cargo:rustc-env=FLOPSCOPE_PLUGIN_SO={}", so.display());
}
