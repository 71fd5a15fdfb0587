//! The perf engine: a program's FLOP from hardware counters (`perf_event_open`),
//! and its DRAM bytes from the memory controllers, as a [`flopscope_model::Report`].
//!
//! - [`EventSet`]: one microarchitecture family's events, encodings, formulas and
//!   caveats, parsed from the data files under `events/` (embedded in the binary).
//!   [`detect_cpu`] and [`event_set_for`] pick one; [`event_set_named`] takes `--arch`.
//! - [`describe()`]: the text of `flopscope events` ([`describe_on_machine`] adds what this machine would open).
//! - [`check_pmu`]: no PMU, forbidden by `perf_event_paranoid`, or usable.
//! - [`run_counted`]: runs a command under the counters ([`PerfRun`]); [`PerfRun::report`]
//!   makes its report.
//! - [`report_from_counts`]: the pure step from recorded [`CounterValues`] to a report.
//! - [`sysfs`]: the kernel's PMU descriptions; raw configs are built from `format/`.
//!
//! Counts from multiplexed counters are scaled by `time_enabled / time_running` and
//! flagged in `warnings`; a counter that never ran makes what needs it absent, not 0.
//! `fp_instructions`, `fp_elements` and `flop_by_op` stay empty: the events count FLOP
//! (or instructions weighted by width with FMA twice), not SDE-style instructions.
//! There is no L1 byte event, so `bytes` is absent; DRAM bytes fill `dram_bytes`
//! and `arithmetic_intensity.dram`; FLOP by precision and width fill `flop_by_width`.
//! [`regions`]: per-region counts, read by the markers at region boundaries.
//!
//! Sampling mode ([`PerfOptions::sampling`], `--sample-period N`): the FP events
//! are also sampled every N events, per CPU into ring buffers ([`sampling`]);
//! [`records`] parses the rings, [`mappings`] and [`profile`] place each sample
//! in a function, and [`attribute`] splits the counted totals over the
//! functions by their samples and turns them into FLOP with the set's formulas
//! (`functions` in the report). [`SoftwareClock`] samples a software clock
//! instead, which needs no PMU ([`run_sampled_clock`]).
//! [`PerfEngine`] puts it all behind the common `flopscope_model::Engine` trait.
//!
//! ```
//! use flopscope_engine_perf::{event_set_named, report_from_counts, CounterValues, Reading};
//! let skx = event_set_named("skx").unwrap();
//! let mut counts = CounterValues::default();
//! counts.add("FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE", Reading::exact(1000));
//! counts.add("FP_ARITH_INST_RETIRED.SCALAR_DOUBLE", Reading::exact(7));
//! for e in &skx.events {
//!     if !counts.readings.contains_key(&e.name) {
//!         counts.add(&e.name, Reading::exact(0));
//!     }
//! }
//! let report = report_from_counts(skx, &counts);
//! // 1000 x 4 lanes + 7 scalar = 4007 FLOP of double precision.
//! assert_eq!(report.summary.flop.fp64, Some(4007));
//! assert_eq!(report.summary.flop.total, 4007);
//! assert_eq!(report.engine, "perf");
//! assert!(flopscope_engine_perf::describe(skx).contains("fp64.256 = FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE * 4"));
//! ```
//!
//! Running a program needs a PMU:
//!
//! ```no_run
//! use flopscope_engine_perf::{check_pmu, detect_cpu, event_set_for, run_counted, PerfOptions};
//! let opts = PerfOptions::default();
//! check_pmu(&opts.sysfs_root)?; // NoPmu on a VM without counters, Paranoid if forbidden
//! let set = event_set_for(&detect_cpu())?;
//! let run = run_counted(&["./app".to_string()], set, &opts)?;
//! println!("{}", run.report(set).to_json());
//! # Ok::<(), flopscope_engine_perf::PerfError>(())
//! ```

pub mod attribute;
pub mod cpu;
pub mod describe;
pub mod engine;
pub mod error;
pub mod eventset;
pub mod formula;
pub mod mappings;
pub mod plan;
pub mod probe;
pub mod profile;
pub mod records;
pub mod regions;
pub mod report;
pub mod run;
pub mod sampling;
pub mod sys;
pub mod sysfs;
pub mod values;

pub use cpu::{detect_cpu, CpuId};
pub use describe::{describe, describe_on_machine, list_sets};
pub use engine::PerfEngine;
pub use error::PerfError;
pub use eventset::{
    event_set_by_name, event_set_for, event_set_named, event_set_names, event_sets, usable,
    DramSource, Event, EventSet, Scope,
};
pub use formula::{Formula, Num};
pub use plan::{plan, OpenSpec, Plan};
pub use probe::{check_pmu, probe_hardware_counter, PmuStatus};
pub use profile::{Profile, SampledFunction};
pub use report::report_from_counts;
pub use run::{
    run_counted, run_counted_env, run_plan, run_plan_env, run_sampled_clock, signal_name,
    PerfOptions, PerfRun,
};
pub use sampling::{SamplingOptions, SoftwareClock};
pub use values::{evaluate, CounterValues, Evaluation, Metric, Reading};
