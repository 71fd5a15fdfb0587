// integration tests
// Shared helpers: build a kernel, run flopscope count on it, read the report.
mod support;
// Kernels with closed-form FLOP, bytes and access sizes, compared exactly.
mod exact_kernels;
// OpenMP: the same FLOP with any number of threads, every run.
mod threads;
// Exit codes, crashes, missing programs and AVX-512 programs.
mod outcomes;
// Regions: every kind of marker, threads, nesting, mismatched ends and native region times, exactly.
mod regions;
// Child processes: forked children and programs started with exec.
mod processes;
// MPI: one report per rank under mpirun, exact per rank.
mod mpi;
// Merge, diff and the SDE-mix export on reports of real runs.
mod reports;
// CLI: report and roofline subcommands.
mod report_cli;
// Engines through the CLI: QEMU setup errors, the perf engine (no PMU here), the SDE importer.
mod cli_engines;
// Region counts under the perf engine: the markers reading a software event directly.
mod perf_regions;
// FLOP per function by sampling under the perf engine: the machinery run with a software clock.
mod perf_sampling;
// The native engine: against the emulate engine, closed forms on AVX-512, threads, signals, code rewritten at run time.
mod native;
// Statically linked programs under the native engine: glibc, musl, static PIE, Fortran, OpenMP, exactly; started as the kernel starts them.
mod static_programs;
// JIT compilers (Numba, LuaJIT): code written at run time counted as it runs, against closed forms and the emulate engine.
mod jit;
// Go programs: static, their own threads and signal handlers; goroutines preempted by signals counted exactly, and sampled.
mod go;
// Attribution: functions, loops and source lines of known counts, both engines.
mod attribution;
// The workflow: paths checked before the run, the report apart from the program's output.
mod workflow;
// Presentation: the roofline per loop and function, the flame graph and the HTML tables and source view, through the CLI.
mod presentation;
// LIKWID's marker functions (-llikwid): flopscope's liblikwid, and LIKWID-built programs taken over, exactly under both engines.
mod likwid_api;
// Running once: the engine chosen, stdin and side effects once, the time's run named; --runs for more.
mod run_once;
// The machine travels with the report: stable peak, saved profile by identity, roofs of the machine that ran it.
mod machine_record;
// The roofline of real runs: no text over another, only the roofs that matter, the HTML page in headless Chromium.
mod roofline_layout;
