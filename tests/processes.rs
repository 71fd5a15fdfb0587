//! Child processes under the emulate and native engines: forked children
//! and programs started with exec (a shell script running kernels) are
//! counted, each exactly, and the job's totals include them.

use crate::support::{build, count_ok_with, kernel_dir, Report};

const ENGINES: [&str; 2] = ["emulate", "native"];

fn child_flop(r: &Report) -> Vec<u64> {
    let mut v: Vec<u64> = r.0["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["flop"]["total"].as_u64().unwrap())
        .filter(|f| *f > 0)
        .collect();
    v.sort();
    v
}

#[test]
fn a_forked_child_and_its_parent_are_both_counted() {
    let exe = build("processes/forker.c", &["-O2"]);
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &["300", "700"], &[]);
        // Parent 300 multiplies, child 700: the job 1000; the child is listed.
        assert_eq!(r.flop("total"), 1000, "{engine}");
        assert_eq!(r.flop_by_op()["mul"], 1000, "{engine}");
        assert_eq!(child_flop(&r), vec![700], "{engine}");
    }
}

#[test]
fn a_script_s_programs_are_followed_through_exec() {
    let scale = build("processes/scale.c", &["-O2"]);
    let script = kernel_dir().join("processes/run_two.sh");
    let args = [scale.to_str().unwrap(), "1000", "3000"];
    for engine in ENGINES {
        let r = count_ok_with(engine, &script, &args, &[]);
        assert_eq!(r.flop("total"), 4000, "{engine}: {}", r.summary());
        assert_eq!(child_flop(&r), vec![1000, 3000], "{engine}");
    }
}

#[test]
fn no_follow_leaves_exec_d_programs_uncounted() {
    for engine in ENGINES {
        no_follow(engine);
    }
}

fn no_follow(engine: &str) {
    let scale = build("processes/scale.c", &["-O2"]);
    let script = kernel_dir().join("processes/run_two.sh");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = std::process::Command::new(crate::support::FLOPSCOPE)
        .args([
            "count",
            "--engine",
            engine,
            "--no-native",
            "--no-follow",
            "-o",
        ])
        .arg(&json)
        .arg("--")
        .arg(&script)
        .args([scale.to_str().unwrap(), "1000", "3000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["flop"]["total"], 0);
}
