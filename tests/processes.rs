//! Child processes under the emulate and native engines: forked children
//! and programs started with exec (a shell script running kernels) are
//! counted, each exactly, and the job's totals include them; each process
//! is listed once (a fork then exec is one) with its command and exit status,
//! the job's regions gather the children's, and `report --diff` writes JSON
//! and CSV.

use crate::support::engines::markers_include;
use crate::support::{build, count_as, count_ok_with, count_with, kernel_dir};
use std::path::Path;

const ENGINES: [&str; 2] = ["emulate", "native"];

#[test]
fn a_forked_child_and_its_parent_are_both_counted() {
    let exe = build("processes/forker.c", &["-O2"]);
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &["300", "700"], &[]);
        // Parent 300 multiplies, child 700: the job 1000; the child is listed.
        assert_eq!(r.flop("total"), 1000, "{engine}");
        assert_eq!(r.flop_by_op()["mul"], 1000, "{engine}");
        assert_eq!(r.child_flop(), vec![700], "{engine}");
    }
}

#[test]
fn a_fork_while_another_thread_translates_leaves_the_child_no_lock_held() {
    // The child of a fork has only the forking thread: a lock of the
    // engine another thread held then (translating the code it rewrites
    // over and over) stayed held in the child, which hung or failed (the
    // native engine, before its forks took every lock first).
    // QEMU's forks of a process rewriting code take long: fewer there.
    let exe = build(
        "processes/fork_busy.c",
        &["-O2", "-pthread", "-fno-math-errno"],
    );
    let m = 1000u64;
    for (engine, k) in [("native", 200u64), ("emulate", 20)] {
        let r = count_ok_with(engine, &exe, &[k.to_string(), m.to_string()], &[]);
        assert_eq!(r.flop("total"), 2 * k * m, "{engine}: {}", r.summary());
        assert_eq!(r.flop_by_op()["sqrt"], k * m, "{engine}");
        assert_eq!(r.child_flop(), vec![2 * m; k as usize], "{engine}");
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
        assert_eq!(r.child_flop(), vec![1000, 3000], "{engine}");
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
    // The warning names the cause, and suggests the native engine only to
    // the emulate engine's users (the native engine follows what QEMU's
    // exec shim cannot).
    let warnings = r["warnings"].as_array().unwrap();
    let w = warnings
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("started a program that was not counted"))
        .unwrap_or_else(|| panic!("{engine}: {warnings:?}"));
    assert!(w.contains("--no-follow"), "{engine}: {w}");
    assert_eq!(
        w.contains("--engine native"),
        engine != "native",
        "{engine}: {w}"
    );
}

/// The launcher's programs: scale.c, marked_scale.c and segv.c.
fn launcher_programs() -> [std::path::PathBuf; 3] {
    let include = format!("-I{}", markers_include());
    [
        build("processes/scale.c", &["-O2"]),
        build("processes/marked_scale.c", &["-O2", &include]),
        build("segv.c", &["-O2", "-mavx2", "-mfma"]),
    ]
}

/// `flopscope count` of launch.sh: scale N1, marked_scale N2 exiting with
/// 5, segv N3, the script exiting with 7.
fn count_launcher(engine: &str, n1: u64, n2: u64, n3: u64) -> (crate::support::Run, Vec<String>) {
    let [scale, marked, segv] = launcher_programs();
    let script = kernel_dir().join("processes/launch.sh");
    let args: Vec<String> = vec![
        scale.display().to_string(),
        n1.to_string(),
        marked.display().to_string(),
        n2.to_string(),
        "5".into(),
        segv.display().to_string(),
        n3.to_string(),
        "7".into(),
    ];
    let run = count_with(engine, &script, &args, &[]);
    let mut argv = vec![script.display().to_string()];
    argv.extend(args);
    (run, argv)
}

