//! `flopscope`: the command line. Glue only: clap options become plain option
//! structs and calls into the engine, model and machine crates.
//!
//! Exit codes: 0 when the program (or flopscope's own command) succeeded; the
//! measured program's own exit code when it failed (128 + N when it died of
//! signal N); 2 for a flopscope error (bad input, missing QEMU, ...).

mod cmd;
mod launch;
mod output;
mod plugin;
mod progress;
mod regions;
mod signals;
mod stdout;
mod timed;
mod workdir;

use clap::{Parser, Subcommand};

/// Count a program's floating-point operations and bytes exactly, and compare
/// them with the machine.
#[derive(Parser)]
#[command(name = "flopscope", version, about, long_about = None)]
#[command(
    after_help = "Examples:\n  flopscope count -- ./my_solver input.dat\n  flopscope count --format json -o report.json -- ./kernel 1024"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count a program's FLOP, bytes and instructions, per region and thread.
    Count(cmd::count::CountArgs),
    /// Run a program natively for wall time and region times only (for MPI
    /// jobs, whose ranks cannot run twice under `count`).
    Time(cmd::time::TimeArgs),
    /// The machine's theoretical peak GFLOP/s per ISA and precision.
    Peak(cmd::peak::PeakArgs),
    /// Measure the machine's ceilings: peak FLOP/s, memory bandwidth, GEMM.
    Bench(cmd::bench::BenchArgs),
    /// Draw the roofline of reports: SVG, PNG or a self-contained HTML page.
    Roofline(cmd::roofline::RooflineArgs),
    /// Draw a flame graph of where the FLOP are (module, function, loops,
    /// source line) as an SVG a browser opens.
    Flame(cmd::flame::FlameArgs),
    /// Show, merge (ranks, processes) or compare reports; export them as
    /// CSV, Markdown, an SDE mix or an HTML page.
    Report(cmd::report::ReportArgs),
    /// Read other tools' results (Intel SDE) into a flopscope report.
    Import(cmd::import::ImportArgs),
    /// Show the hardware event set and formulas the perf engine would use.
    Events(cmd::events::EventsArgs),
    /// Write the region-marker sources (C, LIKWID, Fortran) into a directory.
    Markers(cmd::markers::MarkersArgs),
}

/// Exit code for flopscope's own errors.
pub const EXIT_FLOPSCOPE_ERROR: i32 = 2;

/// jemalloc: after a counted run, attribution threads free what the rows
/// and the report then allocate anew; glibc's allocator gave the main
/// thread fresh pages (zeroed by the kernel) for much of it. Whole
/// commands 0.94 to 0.96x (gcc, CPython, Numba; median of 5 to 10
/// alternating runs), and less peak memory.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main` (its `malloc_conf`; the
/// `_RJEM_MALLOC_CONF` variable still overrides them): freed pages are kept
/// for reuse instead of being given back to the system after 10 s, and
/// large allocations come from the threads' arenas. After gcc's counted run
/// the attribution's phases freed and faulted again some 300 MB: its page
/// faults 216,000 -> 146,000, system time 0.65 -> 0.48 s, the whole command
/// 0.979x (median of 8 alternating pairs, every pair faster; CPython's
/// loop 1.000x), for a peak 15% higher (288 -> 332 MB). flopscope's process
/// ends soon after: nothing stays held for long.
#[export_name = "_rjem_malloc_conf"]
pub static MALLOC_CONF: &[u8; 57] = b"dirty_decay_ms:-1,muzzy_decay_ms:-1,oversize_threshold:0\0";

fn main() {
    // Die quietly on a closed pipe (`flopscope events | head`), like other tools.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    signals::install();
    // Compressed debug sections (the C library's detached DWARF) are
    // inflated once and kept, not inflated in every run.
    if let Some(dir) = flopscope_machine::store::cache_dir() {
        flopscope_symbols::keep_inflated_sections_in(dir.join("inflated"));
    }
    let result = match cli.command {
        Command::Count(a) => cmd::count::run(a),
        Command::Markers(a) => cmd::markers::run(a),
        Command::Events(a) => cmd::events::run(a),
        Command::Time(a) => cmd::time::run(a),
        Command::Roofline(a) => cmd::roofline::run(a),
        Command::Flame(a) => cmd::flame::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Peak(a) => cmd::peak::run(a),
        Command::Bench(a) => cmd::bench::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("flopscope: {}", chain(&e));
            std::process::exit(EXIT_FLOPSCOPE_ERROR);
        }
    }
}

/// The error and its causes joined by ": ", each cause said once: many of
/// our messages already include their source's text.
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}
