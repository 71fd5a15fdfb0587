//! The workflow around the counts: paths checked before the program runs,
//! machine-readable output kept apart from the program's own.

use crate::support::FLOPSCOPE;
use std::process::Command;

/// `sh -c` that leaves a file behind and prints a line: shows whether and
/// where the program ran.
fn program(marker: &std::path::Path) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("echo program-output; touch {}", marker.display()),
    ]
}

#[test]
fn a_bad_output_path_or_machine_file_stops_before_the_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let cases: [&[&str]; 3] = [
        &["-o", "/nonexistent/dir/r.json"],
        &["--machine", "/nonexistent/machine.json"],
        &["-o", "/"],
    ];
    for extra in cases {
        let out = Command::new(FLOPSCOPE)
            .arg("count")
            .args(extra)
            .arg("--")
            .args(program(&marker))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(!marker.exists(), "{extra:?}: the program ran");
        assert!(
            err.contains("/nonexistent") || err.contains("directory"),
            "{extra:?}: {err}"
        );
        // The cause is said once.
        assert_eq!(
            err.matches("os error").count().min(1),
            err.matches("os error").count(),
            "{err}"
        );
    }
}

#[test]
fn json_on_stdout_is_the_report_alone() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    for engine in ["emulate", "native"] {
        let out = Command::new(FLOPSCOPE)
            .args(["count", "--engine", engine, "--format", "json", "--"])
            .args(program(&marker))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("{engine}: stdout is not one JSON document ({e}):\n{stdout}")
        });
        assert_eq!(v["schema"], "flopscope.report/1");
        // The program's line went to stderr, once per run of the program.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("program-output"), "{engine}: {err}");
    }
}
