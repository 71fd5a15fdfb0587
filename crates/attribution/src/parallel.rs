//! The files of a job's processes (one per process image) attributed on
//! several threads: each worker takes the next file, largest code table
//! first so that the workers finish together, and keeps a symbolizer of
//! its own (modules load once a worker, not once a job). A file holding
//! more than its share of the job's code (the one file of a single
//! process, gcc's cc1) is itself cut into parts attributed on several
//! threads (`split`), about one a core its share fills.

use crate::tally::Sampled;
use crate::{split, Attribution, Executed};
use flopscope_counter_file::profile::code_path;
use flopscope_model::started;
use flopscope_symbols::Symbolizer;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most this many workers: each holds a process's executed code and
/// its places in memory (some 500 MB for a compiler's).
pub(crate) const MAX_WORKERS: usize = 4;

/// One file's attribution (none without a code table) and its warnings.
pub type Attributed = (Option<Attribution>, Vec<String>);

/// Sets the number of parts each process image is attributed in, instead
/// of `split::PARTS_A_THREAD` for each core its share of the job's code
/// fills (and none below `split::MIN_INSNS` instructions): to compare the
/// split with one pass.
pub const PARTS_ENV: &str = "FLOPSCOPE_ATTRIBUTION_PARTS";

/// Threads for each file of `sizes` (code table bytes) on `cores` cores: a
/// file holding more than a core's share of the job gets a thread for each
/// share it holds, begun (gcc: cc1, about nine tenths of the code, gets 2
/// on 2 cores; the driver and the assembler 1 each).
fn threads(sizes: &[u64], cores: usize) -> Vec<usize> {
    let total = u128::from(sizes.iter().sum::<u64>().max(1));
    sizes
        .iter()
        .map(|&s| {
            let shares = (u128::from(s) * cores as u128).div_ceil(total);
            (shares as usize).clamp(1, cores)
        })
        .collect()
}

/// Every file of `processes`, in their order (flattened).
pub fn attribute_all(processes: &[Vec<PathBuf>], sampled: Option<&Sampled>) -> Vec<Attributed> {
    let files: Vec<&Path> = processes.iter().flatten().map(PathBuf::as_path).collect();
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(code_path(f)).map_or(0, |m| m.len()))
        .collect();
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let forced: Option<usize> = std::env::var(PARTS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n >= 1);
    let parts = match forced {
        Some(n) => vec![n; files.len()],
        None => threads(&sizes, cores),
    };
    let workers = cores.min(files.len());
    largest_first(
        &sizes,
        workers,
        &mut Symbolizer::asked_once(),
        |i, symbolizer| one(files[i], sampled, symbolizer, parts[i], forced.is_some()),
    )
}

/// `work` on each item of `sizes` (its index), on `threads` threads, this
/// one among them: each takes the next item, largest first, so that the
/// threads finish together; each has a symbolizer of its own (this
/// thread's: `mine`). The results in the items' order.
pub(crate) fn largest_first<R: Send>(
    sizes: &[u64],
    threads: usize,
    mine: &mut Symbolizer,
    work: impl Fn(usize, &mut Symbolizer) -> R + Sync,
) -> Vec<R> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = sizes.iter().map(|_| Mutex::new(None)).collect();
    let run = |symbolizer: &mut Symbolizer| {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let r = work(i, symbolizer);
            *results[i].lock().expect("no worker panicked") = Some(r);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.min(sizes.len()) {
            started::help(s, || run(&mut Symbolizer::asked_once()));
        }
        run(mine);
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no worker panicked")
                .expect("every item taken by a worker")
        })
        .collect()
}

/// One process image's file, on `parts` threads, or in `parts` parts when
/// `forced` (see `split`).
fn one(
    path: &Path,
    sampled: Option<&Sampled>,
    symbolizer: &mut Symbolizer,
    parts: usize,
    forced: bool,
) -> Attributed {
    let mut warnings = Vec::new();
    let a = match Executed::read(path) {
        Ok(Some(ex)) => {
            if ex.lost {
                warnings.push(format!(
                    "attribution data of {} is partial (the engine ran out of room): functions, loops and lines do not sum to the totals",
                    path.display()
                ));
            }
            Some(split::attribute(ex, sampled, symbolizer, parts, forced))
        }
        Ok(None) => None,
        Err(e) => {
            warnings.push(format!("attribution: {e}"));
            None
        }
    };
    (a, warnings)
}

#[cfg(test)]
mod tests {
    use super::threads;

    #[test]
    fn a_file_gets_a_thread_for_each_core_share_it_holds() {
        assert_eq!(threads(&[100], 2), [2]);
        assert_eq!(threads(&[90, 6, 4], 2), [2, 1, 1]);
        assert_eq!(threads(&[50, 50], 2), [1, 1]);
        assert_eq!(threads(&[70, 10, 10, 10], 4), [3, 1, 1, 1]);
        assert_eq!(threads(&[0, 0], 2), [1, 1]);
        assert_eq!(threads(&[5], 1), [1]);
    }
}
