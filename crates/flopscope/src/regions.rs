//! Region wall times. In an uninstrumented run the markers append one line
//! per region and process to the file named by FLOPSCOPE_REGION_TIMES; in a
//! counted run under the native engine its runtime writes one
//! `region-times.<pid>.<t>` file per process image into the work directory.
//! One line format: `pid \t entries \t max-thread-ns \t sum-ns \t name`.

use anyhow::{Context, Result};
use flopscope_model::Report;
use std::collections::BTreeMap;
use std::path::Path;

/// Per region name: entries and the longest per-thread time (ns), summed over
/// the processes and marker libraries that reported the name.
pub type RegionTimes = BTreeMap<String, (u64, u64)>;

pub fn parse_times(text: &str) -> RegionTimes {
    let mut out = RegionTimes::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(5, '\t').collect();
        if let [_pid, entries, max_ns, _sum_ns, name] = f[..] {
            if let (Ok(e), Ok(ns)) = (entries.parse::<u64>(), max_ns.parse::<u64>()) {
                let slot = out.entry(name.to_string()).or_insert((0, 0));
                slot.0 += e;
                slot.1 += ns;
            }
        }
    }
    out
}

pub fn read_times(path: &Path) -> Result<RegionTimes> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(parse_times(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RegionTimes::new()),
        Err(e) => Err(e).with_context(|| format!("reading region times from {}", path.display())),
    }
}

/// The times the native engine's runtime wrote into `dir`, every process
/// image's.
pub fn read_times_in(dir: &Path) -> Result<RegionTimes> {
    let mut text = String::new();
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading the region times in {}", dir.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("reading the region times in {}", dir.display()))?;
        if e.file_name().to_string_lossy().starts_with("region-times.") {
            let path = e.path();
            text += &std::fs::read_to_string(&path)
                .with_context(|| format!("reading region times from {}", path.display()))?;
        }
    }
    Ok(parse_times(&text))
}

/// Gives each counted region its native time, when the native run recorded it.
pub fn apply_times(report: &mut Report, times: &RegionTimes) {
    for r in &mut report.regions {
        if let Some((_, ns)) = times.get(&r.name) {
            r.native_time_s = Some(*ns as f64 / 1e9);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_from_several_processes_add_up_and_bad_lines_are_skipped() {
        let t = parse_times("12\t3\t1000\t1500\ttriad\n13\t1\t500\t500\ttriad\ngarbage\n12\t2\t7\t7\tname\twith tab\n");
        assert_eq!(t["triad"], (4, 1500));
        assert_eq!(t["name\twith tab"], (2, 7));
        assert_eq!(t.len(), 2);
    }
}
