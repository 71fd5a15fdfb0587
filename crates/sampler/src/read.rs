//! Reading a sample directory back: one [`ProcessSamples`] per process image.

use crate::format::{self, flag, word};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The samples of one process image (a pid, and which of its programs: a pid
/// that execs runs several).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSamples {
    pub pid: u32,
    /// 0 for the first program this pid ran with the sampler loaded, n for
    /// the one it ran after its n-th exec (or a later process that reused
    /// the pid).
    pub image: u32,
    /// The timer's interval: seconds of thread CPU time per unit of count.
    pub interval_s: f64,
    /// Runtime address (the interrupted program counter) -> count, in
    /// timer intervals: a signal that stood for k expirations counts k (the
    /// kernel checks CPU timers on its tick, so at 1000 Hz on a 250 Hz
    /// kernel each signal stands for about 4 intervals).
    pub samples: HashMap<u64, u64>,
    /// Sum of `samples`: `total * interval_s` is the CPU time sampled.
    pub total: u64,
    /// Signals that produced the samples.
    pub signals: u64,
    /// For sampling errors: the number of equally weighted signals that
    /// would have the same error (Kish's effective sample size,
    /// total^2 / sum of squared weights); the standard error of a share p
    /// is about sqrt(p (1-p) / effective_signals). Below `signals` when the
    /// weights vary: the kernel delivers fewer signals, each standing for
    /// more time, when threads are preempted between its ticks (a loaded
    /// machine).
    pub effective_signals: f64,
    /// Intervals sampled that did not fit in the file (not in `samples`).
    pub dropped: u64,
    /// Intervals that landed in the engine's own code, not the program's
    /// (the native engine's dispatcher and translator; `format::word::
    /// ENGINE_WEIGHT`): not in `samples`. `total + engine_intervals +
    /// dropped` intervals make the CPU time sampled; 0 for the preload
    /// library.
    pub engine_intervals: u64,
    /// The process exited through `exit` (not a kill, a crash, `_exit` or an
    /// exec).
    pub exited: bool,
    /// The program replaced the sampler's SIGPROF handler (sampling stopped
    /// there; see the crate docs).
    pub handler_replaced: bool,
    /// The process had more executable mappings than the sampler tracks, so
    /// `maps_text` may miss code loaded after start-up unless it exited.
    pub maps_untracked: bool,
    /// The process's CPU time at exit (all threads), when it exited.
    pub cpu_time_s: Option<f64>,
    /// Threads whose timer was armed, and threads that could not be armed.
    pub threads: u64,
    pub thread_failures: u64,
    /// The text of its /proc/self/maps, last written at exit or when a
    /// sample fell outside the executable mappings known so far; None if the
    /// maps file is missing.
    pub maps_text: Option<String>,
}

/// What went wrong reading a sample directory.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("cannot read the sample directory {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a flopscope sample file (no magic number): remove files named samples.* that flopscope did not write from the sample directory", path.display())]
    NotSampleFile { path: PathBuf },
    #[error("{} is a version {found} sample file but this flopscope reads version {expected}: the preload library and the reader come from different builds of flopscope; rebuild both", path.display())]
    Version {
        path: PathBuf,
        found: u64,
        expected: u64,
    },
    #[error("{} is truncated: it has {len} bytes, its header needs {need} (was it copied partly?)", path.display())]
    Truncated { path: PathBuf, len: u64, need: u64 },
}

/// Reads every process image's samples in `dir`, sorted by (pid, image).
/// Files not named `samples.*` are ignored, and so are files a process
/// created but was killed before it filled their header in; a directory
/// without any gives an empty vector (the caller knows whether the sampler
/// should have run). Files of processes still running read as far as they
/// got.
pub fn read_dir(dir: &Path) -> Result<Vec<ProcessSamples>, SampleError> {
    let dir_err = |source| SampleError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(dir_err)? {
        let entry = entry.map_err(dir_err)?;
        let name = entry.file_name();
        let Some((pid, image)) = name.to_str().and_then(format::parse_samples_name) else {
            continue;
        };
        let Some(mut p) = read_samples_file(&entry.path())? else {
            continue;
        };
        // The name is authoritative for the image; the header for the pid.
        p.image = image;
        if p.pid == 0 {
            p.pid = pid;
        }
        let maps = dir.join(format::maps_name(pid, image));
        p.maps_text = match std::fs::read(&maps) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(SampleError::Io { path: maps, source }),
        };
        out.push(p);
    }
    out.sort_by_key(|p| (p.pid, p.image));
    Ok(out)
}

