//! The machine travels with the report: `count` records the machine and the
//! peak it compared with (a saved profile found by the machine's identity,
//! else the theoretical peak at a clock kept between runs), and charts drawn
//! elsewhere use the report's machine, not the renderer's.

use crate::support::FLOPSCOPE;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `flopscope ARGS` with flopscope's config and cache directories in `home`
/// (nothing of the user's is read or written); its report at `json`, if any.
fn flopscope(home: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new(FLOPSCOPE)
        .args(args)
        .env("FLOPSCOPE_CONFIG_DIR", home.join("config"))
        .env("FLOPSCOPE_CACHE_DIR", home.join("cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn count(home: &Path, json: &Path) -> Value {
    let exe = crate::support::build("triad.c", crate::support::SSE2);
    let json_arg = json.to_str().unwrap();
    flopscope(
        home,
        &[
            "count",
            "-o",
            json_arg,
            "--",
            exe.to_str().unwrap(),
            "1000",
            "10",
        ],
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn counts_of_one_machine_compare_with_the_same_peak_every_run() {
    let home = tempfile::tempdir().unwrap();
    let runs: Vec<Value> = (0..3)
        .map(|i| count(home.path(), &home.path().join(format!("r{i}.json"))))
        .collect();
    let m = &runs[0]["machine"];
    assert!(m["identity"]
        .as_str()
        .unwrap()
        .contains(&format!("c{}t", m["threads"].as_u64().unwrap())));
    assert!(m["clock_ghz"].as_f64().unwrap() > 0.0, "{m}");
    assert_eq!(runs[0]["peak"], m["peak"]);
    // Without a saved profile, a bandwidth roof all the same: measured once.
    let bw = m["ceilings"]["bandwidth"].as_array().unwrap();
    let gbs = |level: &str| {
        bw.iter()
            .find(|b| b["level"] == level)
            .unwrap_or_else(|| panic!("no {level} roof: {bw:?}"))["gbytes_per_s"]
            .as_f64()
            .unwrap()
    };
    assert!(gbs("DRAM") > 0.0);
    assert!(m["ceilings"]["source"]
        .as_str()
        .unwrap()
        .contains("measured once on this machine"));
    for r in &runs[1..] {
        // The same machine, the same clock, the same peak and roofs: exactly.
        assert_eq!(r["machine"]["clock_ghz"], m["clock_ghz"]);
        assert_eq!(r["peak"], runs[0]["peak"]);
        assert_eq!(r["machine"]["ceilings"], m["ceilings"]);
    }
    // Where the clock had to be measured, the report says it was kept.
    let source = runs[2]["machine"]["clock_source"].as_str().unwrap();
    if source.contains("measured") {
        assert!(source.contains("kept for later runs"), "{source}");
    }
}

#[test]
fn a_profile_saved_by_bench_is_found_by_the_machines_identity() {
    let home = tempfile::tempdir().unwrap();
    let saved = home.path().join("machine.json");
    flopscope(
        home.path(),
        &[
            "bench",
            "flops",
            "--kernel",
            "peak_sse_fp64",
            "--reps",
            "1",
            "--rep-seconds",
            "0.01",
            "--save",
            saved.to_str().unwrap(),
        ],
    );
    let r = count(home.path(), &home.path().join("r.json"));
    let id = r["machine"]["identity"].as_str().unwrap();
    let kept = home
        .path()
        .join("config/machines")
        .join(format!("{id}.json"));
    assert!(kept.is_file(), "no profile at {kept:?}");
    // Without --machine, the saved profile's measured peak is the reference.
    assert_eq!(r["peak"]["source"], "measured", "{}", r["peak"]);
    assert!(r["peak"]["assumptions"][0]
        .as_str()
        .unwrap()
        .contains(kept.to_str().unwrap()));
    assert!(r["machine"]["ceilings"]["compute"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["measured"] == true && c["name"] == "fp64 SSE, measured"));
}

#[test]
fn a_roofline_drawn_from_anothers_report_has_the_roofs_of_the_machine_that_ran_it() {
    let home = tempfile::tempdir().unwrap();
    let json = home.path().join("r.json");
    let mut r = count(home.path(), &json);
    // The report as a compute node of another kind would have made it.
    let m = &mut r["machine"];
    m["identity"] = "GenuineIntel-06-8f-8-compute-node-112c224t".into();
    m["ceilings"]["machine"] = "Compute node CPU, 112 cores at 2.00 GHz".into();
    m["ceilings"]["compute"] = serde_json::json!([{
        "name": "fp64 AVX-512, theoretical", "precision": "fp64", "width_bits": 512,
        "gflops": 7168.0, "measured": false
    }]);
    m["ceilings"]["bandwidth"] = serde_json::json!([{
        "level": "DRAM", "gbytes_per_s": 307.0, "measured": true
    }]);
    let moved = home.path().join("from-node.json");
    std::fs::write(&moved, serde_json::to_string(&r).unwrap()).unwrap();
    let svg = home.path().join("chart.svg");
    flopscope(
        home.path(),
        &[
            "roofline",
            moved.to_str().unwrap(),
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    // The roofs are labelled to three significant digits.
    assert!(
        text.contains("fp64 AVX-512: 7170 GFLOP/s (theoretical)"),
        "the node's compute roof is missing"
    );
    assert!(
        text.contains("DRAM 307 GB/s (measured)"),
        "the node's DRAM roof is missing"
    );
    assert!(text.contains("Compute node CPU"), "the node is not named");
    // None of the renderer's own roofs (this machine has no AVX-512 roof
    // named so, and the node's list has nothing else).
    assert_eq!(text.matches("GFLOP/s (theoretical)").count(), 1, "{text}");
}
