//! The fork / open-before-exec / enable_on_exec / inherit / read machinery, run for real
//! with a kernel software counter (task-clock), which needs no PMU.

use flopscope_engine_perf::sysfs::RawConfig;
use flopscope_engine_perf::{run_plan, OpenSpec, PerfError, Plan, Scope};
use flopscope_model::ExitStatus;

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;

fn task_clock() -> Plan {
    Plan {
        opens: vec![OpenSpec {
            event: "TASK_CLOCK".into(),
            pmu: "software".into(),
            type_: PERF_TYPE_SOFTWARE,
            raw: RawConfig {
                config: PERF_COUNT_SW_TASK_CLOCK,
                ..Default::default()
            },
            scope: Scope::Thread,
            cpu: -1,
            scale: None,
            zero_when_not_run: false,
            origin: "test".into(),
        }],
        ..Default::default()
    }
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn task_ns(script: &str) -> (u64, ExitStatus, f64) {
    let run = run_plan(&sh(script), &task_clock()).unwrap_or_else(|e| panic!("{script}: {e}"));
    let r = run.values.readings["TASK_CLOCK"][0];
    assert!(r.time_enabled > 0 && r.time_running > 0, "{r:?}");
    (r.value, run.exit_status, run.wall_time.0)
}

#[test]
fn the_program_runs_and_its_exit_code_comes_back() {
    let _turn = crate::common::one_at_a_time();
    let (ns, status, wall) = task_ns("exit 3");
    assert_eq!(status, ExitStatus::Code(3));
    assert!(ns > 0 && wall > 0.0);
}

#[test]
fn a_signal_death_is_reported_by_name() {
    let _turn = crate::common::one_at_a_time();
    let (_, status, _) = task_ns("kill -9 $$");
    assert_eq!(status, ExitStatus::Signal("SIGKILL".into()));
}

#[test]
fn children_and_their_work_are_counted() {
    let _turn = crate::common::one_at_a_time();
    // A busy child process: its CPU time is inherited into the counter on `sh`.
    let busy = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
    let (alone, _, _) = task_ns("true");
    let (with_child, _, _) = task_ns(&format!("sh -c '{busy}'; true"));
    assert!(
        with_child > alone + 1_000_000,
        "child work not counted: {alone} vs {with_child} ns"
    );
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let _turn = crate::common::one_at_a_time();
    let e = run_plan(
        &["/nonexistent/flopscope-test-program".into()],
        &task_clock(),
    )
    .unwrap_err();
    assert!(matches!(e, PerfError::Spawn { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("/nonexistent/flopscope-test-program"),
        "{e}"
    );
    let e = run_plan(&["flopscope-no-such-command-in-path".into()], &task_clock()).unwrap_err();
    assert!(e.to_string().contains("not found in PATH"), "{e}");
}

#[test]
fn an_event_the_kernel_refuses_fails_cleanly() {
    let _turn = crate::common::one_at_a_time();
    let mut plan = task_clock();
    plan.opens[0].type_ = 4; // PERF_TYPE_RAW: no such PMU on a VM without counters
    plan.opens[0].raw.config = 0x10c7;
    match run_plan(&sh("exit 0"), &plan) {
        Err(PerfError::Open { event, .. }) => assert_eq!(event, "TASK_CLOCK"),
        Err(PerfError::Paranoid { .. }) => {}
        Ok(run) => assert_eq!(run.exit_status, ExitStatus::Code(0)), // a machine with a PMU
        Err(e) => panic!("{e}"),
    }
}

/// The markers learn the events from the program's environment: the plan's
/// thread-scope counters as `type:config` in hex, and the rest of the
/// environment is kept.
#[test]
fn the_program_gets_the_marker_events_in_its_environment() {
    let _turn = crate::common::one_at_a_time();
    use flopscope_engine_perf::regions::{marker_events, EVENTS_VAR};
    let plan = task_clock();
    let events = marker_events(&plan);
    assert_eq!(events, vec![("TASK_CLOCK".to_string(), "1:1".to_string())]);
    let dir = std::env::temp_dir().join(format!("flopscope-env-test-{}", std::process::id()));
    let file = dir.to_string_lossy().into_owned();
    let env = vec![(EVENTS_VAR.to_string(), events[0].1.clone())];
    let script = format!("echo \"${EVENTS_VAR}|${{PATH:+path}}\" > {file}");
    let run = flopscope_engine_perf::run_plan_env(&sh(&script), &plan, &env).unwrap();
    assert_eq!(run.exit_status, ExitStatus::Code(0));
    let text = std::fs::read_to_string(&dir).unwrap();
    let _ = std::fs::remove_file(&dir);
    assert_eq!(text.trim(), "1:1|path");
}
