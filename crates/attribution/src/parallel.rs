//! The files of a job's processes (one per process image) attributed on
//! several threads: each worker takes the next file, largest code table
//! first so that the workers finish together, and keeps a symbolizer of
//! its own (modules load once a worker, not once a job). A job of one
//! process gains nothing; gcc (driver, cc1, as) or a shell script's
//! commands do.

use crate::tally::Sampled;
use crate::{Attribution, Executed};
use flopscope_counter_file::profile::code_path;
use flopscope_symbols::Symbolizer;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most this many workers: each holds a process's executed code and
/// its places in memory (some 500 MB for a compiler's).
const MAX_WORKERS: usize = 4;

/// One file's attribution (none without a code table) and its warnings.
pub type Attributed = (Option<Attribution>, Vec<String>);

/// Every file of `processes`, in their order (flattened).
pub fn attribute_all(processes: &[Vec<PathBuf>], sampled: Option<&Sampled>) -> Vec<Attributed> {
    let files: Vec<&Path> = processes.iter().flatten().map(PathBuf::as_path).collect();
    let size = |f: &Path| std::fs::metadata(code_path(f)).map_or(0, |m| m.len());
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(files[i])));
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS)
        .min(files.len());
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Attributed>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let work = || {
        let mut symbolizer = Symbolizer::asked_once();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let done = one(files[i], sampled, &mut symbolizer);
            *results[i].lock().expect("no worker panicked") = Some(done);
        }
    };
    if workers <= 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(work);
            }
        });
    }
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no worker panicked")
                .expect("every file taken by a worker")
        })
        .collect()
}

/// One process image's file.
fn one(path: &Path, sampled: Option<&Sampled>, symbolizer: &mut Symbolizer) -> Attributed {
    let mut warnings = Vec::new();
    let a = match Executed::read(path) {
        Ok(Some(ex)) => {
            if ex.lost {
                warnings.push(format!(
                    "attribution data of {} is partial (the engine ran out of room): functions, loops and lines do not sum to the totals",
                    path.display()
                ));
            }
            Some(Attribution::of(&ex, sampled, symbolizer))
        }
        Ok(None) => None,
        Err(e) => {
            warnings.push(format!("attribution: {e}"));
            None
        }
    };
    (a, warnings)
}