/// Reads one samples file (image 0, no maps text: [`read_dir`] fills those
/// in); None when its header was never written.
fn read_samples_file(path: &Path) -> Result<Option<ProcessSamples>, SampleError> {
    let io = |source| SampleError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut header = [0u8; format::HEADER_BYTES];
    let read = file.read(&mut header[..8]).map_err(io)?;
    if len == 0 || (read == 8 && header[..8] == [0; 8]) {
        return Ok(None); // created, then killed before the header (or during it)
    }
    if len < header.len() as u64 {
        return Err(if len < 8 {
            SampleError::NotSampleFile {
                path: path.to_path_buf(),
            }
        } else {
            SampleError::Truncated {
                path: path.to_path_buf(),
                len,
                need: header.len() as u64,
            }
        });
    }
    file.read_exact(&mut header[read..]).map_err(io)?;
    let h = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    if h(word::MAGIC) != format::MAGIC {
        return Err(SampleError::NotSampleFile {
            path: path.to_path_buf(),
        });
    }
    if h(word::VERSION) != format::VERSION {
        return Err(SampleError::Version {
            path: path.to_path_buf(),
            found: h(word::VERSION),
            expected: format::VERSION,
        });
    }
    let capacity = h(word::CAPACITY);
    let need = format::file_bytes(capacity);
    if len < need {
        return Err(SampleError::Truncated {
            path: path.to_path_buf(),
            len,
            need,
        });
    }
    let used = h(word::NEXT).min(capacity);
    let mut records = vec![0u8; (used * 8) as usize];
    file.read_exact(&mut records).map_err(io)?;

    let mut samples: HashMap<u64, u64> = HashMap::new();
    let (mut total, mut signals, mut squares) = (0u64, 0u64, 0f64);
    for r in records.chunks_exact(8) {
        let r = u64::from_le_bytes(r.try_into().expect("8 bytes"));
        if let Some(r) = format::decode_record(r) {
            *samples.entry(r.pc).or_default() += r.weight;
            total += r.weight;
            signals += u64::from(r.last);
            // A continuation's weight is counted as if it were a signal of
            // its own (signals that long are rare: SIGPROF blocked).
            squares += (r.weight as f64).powi(2);
        }
    }
    let flags = h(word::FLAGS);
    let cpu_ns = h(word::CPU_NS_AT_EXIT);
    Ok(Some(ProcessSamples {
        pid: h(word::PID) as u32,
        image: 0,
        interval_s: h(word::INTERVAL_NS) as f64 * 1e-9,
        samples,
        total,
        signals,
        effective_signals: if squares > 0.0 {
            (total as f64).powi(2) / squares
        } else {
            0.0
        },
        dropped: h(word::DROPPED),
        engine_intervals: h(word::ENGINE_WEIGHT),
        exited: flags & flag::EXITED != 0,
        handler_replaced: flags & flag::HANDLER_REPLACED != 0,
        maps_untracked: flags & flag::MAPS_UNTRACKED != 0,
        cpu_time_s: (cpu_ns != 0).then_some(cpu_ns as f64 * 1e-9),
        threads: h(word::THREADS),
        thread_failures: h(word::THREAD_FAILURES),
        maps_text: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode_continuation, encode_record, HEADER_WORDS};

    /// A samples file as the preload library leaves it.
    fn file(capacity: u64, next: u64, records: &[u64], set: &[(usize, u64)]) -> Vec<u8> {
        let mut words = vec![0u64; HEADER_WORDS + capacity as usize];
        words[word::MAGIC] = format::MAGIC;
        words[word::VERSION] = format::VERSION;
        words[word::CAPACITY] = capacity;
        words[word::NEXT] = next;
        words[word::INTERVAL_NS] = 1_000_000;
        words[word::PID] = 4242;
        for &(i, v) in set {
            words[i] = v;
        }
        words[HEADER_WORDS..HEADER_WORDS + records.len()].copy_from_slice(records);
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    #[test]
    fn counts_weights_signals_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let records = [
            encode_record(0x1000, 4),
            encode_record(0x1000, 3),
            0, // reserved, never written (killed in the handler)
            encode_continuation(0x2000),
            encode_record(0x3000, 1),
            encode_record(0x2000, 10), // the continuation's last record
        ];
        let flags = flag::EXITED | flag::HANDLER_REPLACED;
        let set = [
            (word::FLAGS, flags),
            (word::DROPPED, 7),
            (word::CPU_NS_AT_EXIT, 1_500_000_000),
            (word::THREADS, 3),
            (word::THREAD_FAILURES, 1),
            (word::ENGINE_WEIGHT, 9),
        ];
        write(dir.path(), "samples.4242", &file(8, 6, &records, &set));
        write(
            dir.path(),
            "maps.4242",
            b"00400000-00401000 r-xp 0 0 0 /bin/x\n",
        );
        // Ignored: other names, the maps writer's temporary file.
        write(dir.path(), ".maps.4242.tmp", b"partial");
        write(dir.path(), "notes.txt", b"x");

        let procs = read_dir(dir.path()).unwrap();
        assert_eq!(procs.len(), 1);
        let p = &procs[0];
        let want: HashMap<u64, u64> = [(0x1000, 7), (0x2000, 265), (0x3000, 1)].into();
        assert_eq!(p.samples, want);
        assert_eq!((p.total, p.signals, p.dropped), (273, 4, 7));
        let squares = (16 + 9 + 255 * 255 + 1 + 100) as f64;
        assert_eq!(p.effective_signals, 273.0 * 273.0 / squares);
        assert_eq!((p.pid, p.image, p.interval_s), (4242, 0, 1e-3));
        assert!(p.exited && p.handler_replaced && !p.maps_untracked);
        assert_eq!(p.cpu_time_s, Some(1.5));
        assert_eq!((p.threads, p.thread_failures), (3, 1));
        assert_eq!(p.engine_intervals, 9);
        assert_eq!(
            p.maps_text.as_deref(),
            Some("00400000-00401000 r-xp 0 0 0 /bin/x\n")
        );
    }

    #[test]
    fn images_sorted_full_file_and_missing_maps() {
        let dir = tempfile::tempdir().unwrap();
        // Full: 2 records of room, 5 reserved; only the 2 are read.
        let full = file(2, 5, &[encode_record(0x10, 1), encode_record(0x20, 1)], &[]);
        write(dir.path(), "samples.4242.1", &full);
        write(dir.path(), "samples.4242", &file(4, 0, &[], &[]));
        write(dir.path(), "maps.4242.1", b"");
        let procs = read_dir(dir.path()).unwrap();
        assert_eq!(
            procs.iter().map(|p| (p.pid, p.image)).collect::<Vec<_>>(),
            [(4242, 0), (4242, 1)]
        );
        assert_eq!(procs[0].maps_text, None);
        assert_eq!((procs[0].total, procs[0].cpu_time_s), (0, None));
        assert_eq!(procs[0].engine_intervals, 0);
        assert!(!procs[0].exited);
        assert_eq!(procs[1].maps_text.as_deref(), Some(""));
        assert_eq!((procs[1].total, procs[1].signals), (2, 2));
    }

    #[test]
    fn bad_files_are_errors_that_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let msg = |bytes: &[u8]| {
            write(p, "samples.1", bytes);
            read_dir(p).unwrap_err().to_string()
        };
        assert!(msg(b"hello").contains("is not a flopscope sample file"));
        let mut other = file(1, 0, &[], &[]);
        other[..8].copy_from_slice(b"NOTMAGIC");
        assert!(msg(&other).contains("is not a flopscope sample file"));
        let newer = file(1, 0, &[], &[(word::VERSION, 99)]);
        assert!(msg(&newer).contains("version 99 sample file but this flopscope reads version 1"));
        let mut short = file(4, 4, &[], &[]);
        short.truncate(format::HEADER_BYTES + 8);
        assert!(msg(&short).contains("is truncated"));
        assert!(msg(&short[..40]).contains("is truncated"));

        let missing = p.join("nope");
        let e = read_dir(&missing).unwrap_err().to_string();
        assert!(e.starts_with("cannot read the sample directory"), "{e}");
    }

    #[test]
    fn empty_directory_has_no_processes() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_dir(dir.path()).unwrap().is_empty());
        // Killed after creating its file, before sizing it or writing the
        // header (the magic is written last).
        write(dir.path(), "samples.7", b"");
        let mut unstarted = file(4, 0, &[], &[]);
        unstarted[..8].fill(0);
        write(dir.path(), "samples.8", &unstarted);
        assert!(read_dir(dir.path()).unwrap().is_empty());
    }
}
