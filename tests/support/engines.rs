//! Comparing the two engines on one program: the keys compared, and the
//! `program` region both engines span alike (kernel.h's `-DWHOLE_REGION`).

use std::path::Path;

/// Whole-program keys compared between the engines (bytes differ outside the
/// `program` region: what runs before the native engine takes over).
pub const FLOP_KEYS: [&str; 5] = [
    "flop",
    "flop_by_op",
    "flop_by_width",
    "fp_elements",
    "fp_instructions",
];

/// Keys of the `program` region compared between the engines: all but
/// `instructions` (QEMU counts a REP string once per iteration, the native
/// engine once).
pub const REGION_KEYS: [&str; 8] = [
    "entries",
    "flop",
    "flop_by_op",
    "flop_by_width",
    "fp_elements",
    "fp_instructions",
    "bytes",
    "mem_accesses",
];

/// `crates/markers/include`, where flopscope.h is.
pub fn markers_include() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../markers/include")
        .display()
        .to_string()
}

/// `flags` plus kernel.h's `program` region (flopscope.h's markers).
pub fn with_region(flags: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    v.extend(["-DWHOLE_REGION".into(), "-I".into(), markers_include()]);
    v
}
