//! This machine is a KVM guest without a virtual PMU ("PMU not available due to
//! virtualization"): the perf engine must say so and name the remedies. On a machine
//! with counters the same tests check that a run works instead; the probe decides.

use flopscope_engine_perf::probe::{is_no_pmu_errno, is_permission_errno};
use flopscope_engine_perf::{
    check_pmu, detect_cpu, event_set_for, probe_hardware_counter, run_counted, PerfError,
    PerfOptions,
};
use std::path::Path;

#[test]
fn check_pmu_tells_what_this_machine_has() {
    let root = Path::new("/sys");
    match probe_hardware_counter() {
        Err(e) if is_no_pmu_errno(&e) => {
            let err = check_pmu(root).unwrap_err();
            let PerfError::NoPmu { ref cause } = err else {
                panic!("expected NoPmu, got {err}")
            };
            assert!(cause.contains("cycle counter failed"), "{cause}");
            let msg = err.to_string();
            assert!(
                msg.contains("--engine emulate") && msg.contains("pmu=on"),
                "{msg}"
            );
        }
        Err(e) if is_permission_errno(&e) => {
            let err = check_pmu(root).unwrap_err();
            assert!(matches!(err, PerfError::Paranoid { .. }), "{err}");
            assert!(
                err.to_string()
                    .contains("sysctl kernel.perf_event_paranoid="),
                "{err}"
            );
        }
        Err(e) => panic!("unexpected probe error {e}"),
        Ok(()) => {
            let status = check_pmu(root).expect("a PMU that opens counters passes the check");
            assert!(!status.core_pmus.is_empty());
        }
    }
}

#[test]
fn counting_a_program_without_a_pmu_fails_with_the_cause() {
    let _turn = crate::common::one_at_a_time();
    let cpu = detect_cpu();
    let Ok(set) = event_set_for(&cpu) else {
        eprintln!("no event set for {cpu}: nothing to run");
        return;
    };
    let cmd = vec!["true".to_string()];
    let result = run_counted(&cmd, set, &PerfOptions::default());
    match probe_hardware_counter() {
        Err(e) if is_no_pmu_errno(&e) => {
            let err = result.unwrap_err();
            assert!(
                matches!(err, PerfError::NoPmu { .. }),
                "expected NoPmu, got {err}"
            );
            eprintln!("{err}");
        }
        Err(e) if is_permission_errno(&e) => {
            assert!(matches!(result, Err(PerfError::Paranoid { .. })))
        }
        Err(e) => panic!("unexpected probe error {e}"),
        Ok(()) => {
            let run = result.expect("counting `true` works on a machine with a PMU");
            assert_eq!(run.exit_status, flopscope_model::ExitStatus::Code(0));
            let report = run.report(set);
            assert_eq!(report.engine, "perf");
            assert!(report.native_time_s.is_some());
        }
    }
}

#[test]
fn the_kernel_log_names_the_virtualization_cause_when_readable() {
    // Only meaningful where the probe fails for want of a PMU and the log is readable.
    if probe_hardware_counter().is_err_and(|e| is_no_pmu_errno(&e)) {
        if let Some(line) = flopscope_engine_perf::probe::kernel_pmu_message() {
            let cause = match check_pmu(Path::new("/sys")) {
                Err(PerfError::NoPmu { cause }) => cause,
                other => panic!("{other:?}"),
            };
            assert!(cause.contains(&line), "{cause}");
        }
    }
}
