//! What flopscope keeps about a machine between runs, so that figures do not
//! move from run to run:
//! - its saved profile (`flopscope bench --save`), also kept under the
//!   machine's identity in `$XDG_CONFIG_HOME/flopscope/machines/` (default
//!   `~/.config/flopscope`), where `count` finds it without `--machine`;
//! - its measured clock, where nothing reports one (virtual machines without
//!   cpufreq): the highest of [`CLOCK_MEASUREMENTS`] measurements, taken once
//!   and kept in `$XDG_CACHE_HOME/flopscope/clock/` (default
//!   `~/.cache/flopscope`). A VM's clock measured anew each run moved by up
//!   to 30% between runs, and every "% of peak" with it;
//! - any other measurement kept the same way ([`kept`]: the CLI keeps a
//!   short STREAM triad under `bandwidth/`, the bandwidth roofs of a
//!   machine without a saved profile).
//!
//! `FLOPSCOPE_CONFIG_DIR` and `FLOPSCOPE_CACHE_DIR` replace the two
//! directories (tests, shared installations).
//!
//! ```
//! use flopscope_machine::store::identity;
//! let mut m = flopscope_machine::Machine::from_sources(None, None, std::path::Path::new("/nonexistent"));
//! (m.vendor_id, m.family, m.model, m.stepping) = ("AuthenticAMD".into(), 0x19, 0x01, 1);
//! (m.model_name, m.cores, m.threads) = ("AMD EPYC 7763 64-Core Processor".into(), 2, 2);
//! assert_eq!(identity(&m), "AuthenticAMD-19-01-1-AMD-EPYC-7763-64-Core-Processor-2c2t");
//! ```

use crate::detect::Machine;
use crate::profile::MachineProfile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Measurements of the clock whose highest is kept.
pub const CLOCK_MEASUREMENTS: usize = 3;

/// The machine's identity, usable as a file name: the CPU (vendor, family,
/// model, stepping, brand) and the cores and threads this system has. Two
/// nodes of one cluster partition share it; a login node usually does not.
pub fn identity(m: &Machine) -> String {
    let brand: String = m
        .model_name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    format!(
        "{}-{:02x}-{:02x}-{}-{brand}-{}c{}t",
        m.vendor_id, m.family, m.model, m.stepping, m.cores, m.threads
    )
}

fn dir_from(var: &str, xdg: &str, home_sub: &str) -> Option<PathBuf> {
    let set = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    set(var)
        .or_else(|| set(xdg).map(|d| d.join("flopscope")))
        .or_else(|| set("HOME").map(|h| h.join(home_sub).join("flopscope")))
}

/// `FLOPSCOPE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/flopscope`, else
/// `~/.config/flopscope`.
pub fn config_dir() -> Option<PathBuf> {
    dir_from("FLOPSCOPE_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
}

/// `FLOPSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/flopscope`, else
/// `~/.cache/flopscope`.
pub fn cache_dir() -> Option<PathBuf> {
    dir_from("FLOPSCOPE_CACHE_DIR", "XDG_CACHE_HOME", ".cache")
}

/// Where the saved profile of machine `id` lives under `config`.
pub fn profile_path(config: &Path, id: &str) -> PathBuf {
    config.join("machines").join(format!("{id}.json"))
}

/// The saved profile of machine `m`, if `bench --save` saved one here.
/// A file that cannot be read is an error (it names the file), not a
/// silent fallback.
pub fn saved_profile(
    m: &Machine,
) -> Result<Option<(PathBuf, MachineProfile)>, crate::MachineError> {
    let Some(config) = config_dir() else {
        return Ok(None);
    };
    let path = profile_path(&config, &identity(m));
    if !path.is_file() {
        return Ok(None);
    }
    let p = MachineProfile::load(&path)?;
    Ok(Some((path, p)))
}

/// Keeps `p` as the saved profile of its machine; returns where.
pub fn keep_profile(p: &MachineProfile) -> Result<PathBuf, crate::MachineError> {
    let config = config_dir().ok_or(crate::MachineError::NoConfigDir)?;
    let path = profile_path(&config, &identity(&p.machine));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| crate::MachineError::WriteProfile {
            path: dir.into(),
            source,
        })?;
    }
    p.save(&path)?;
    Ok(path)
}

/// A measurement of this machine kept between runs: `value`, taken at
/// `measured_unix_s` on the machine named `identity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept<T> {
    pub identity: String,
    pub measured_unix_s: u64,
    pub value: T,
}

/// The measurement `kind` of machine `id`: the one kept in the cache
/// directory when there is one, else `measure()`'s, kept for the next runs
/// (when the directory is writable: otherwise measured again next time,
/// nothing else lost). Returns it and whether it was kept from an earlier run.
pub fn kept<T: Serialize + serde::de::DeserializeOwned>(
    kind: &str,
    id: &str,
    measure: impl FnOnce() -> T,
) -> (Kept<T>, bool) {
    let path = cache_dir().map(|d| d.join(kind).join(format!("{id}.json")));
    let earlier = path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Kept<T>>(&t).ok())
        .filter(|k| k.identity == id);
    if let Some(k) = earlier {
        return (k, true);
    }
    let k = Kept {
        identity: id.to_string(),
        value: measure(),
        measured_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    if let (Some(p), Ok(text)) = (&path, serde_json::to_string_pretty(&k)) {
        let _ = p
            .parent()
            .map(std::fs::create_dir_all)
            .transpose()
            .map(|_| flopscope_model::write_atomic(p, text.as_bytes()));
    }
    (k, false)
}

/// The machine's measured clock in MHz: [`CLOCK_MEASUREMENTS`] measurements
/// by `measure`, taken once and kept ([`kept`]); the figure is their highest.
pub fn stable_clock(id: &str, measure: impl Fn() -> f64) -> (Kept<Vec<f64>>, f64) {
    let (k, _) = kept("clock", id, || {
        (0..CLOCK_MEASUREMENTS)
            .map(|_| measure())
            .collect::<Vec<f64>>()
    });
    let mhz = k.value.iter().copied().fold(0.0, f64::max);
    (k, mhz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_clock_is_measured_once_its_highest_kept_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("FLOPSCOPE_CACHE_DIR", dir.path());
        let calls = Cell::new(0);
        let measure = || {
            calls.set(calls.get() + 1);
            [2270.0, 2970.0, 2500.0][calls.get() - 1]
        };
        let (first, mhz) = stable_clock("cpu-x", measure);
        assert_eq!(mhz, 2970.0);
        assert_eq!(first.value, vec![2270.0, 2970.0, 2500.0]);
        assert_eq!(calls.get(), CLOCK_MEASUREMENTS);
        let (again, mhz) = stable_clock("cpu-x", || unreachable!("measured again"));
        assert_eq!((again, mhz), (first, 2970.0));
        // Another machine's identity measures its own.
        let (_, other) = stable_clock("cpu-y", || 1000.0);
        assert_eq!(other, 1000.0);
        // Another kind of measurement of the same machine is kept apart.
        let (bw, kept_before) = kept("bandwidth", "cpu-x", || vec![("DRAM".to_string(), 20.5)]);
        assert!(!kept_before);
        assert_eq!(kept("bandwidth", "cpu-x", || unreachable!()).0, bw);
        std::env::remove_var("FLOPSCOPE_CACHE_DIR");
    }
}

/// A Unix time as a reader sees it in a report: `2026-11-25T17:37:05Z`.
pub fn utc(unix_s: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_s);
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod utc_tests {
    #[test]
    fn a_unix_time_reads_as_a_utc_date() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(1_795_626_004), "2026-11-25T17:00:04Z");
    }
}
