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
    let time_cases: [&[&str]; 2] = [&["-o", "/nonexistent/dir/t.json"], &["-o", "/"]];
    let all = cases
        .iter()
        .map(|c| ("count", *c))
        .chain(time_cases.iter().map(|c| ("time", *c)));
    for (command, extra) in all {
        let out = Command::new(FLOPSCOPE)
            .arg(command)
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

/// A program that runs until stopped, doing one multiply per iteration.
fn spinner() -> std::path::PathBuf {
    crate::support::build("processes/spin.c", &["-O2"])
}

/// `flopscope count --no-native` of the spinner under `engine`, in a
/// process group of its own, its temporary files under `work`, the report
/// to `json` (--no-native: the spinner never ends, so a native timed run
/// would take any signal before the counting).
fn count_spinner(
    engine: &str,
    json: &std::path::Path,
    work: &std::path::Path,
    stderr: std::process::Stdio,
) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    Command::new(FLOPSCOPE)
        .args(["count", "--no-native", "--engine", engine, "-o"])
        .arg(json)
        .arg("--")
        .arg(spinner())
        .env("TMPDIR", work)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// The processes of process group `pgid`, as pgrep lists them.
fn group_members(pgid: i32) -> String {
    let out = Command::new("pgrep")
        .args(["-g", &pgid.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// SIGKILL to flopscope, which it cannot catch: the program (or QEMU) dies
/// with it rather than run on unwatched, and the next run removes the
/// temporary files the killed one had no chance to.
#[test]
fn a_run_killed_outright_leaves_no_process_and_the_next_run_removes_its_files() {
    for engine in ["emulate", "native"] {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let json = tmp.path().join("r.json");
        let mut child = count_spinner(engine, &json, &work, std::process::Stdio::null());
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let pid = child.id() as i32;
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        child.wait().unwrap();
        // The kernel sends the program its SIGKILL as flopscope exits; give
        // it a moment to go.
        let mut alive = group_members(pid);
        for _ in 0..50 {
            if alive.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            alive = group_members(pid);
        }
        assert!(alive.is_empty(), "{engine}: processes left: {alive}");
        let count = || std::fs::read_dir(&work).unwrap().count();
        assert_eq!(count(), 1, "{engine}: the killed run's directory");
        let next = Command::new(FLOPSCOPE)
            .args(["count", "--no-native", "--engine", engine, "-o"])
            .arg(tmp.path().join("r2.json"))
            .args(["--", "/bin/true"])
            .env("TMPDIR", &work)
            .output()
            .unwrap();
        assert!(next.status.success(), "{engine}: {next:?}");
        assert_eq!(count(), 0, "{engine}: left after the next run");
    }
}

/// SIGTERM to flopscope (a batch system's time limit), and SIGINT to its
/// whole process group (Ctrl-C), in the middle of a counted run: the program
/// gets the signal, the report is written with the counts so far, marked
/// incomplete with the signal named, flopscope exits 128 + the signal, its
/// temporary files are gone and no process is left behind.
#[test]
fn an_interrupted_run_keeps_its_counts_and_leaves_nothing_behind() {
    for engine in ["emulate", "native"] {
        for (sig, group) in [(libc::SIGTERM, false), (libc::SIGINT, true)] {
            let tmp = tempfile::tempdir().unwrap();
            let json = tmp.path().join("r.json");
            let work = tmp.path().join("work");
            std::fs::create_dir(&work).unwrap();
            let child = count_spinner(engine, &json, &work, std::process::Stdio::piped());
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let pid = child.id() as i32;
            // SAFETY: signalling our own child (or its process group).
            unsafe { libc::kill(if group { -pid } else { pid }, sig) };
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!(
                "{engine}, signal {sig}{}",
                if group { " to the group" } else { "" }
            );
            assert_eq!(out.status.code(), Some(128 + sig), "{what}: {err}");
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let name = if sig == libc::SIGTERM {
                "SIGTERM"
            } else {
                "SIGINT"
            };
            assert_eq!(r["exit_status"], format!("signal:{name}"), "{what}");
            assert_eq!(r["complete"], false, "{what}");
            assert!(
                r["flop"]["total"].as_u64().unwrap() > 0,
                "{what}: no FLOP kept"
            );
            let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
            assert!(
                left.is_empty(),
                "{what}: left in the temporary directory: {left:?}"
            );
            // No process of the run is left (QEMU, the program).
            let alive = group_members(pid);
            assert!(alive.is_empty(), "{what}: processes left: {alive}");
        }
    }
}

/// `--format csv` is one well-formed table: one header, every row with its
/// columns, the totals' and functions' FLOP as in the JSON.
#[test]
fn csv_is_one_table() {
    let exe = crate::support::build("triad.c", crate::support::SSE2);
    let out = Command::new(FLOPSCOPE)
        .args(["count", "--no-native", "--format", "csv", "--"])
        .arg(&exe)
        .args(["1000", "3"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..2], ["kind", "scope"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "row {r:?}");
        assert!(matches!(r[0], "mix" | "totals"), "row {r:?}");
    }
    let flop = header.iter().position(|h| *h == "flop").unwrap();
    let total: u64 = rows
        .iter()
        .find(|r| r[0] == "totals" && r[1] == "total")
        .unwrap()[flop]
        .parse()
        .unwrap();
    assert_eq!(total, 2 * 1000 * 3, "triad's 2 n reps FLOP");
    let in_functions: u64 = rows
        .iter()
        .filter(|r| r[0] == "totals" && r[1].starts_with("function:"))
        .map(|r| r[flop].parse::<u64>().unwrap())
        .sum();
    assert_eq!(in_functions, total);
}

/// Standard output closed before the report is written (`flopscope count
/// ... | head -1` after head has ended): the program dies of SIGPIPE as it
/// would alone, flopscope does not; the report it could not print is kept
/// in a file named in the error, and the temporary directory is left empty.
#[test]
fn a_closed_standard_output_loses_nothing_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut child = Command::new(FLOPSCOPE)
        .args(["count", "--engine", "native", "--"])
        .args(program(&tmp.path().join("ran")))
        .env("TMPDIR", &work)
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let kept = tmp
        .path()
        .join(format!("flopscope-report-{}.txt", child_pid(&err)));
    assert!(err.contains("Broken pipe") && kept.exists(), "{err}");
    let report = std::fs::read_to_string(&kept).unwrap();
    assert!(
        report.contains("signal SIGPIPE") || report.contains("SIGPIPE"),
        "{report}"
    );
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
    assert!(left.is_empty(), "left in the temporary directory: {left:?}");
}

/// The pid in "flopscope-report-PID.txt" of an error message.
fn child_pid(err: &str) -> String {
    let at = err
        .find("flopscope-report-")
        .expect("the kept report named")
        + 17;
    err[at..].chars().take_while(char::is_ascii_digit).collect()
}