#[test]
fn a_launcher_script_lists_its_programs_with_commands_exit_statuses_and_regions() {
    let (n1, n2, n3) = (1000, 3000, 100);
    for engine in ENGINES {
        let (run, argv) = count_launcher(engine, n1, n2, n3);
        // flopscope exits with the script's own code.
        assert_eq!(run.code, 7, "{engine}: {}", run.stderr);
        let r = run.report.expect("a report");
        let v = &r.0;
        let [scale, marked, segv] = launcher_programs();
        assert_eq!(v["exit_status"], 7, "{engine}");
        assert_eq!(v["command"], serde_json::json!(argv), "{engine}");
        // The job: N1 + N2 multiplies, 8 N3 FMA FLOP; the shell does none.
        assert_eq!(
            r.flop("total"),
            n1 + n2 + 8 * n3,
            "{engine}: {}",
            r.summary()
        );
        let procs = v["processes"].as_array().unwrap();
        let got: Vec<(serde_json::Value, serde_json::Value, u64)> = procs
            .iter()
            .map(|p| {
                (
                    p["command"].clone(),
                    p["exit_status"].clone(),
                    p["flop"]["total"].as_u64().unwrap(),
                )
            })
            .collect();
        let s = |p: &std::path::Path| p.display().to_string();
        assert_eq!(
            got,
            vec![
                (serde_json::json!([s(&scale), n1.to_string()]), 0.into(), n1),
                (
                    serde_json::json!([s(&marked), n2.to_string(), "5"]),
                    5.into(),
                    n2
                ),
                (
                    serde_json::json!([s(&segv), n3.to_string()]),
                    "signal:SIGSEGV".into(),
                    8 * n3
                ),
            ],
            "{engine}: one entry per process (a fork then exec is one)"
        );
        // Each process's functions are its own (attributed on several
        // threads, matched back to their process): they sum to its FLOP,
        // and the job's to the job's.
        let fn_flop = |p: &serde_json::Value| -> u64 {
            p["functions"]
                .as_array()
                .expect("functions")
                .iter()
                .map(|f| f["flop"]["total"].as_u64().unwrap())
                .sum()
        };
        let own: Vec<u64> = procs.iter().map(fn_flop).collect();
        assert_eq!(
            own,
            vec![n1, n2, 8 * n3],
            "{engine}: each process's functions"
        );
        assert_eq!(
            fn_flop(v),
            n1 + n2 + 8 * n3,
            "{engine}: the job's functions"
        );
        let mut pids: Vec<u64> = procs.iter().map(|p| p["pid"].as_u64().unwrap()).collect();
        pids.push(v["pid"].as_u64().unwrap());
        pids.sort_unstable();
        pids.dedup();
        assert_eq!(pids.len(), 4, "{engine}: four processes, four pids");
        assert!(procs.iter().all(|p| p.get("fork_of").is_none()), "{engine}");
        // The job's regions: the child's "scale", N2 FLOP in 1 entry.
        let regions = v["regions"].as_array().unwrap();
        assert_eq!(regions.len(), 1, "{engine}: {regions:?}");
        assert_eq!(regions[0]["name"], "scale");
        assert_eq!(regions[0]["entries"], 1);
        assert_eq!(regions[0]["flop"]["total"], n2, "{engine}");
        assert_eq!(v["unmarked"]["flop"]["total"], n1 + 8 * n3, "{engine}");
        // The table: the regions table and one row per process.
        let table = report_table(v);
        let marked_pid = procs[1]["pid"].as_u64().unwrap();
        let region_row = table
            .lines()
            .find(|l| l.trim_start().starts_with("scale "))
            .unwrap_or_else(|| panic!("{engine}: no region row in\n{table}"));
        assert!(region_row.contains("3,000"), "{region_row}");
        assert!(
            region_row.ends_with(&format!("(process {marked_pid})")),
            "{region_row}"
        );
        let rows: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with("Processes"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert_eq!(rows.len(), 4, "{engine}:\n{table}");
        assert!(
            rows[0].contains("exit 7") && rows[0].contains("launch.sh"),
            "{}",
            rows[0]
        );
        assert!(
            rows[2].contains("exit 5") && rows[2].contains(" 3,000 "),
            "{}",
            rows[2]
        );
        assert!(
            rows[3].contains("killed by SIGSEGV") && rows[3].contains(" 800 "),
            "{}",
            rows[3]
        );
        assert!(!table.contains("Child process"), "{table}");
    }
}

/// `flopscope report` of a JSON report: the table.
fn report_table(report: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    std::fs::write(&json, report.to_string()).unwrap();
    let out = std::process::Command::new(crate::support::FLOPSCOPE)
        .arg("report")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_fork_that_does_not_exec_is_a_fork_of_its_parent() {
    let exe = build("processes/forker.c", &["-O2"]);
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &["300", "700"], &[]);
        let v = &r.0;
        let procs = v["processes"].as_array().unwrap();
        assert_eq!(procs.len(), 1, "{engine}");
        let child = &procs[0];
        assert_eq!(child["fork_of"], v["pid"], "{engine}");
        assert_ne!(child["pid"], v["pid"], "{engine}");
        assert_eq!(child["command"], v["command"], "{engine}");
        assert_eq!(child["exit_status"], 0, "{engine}");
        assert_eq!(child["flop"]["total"], 700, "{engine}");
        let table = report_table(v);
        let parent = v["pid"].as_u64().unwrap();
        let row = table
            .lines()
            .find(|l| l.contains("fork of"))
            .unwrap_or_else(|| panic!("{engine}:\n{table}"));
        assert!(
            row.contains(&format!("fork of {} 300 700 (pid {parent})", exe.display())),
            "{row}"
        );
        assert!(row.contains(" 700 "), "{row}");
    }
}

