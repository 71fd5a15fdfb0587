//! Where the work is: a counted run's executed blocks attributed to
//! functions, natural loops and source lines, exactly.
//!
//! - `ahead`: the modules most processes map, loaded while the program
//!   runs;
//! - [`executed`]: one process's executed code, read back from the files
//!   an engine leaves (counter file, code table, per-bank block counters);
//! - [`place`]: addresses to module, function (inlined ones included) and
//!   source line, through `flopscope-symbols`;
//! - [`loops`]: natural loops of the executed control flow, with entries
//!   and iterations;
//! - [`calls`]: the call graph, and each function's counts with its
//!   callees (inclusive);
//! - `parallel`: the files of a job's processes attributed on several
//!   threads;
//! - `split`: one large process image attributed on several threads,
//!   cut at machine-function boundaries;
//! - `tally`: one process's counts per function and line as its
//!   instructions are added;
//! - [`Attribution`]: the counts keyed by function, line and loop, merged
//!   over processes and turned into the report's `functions`, `loops` and
//!   `lines` rows.
//!
//! Every instruction's counts go to exactly one function and one line, so
//! both lists sum to the totals. Inlined code counts for the inlined
//! function and its own source line; the function it was inlined into is
//! recorded (`inlined_into`).
//!
//! ```no_run
//! use flopscope_attribution::{attach, Attribution};
//! let mut report = flopscope_model::Report::new("emulate", vec!["./app".into()]);
//! let warnings = attach(&mut report, std::path::Path::new("/dev/shm/flopscope-1/counters"), None);
//! println!("{} functions, {warnings:?}", report.functions.len());
//! ```

mod ahead;
pub mod calls;
pub mod executed;
pub mod loops;
mod parallel;
pub mod place;
mod rows;
mod split;
mod tally;
pub mod time;

pub use ahead::{load_ahead, program_ended};
pub use executed::Executed;
/// The environment variable that turns attribution off in the engines.
pub use flopscope_counter_file::profile::OFF_ENV;
pub use rows::{Attribution, Rows};
pub use time::{ProcessSamples, Samples};

use flopscope_counter_file::report::process_paths;
use flopscope_model::started;
use flopscope_model::Report;
use flopscope_symbols::Symbolizer;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Fills `report`'s `functions`, `loops` and `lines` (and those of its
/// child processes, grouped and ordered as `report_of_run` lists them) from the
/// files the engine left beside counter file `counters`. The top level's
/// rows cover the whole job, like its totals, and get time from `samples`
/// (of the run that measured the time) where given. Returns warnings (data
/// that could not be read or was lost).
pub fn attach(report: &mut Report, counters: &Path, samples: Option<&Samples>) -> Vec<String> {
    let mut warnings = Vec::new();
    let sampled = samples.map(tally::sampled);
    // One process may have left several files (a fork's, then the
    // program's it exec'd): grouped as `report_of_run` lists processes, the
    // main process first. Its rows are the job's when it has no children
    // (filled once, below).
    let processes = process_paths(counters);
    let mut each = parallel::attribute_all(&processes, sampled.as_ref()).into_iter();
    let mut own = processes.iter().map(|paths| {
        let mut own: Option<Attribution> = None;
        for _ in paths {
            let (a, w) = each.next().expect("one result a file");
            warnings.extend(w);
            if let Some(a) = a {
                own.get_or_insert_with(Attribution::default).merge(a);
            }
        }
        own
    });
    let main = own.next().flatten();
    let children: Vec<Option<Attribution>> = own.take(report.processes.len()).collect();
    // The children's rows are made while the job's are (a compiler's cc1
    // is most of both), on as many threads as there are cores, each taking
    // the next child (a Python program's dozen subprocesses).
    let next = AtomicUsize::new(0);
    let child_rows: Vec<Mutex<Option<Rows>>> = children.iter().map(|_| Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let child_work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(child) = children.get(i) else { break };
        if let Some(a) = child {
            *child_rows[i].lock().expect("no panic making rows") = Some(a.rows(None));
        }
    };
    let job_rows = std::thread::scope(|s| {
        for _ in 0..threads.min(children.len()) {
            started::help(s, child_work);
        }
        let job = Attribution::job(main, &children);
        // On a thread of its own, as the attribution was: the memory its
        // threads freed is reused, not asked of the system (and zeroed) again.
        let job_rows = started::start(s, move || job.rows(samples));
        let job_rows = job_rows.join().expect("no panic making rows");
        // The children no helper took (none, when no thread could start).
        child_work();
        job_rows
    });
    for (rows, child) in child_rows.into_iter().zip(report.processes.iter_mut()) {
        if let Some(rows) = rows.into_inner().expect("no panic making rows") {
            rows.put(child);
        }
    }
    job_rows.put(report);
    warnings
}
/// Fills each region of `report` with its own `functions`, `loops` and
/// `lines`: the code the main process ran while the region was open (a
/// nested region's work is also its enclosing region's, as its counts are).
/// Over a region's functions the counts sum to the region's counts.
pub fn attach_regions(report: &mut Report, counters: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut symbolizer = Symbolizer::asked_once();
    for region in &mut report.regions {
        let name = region.name.clone();
        match Executed::read_banks(counters, &|open| open.contains(&name)) {
            Ok(Some(ex)) => {
                let mut rows = Report::new("", Vec::new());
                Attribution::of(&ex, None, &mut symbolizer).fill(&mut rows, None);
                region.functions = rows.functions;
                region.loops = rows.loops;
                region.lines = rows.lines;
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("attribution of region {name}: {e}")),
        }
    }
    warnings
}
