//! Comparing the two engines on one program: the keys compared, and the
//! `program` region both engines span alike (kernel.h's `-DWHOLE_REGION`).

use super::Report;
use serde_json::Value;
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

/// The report's region `name`, if it has one.
pub fn region<'a>(r: &'a Report, name: &str) -> Option<&'a Value> {
    r.0["regions"]
        .as_array()?
        .iter()
        .find(|g| g["name"] == name)
}

/// Every way the native engine's report `n` differs from the emulate
/// engine's `e` on [`FLOP_KEYS`], and on [`REGION_KEYS`] of the `program`
/// region when `region_too`.
pub fn differences(what: &str, e: &Report, n: &Report, region_too: bool) -> Vec<String> {
    let mut out = Vec::new();
    for k in FLOP_KEYS {
        if e.0[k] != n.0[k] {
            out.push(format!("{what}: {k}: emulate {} native {}", e.0[k], n.0[k]));
        }
    }
    if region_too {
        match (region(e, "program"), region(n, "program")) {
            (Some(re), Some(rn)) => {
                for k in REGION_KEYS {
                    if re[k] != rn[k] {
                        out.push(format!(
                            "{what}: region program {k}: emulate {} native {}",
                            re[k], rn[k]
                        ));
                    }
                }
            }
            _ => out.push(format!("{what}: region \"program\" missing")),
        }
    }
    out
}