/// Splits one CSV line into its fields (quoted fields may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

#[test]
fn report_diff_writes_json_and_one_csv_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, n1) in [1000u64, 2000].into_iter().enumerate() {
        let (run, _) = count_launcher("native", n1, 3000, 100);
        assert_eq!(run.code, 7, "{}", run.stderr);
        let p = dir.path().join(format!("{i}.json"));
        std::fs::write(&p, run.report.unwrap().0.to_string()).unwrap();
        paths.push(p);
    }
    let diff = |format: &str| {
        let out = std::process::Command::new(crate::support::FLOPSCOPE)
            .args(["report", "--format", format, "--diff"])
            .args(&paths)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // JSON: the counts with both values, the change and the ratio.
    let v: serde_json::Value = serde_json::from_str(&diff("json")).expect("the diff is JSON");
    assert_eq!(v["schema"], "flopscope.diff/1");
    let count = |scope: &str, name: &str, q: &str| {
        v["counts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["scope"] == scope && c["name"] == name && c["quantity"] == q)
            .unwrap_or_else(|| panic!("no {scope} {name} {q} in {v}"))
            .clone()
    };
    let total = count("program", "", "FLOP");
    assert_eq!(
        (total["a"].as_u64(), total["b"].as_u64()),
        (Some(4800), Some(5800))
    );
    assert_eq!(total["delta"], 1000);
    assert_eq!(total["ratio"].as_f64(), Some(5800.0 / 4800.0));
    let region = count("region", "scale", "FLOP");
    assert_eq!(
        (region["a"].as_u64(), region["b"].as_u64()),
        (Some(3000), Some(3000))
    );
    assert_eq!(region["ratio"].as_f64(), Some(1.0));
    assert_eq!(count("unmarked", "", "FLOP fp64 256-bit")["a"], 800);
    // The function that scaled N1 elements: 1000 FLOP in A, 2000 in B.
    let f = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["a"]["flop"] == 1000)
        .unwrap_or_else(|| panic!("no function with 1000 FLOP in A: {v}"));
    assert!(f["name"].as_str().unwrap().starts_with("scale ["), "{f}");
    assert_eq!(
        (f["b"]["flop"].as_u64(), f["flop_delta"].as_i64()),
        (Some(2000), Some(1000))
    );
    assert_eq!(f["flop_ratio"].as_f64(), Some(2.0));
    assert_eq!(f["presence"], "both");
    assert!(v["loops"].as_array().is_some() && v["rates"].as_array().is_some());
    // CSV: one table, one header, every row as wide as it.
    let csv = diff("csv");
    let rows: Vec<Vec<String>> = csv.lines().map(csv_fields).collect();
    assert_eq!(rows[0], ["scope", "name", "metric", "a", "b", "ratio"]);
    assert_eq!(rows.iter().filter(|r| r[0] == "scope").count(), 1);
    assert!(rows.iter().all(|r| r.len() == 6), "{csv}");
    assert!(!csv.lines().any(str::is_empty), "no blank line: one table");
    let find = |scope: &str, name: &str, metric: &str| {
        rows.iter()
            .find(|r| r[0] == scope && r[1] == name && r[2] == metric)
            .unwrap_or_else(|| panic!("no {scope},{name},{metric} in\n{csv}"))
    };
    assert_eq!(find("program", "", "FLOP")[3..5], ["4800", "5800"]);
    assert_eq!(find("region", "scale", "FLOP")[3..], ["3000", "3000", "1"]);
    let fname = f["name"].as_str().unwrap();
    assert_eq!(find("function", fname, "FLOP")[3..], ["1000", "2000", "2"]);
    for scope in ["program", "region", "unmarked", "function", "loop"] {
        assert!(
            rows.iter().any(|r| r[0] == scope),
            "no {scope} rows in\n{csv}"
        );
    }
}

