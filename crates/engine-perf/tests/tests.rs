// Integration tests of the perf engine, one binary.

/// Shared helpers: fixture paths, recorded counts.
#[path = "suite/common.rs"]
mod common;
/// FLOP and DRAM bytes from recorded counter values, per family; multiplexing.
#[path = "suite/counts.rs"]
mod counts;
/// Every data file parses, every formula evaluates, CPUs map to the right set, caveats are there.
#[path = "suite/data.rs"]
mod data;
/// Raw configs from sysfs format strings, and every event against the reference's encoding.
#[path = "suite/encoding.rs"]
mod encoding;
/// The no-PMU path on the real machine (this VM has none).
#[path = "suite/no_pmu.rs"]
mod no_pmu;
/// Resolution of event sets against sysfs fixture trees.
#[path = "suite/plan.rs"]
mod plan;
/// fork/exec/inherit/read for real, with a software counter.
#[path = "suite/runner.rs"]
mod runner;
/// Sampling mode for real, with a software clock: shares of two functions of known CPU time.
#[path = "suite/sampling.rs"]
mod sampling;
