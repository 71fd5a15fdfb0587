//! Time per function and loop, from program-counter samples of the run that
//! measured the time (an uninstrumented run, at another load address):
//! each sample is placed by module and file offset, the same in every run,
//! and counts for the function and loops whose instructions are there.
//!
//! A row's time is the run's wall time times its share of the samples
//! (CPU-time samples of every thread; with threads running in parallel it
//! is a share of the work, not of the elapsed time); without a wall time,
//! samples x interval. The sampling error of a share p from N samples is
//! about sqrt(p (1 - p) / N): rows carry their sample counts.

use flopscope_symbols::parse_maps;
use std::collections::HashMap;

/// One process's samples, as the sampler wrote them.
#[derive(Debug, Clone, Default)]
pub struct ProcessSamples {
    /// Seconds of CPU time between samples.
    pub interval_s: f64,
    /// Address -> samples there.
    pub samples: HashMap<u64, u64>,
    /// The process's /proc/PID/maps text.
    pub maps_text: Option<String>,
}

/// Samples placed by module and file offset, for the whole run.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub interval_s: f64,
    /// (module path, file offset) -> samples.
    pub at: HashMap<(crate::place::Name, u64), u64>,
    /// Every sample, placed or not.
    pub total: u64,
    /// The run's wall time, when measured.
    pub wall_s: Option<f64>,
}

impl Samples {
    /// Places every process's samples by module and offset. `counted`:
    /// the samples are the counted run's own, so that a sample outside
    /// every file (generated code) is placed by its address, as the counts
    /// name that code (`place`); another run's generated code lies
    /// elsewhere, and its samples stay unplaced.
    pub fn place(processes: &[ProcessSamples], wall_s: Option<f64>, counted: bool) -> Samples {
        let mut out = Samples {
            wall_s,
            ..Default::default()
        };
        let anonymous: crate::place::Name = crate::place::ANONYMOUS.into();
        for p in processes {
            out.interval_s = p.interval_s;
            let maps = p.maps_text.as_deref().map(parse_maps).unwrap_or_default();
            for (&addr, &n) in &p.samples {
                out.total += n;
                let key = match maps.iter().find(|m| m.contains(addr)) {
                    Some(m) => {
                        let module: crate::place::Name = m.path.display().to_string().into();
                        (module, addr - m.start + m.file_offset)
                    }
                    None if counted => (anonymous.clone(), addr),
                    None => continue,
                };
                *out.at.entry(key).or_default() += n;
            }
        }
        out
    }

    /// The time `n` samples stand for.
    pub fn time_of(&self, n: u64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        Some(match self.wall_s {
            Some(w) => w * n as f64 / self.total as f64,
            None => n as f64 * self.interval_s,
        })
    }
}