/// The child's pid orphan.c prints.
fn orphan_pid(stdout: &str) -> i32 {
    stdout
        .strip_prefix("child ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("unexpected output {stdout:?}"))
}

/// processes/orphan.c: a child that does its work after its parent (the
/// program flopscope started) ended. flopscope adopts it, waits for it and
/// counts it exactly; its report used to be read at the parent's end,
/// without the child's square roots (sqrt 0, `complete: true`), and the
/// child ran on after flopscope.
#[test]
fn a_child_that_outlives_its_parent_is_waited_for_and_counted() {
    let exe = build("processes/orphan.c", &["-O2", "-msse2", "-fno-math-errno"]);
    let n = 1000u64;
    for engine in ENGINES {
        let run = count_with(engine, &exe, &[n.to_string().as_str(), "finish"], &[]);
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        let r = run.report.expect("a report");
        assert_eq!(r.0["complete"], true, "{engine}: {:?}", r.warnings());
        let ops = r.flop_by_op();
        assert_eq!((ops["sqrt"], ops["add"]), (n, 2 * n), "{engine}");
        assert_eq!(r.child_flop(), vec![2 * n], "{engine}");
        assert!(
            !Path::new(&format!("/proc/{}", orphan_pid(&run.stdout))).exists(),
            "{engine}: the child outlived flopscope"
        );
    }
}

/// processes/orphan.c: a child that would run forever once its parent
/// ended is stopped after --linger, named in the report (marked
/// incomplete), and does not outlive flopscope; the parent's counts are
/// there.
#[test]
fn a_child_left_running_is_stopped_after_the_linger_time_and_named() {
    let exe = build("processes/orphan.c", &["-O2", "-msse2", "-fno-math-errno"]);
    let n = 1000u64;
    for engine in ENGINES {
        let run = count_as(
            engine,
            &["--no-native", "--linger", "0.5"],
            &exe,
            &[n.to_string().as_str(), "linger"],
            &[],
        );
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        let pid = orphan_pid(&run.stdout);
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{engine}: the child outlived flopscope"
        );
        let r = run.report.expect("a report");
        assert_eq!(r.0["complete"], false, "{engine}");
        let named = format!("still ran 0.5 s after it ended and was stopped, so that none outlives flopscope: {pid} `");
        assert!(
            r.warnings()
                .iter()
                .any(|w| w.contains(&named) && w.contains("(SIGTERM)")),
            "{engine}: {:?}",
            r.warnings()
        );
        assert_eq!(r.flop_by_op()["add"], n, "{engine}");
        // The native runtime records the signal; under QEMU, flopscope's
        // own wait status for the child it reaped says it.
        let child = &r.0["processes"][0]["exit_status"];
        assert_eq!(child, "signal:SIGTERM", "{engine}");
    }
}

/// processes/spawn_missing.c: posix_spawn of a program that cannot be
/// executed fails with the exec error under both engines, as alone. QEMU
/// runs glibc's vfork-like clone as a fork, so the child's error never
/// reached the parent: posix_spawn returned 0 (the exec shim now finds
/// the error first).
#[test]
fn posix_spawn_of_a_missing_program_fails_as_it_does_alone() {
    let exe = build("processes/spawn_missing.c", &["-O2"]);
    let alone = std::process::Command::new(&exe)
        .output()
        .expect("runs alone");
    let expected = String::from_utf8_lossy(&alone.stdout);
    assert!(
        expected.starts_with("posix_spawn missing: 2\n"),
        "{expected}"
    );
    for engine in ENGINES {
        let run = count_with::<&str>(engine, &exe, &[], &[]);
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        assert_eq!(run.stdout, expected, "{engine}");
    }
}

/// A program that lowers its limit on open files to 3 and forks
/// (tests/kernels/native/few_files.c): the child's counter file needs a
/// descriptor. With only the soft limit lowered, the engine raises it for
/// the moment it needs and counts the child exactly (N adds in its
/// region); with the hard limit lowered too, the child runs uncounted, and
/// the report says so and is marked incomplete (the native engine said
/// nothing; the emulate engine's child added into its parent's counters
/// and code table, and the functions' sums came out one block high).
#[test]
fn a_child_left_no_file_descriptor_is_counted_or_named() {
    let n = 1000u64;
    let exe = build("native/few_files.c", &["-O2", "-I", &markers_include()]);
    let child_flop = |r: &crate::support::Report| {
        crate::support::engines::region(r, "child").and_then(|g| g["flop"]["total"].as_u64())
    };
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &["soft", &n.to_string()], &[]);
        assert_eq!(
            (r.flop("total"), child_flop(&r), r.child_flop()),
            (n, Some(n), vec![n]),
            "{engine}, the soft limit lowered"
        );
        let run = count_with(engine, &exe, &["both", &n.to_string()], &[]);
        let r = run.report.expect("a report");
        let what = format!("{engine}, both limits lowered: {}", run.stderr);
        assert_eq!(
            (r.0["exit_status"].as_i64(), r.0["complete"].as_bool()),
            (Some(0), Some(false)),
            "{what}"
        );
        assert_eq!((r.flop("total"), child_flop(&r)), (0, None), "{what}");
        assert!(
            r.warnings()
                .iter()
                .any(|w| w.starts_with("1 forked child process(es) ran uncounted")),
            "{what}: {:?}",
            r.warnings()
        );
    }
}

/// A program that runs itself again through /proc/self/exe (fork, then
/// exec of /proc/self/exe: tests/kernels/processes/self_exec.c): under
/// QEMU that name is QEMU's own binary, so the relaunched child ran
/// nothing and the program failed. Both engines count the parent's P and
/// the child's C adds, each in its region, and list the child.
#[test]
fn a_program_that_runs_itself_again_through_proc_self_exe_is_counted() {
    let (p, c) = (300u64, 700u64);
    let exe = build("processes/self_exec.c", &["-O2", "-I", &markers_include()]);
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &[p.to_string(), c.to_string()], &[]);
        let region = |name: &str| {
            crate::support::engines::region(&r, name).and_then(|g| g["flop"]["total"].as_u64())
        };
        assert_eq!(
            (
                r.flop("total"),
                region("parent"),
                region("child"),
                r.child_flop()
            ),
            (p + c, Some(p), Some(c), vec![c]),
            "{engine}"
        );
    }
}

/// A program that runs itself again through a descriptor
/// (tests/kernels/processes/exec_by_fd.c): fexecve of its executable, of a
/// memfd copy (no path names it), and execveat of its directory and file
/// name. Each child's N adds are counted in its region and the child is
/// listed, under both engines. Under QEMU those calls ran the program
/// outside the emulator: uncounted, and the execveat child failed. A raw
/// execve system call (as Go and statically linked programs make) is
/// followed by the native engine; under QEMU, which the exec shim cannot
/// put in its way, the report says that a program ran uncounted and is
/// marked incomplete (it said nothing at the job's level); a raw execve
/// that fails changes nothing.
#[test]
fn programs_run_through_a_descriptor_or_a_raw_execve_are_followed_or_named() {
    let n = 1000u64;
    let exe = build("processes/exec_by_fd.c", &["-O2", "-I", &markers_include()]);
    for engine in ENGINES {
        let r = count_ok_with(engine, &exe, &["rawfail", &n.to_string()], &[]);
        assert_eq!(r.flop("total"), n, "{engine}, a raw execve that fails");
    }
    let r = count_ok_with("native", &exe, &["raw", &n.to_string()], &[]);
    assert_eq!(r.child_flop(), vec![n], "native, a raw execve");
    let run = count_with("emulate", &exe, &["raw", &n.to_string()], &[]);
    let r = run.report.expect("a report");
    assert_eq!(
        (
            r.0["exit_status"].as_i64(),
            r.0["complete"].as_bool(),
            r.flop("total")
        ),
        (Some(0), Some(false), 0),
        "emulate, a raw execve: {}",
        run.stderr
    );
    assert!(
        r.warnings()
            .iter()
            .any(|w| w.contains("started a program that was not counted")),
        "{:?}",
        r.warnings()
    );
    descriptors(&exe, n);
}

fn descriptors(exe: &Path, n: u64) {
    for how in ["fexecve", "memfd", "execveat"] {
        for engine in ENGINES {
            let r = count_ok_with(engine, exe, &[how, &n.to_string()], &[]);
            let child = crate::support::engines::region(&r, "child")
                .and_then(|g| g["flop"]["total"].as_u64());
            assert_eq!(
                (r.flop("total"), child, r.child_flop()),
                (n, Some(n), vec![n]),
                "{engine}, {how}"
            );
        }
    }
}
