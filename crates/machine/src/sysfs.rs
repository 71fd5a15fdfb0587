//! `/sys/devices/system/cpu`: online CPUs, topology, cpufreq and caches.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<u32>().ok()),
        }
    }
    out
}

/// Sizes such as `32K`, `1024K`, `32768K`, `2M` (sysfs cache `size`).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Sockets, physical cores and hardware threads among the online CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
}

/// The online CPUs, from `<root>/online`.
pub fn online_cpus(root: &Path) -> Option<Vec<u32>> {
    read(root, "online")
        .map(|s| parse_cpu_list(&s))
        .filter(|v| !v.is_empty())
}

/// Topology of the online CPUs under `root` (normally `/sys/devices/system/cpu`).
pub fn topology(root: &Path) -> Option<Topology> {
    let cpus = online_cpus(root)?;
    let mut sockets = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for c in &cpus {
        let t = |f: &str| {
            read(root, &format!("cpu{c}/topology/{f}")).and_then(|s| s.parse::<i64>().ok())
        };
        let pkg = t("physical_package_id")?;
        let die = t("die_id").unwrap_or(0);
        let core = t("core_id")?;
        sockets.insert(pkg);
        cores.insert((pkg, die, core));
    }
    Some(Topology {
        sockets: sockets.len() as u32,
        cores: cores.len() as u32,
        threads: cpus.len() as u32,
    })
}

/// cpufreq's maximum and base frequency of cpu0 in MHz, where the kernel has a cpufreq driver.
pub fn cpufreq_mhz(root: &Path) -> (Option<f64>, Option<f64>) {
    let khz = |f: &str| {
        read(root, &format!("cpu0/cpufreq/{f}"))
            .and_then(|s| s.parse::<f64>().ok())
            .map(|k| k / 1000.0)
    };
    (khz("cpuinfo_max_freq"), khz("base_frequency"))
}

/// One cache level as the machine has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    pub level: u32,
    /// `data` or `unified`.
    pub kind: String,
    /// Bytes of one instance.
    pub size_bytes: u64,
    /// Instances among the online CPUs.
    pub instances: u32,
    /// Online CPUs sharing one instance.
    pub cpus_per_instance: u32,
}

impl CacheLevel {
    pub fn name(&self) -> String {
        format!("L{}", self.level)
    }

    pub fn total_bytes(&self) -> u64 {
        self.size_bytes * self.instances as u64
    }
}

/// Data and unified caches of the online CPUs, by level.
pub fn caches(root: &Path) -> Vec<CacheLevel> {
    let Some(cpus) = online_cpus(root) else {
        return Vec::new();
    };
    // (level, kind) -> size and the distinct sharing sets.
    let mut seen: BTreeMap<(u32, String), (u64, BTreeSet<String>)> = BTreeMap::new();
    for c in &cpus {
        for i in 0.. {
            let dir = format!("cpu{c}/cache/index{i}");
            let Some(level) =
                read(root, &format!("{dir}/level")).and_then(|s| s.parse::<u32>().ok())
            else {
                break;
            };
            let kind = read(root, &format!("{dir}/type"))
                .unwrap_or_default()
                .to_lowercase();
            if kind != "data" && kind != "unified" {
                continue;
            }
            let Some(size) = read(root, &format!("{dir}/size")).and_then(|s| parse_size(&s)) else {
                continue;
            };
            let shared =
                read(root, &format!("{dir}/shared_cpu_list")).unwrap_or_else(|| c.to_string());
            let e = seen.entry((level, kind)).or_insert((size, BTreeSet::new()));
            e.1.insert(shared);
        }
    }
    seen.into_iter()
        .map(|((level, kind), (size_bytes, sets))| {
            let per = sets
                .iter()
                .map(|s| parse_cpu_list(s).len() as u32)
                .max()
                .unwrap_or(1)
                .max(1);
            CacheLevel {
                level,
                kind,
                size_bytes,
                instances: sets.len() as u32,
                cpus_per_instance: per,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_sizes() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("32768K"), Some(32 * 1024 * 1024));
        assert_eq!(parse_size("2M"), Some(2 * 1024 * 1024));
    }

    #[test]
    fn reads_a_fake_sysfs_tree() {
        let dir = tempdir();
        let w = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("online", "0-3\n");
        for c in 0..4 {
            // Two cores with two threads each, one socket.
            w(&format!("cpu{c}/topology/physical_package_id"), "0\n");
            w(&format!("cpu{c}/topology/core_id"), &format!("{}\n", c % 2));
            w(&format!("cpu{c}/cache/index0/level"), "1");
            w(&format!("cpu{c}/cache/index0/type"), "Data");
            w(&format!("cpu{c}/cache/index0/size"), "48K");
            w(
                &format!("cpu{c}/cache/index0/shared_cpu_list"),
                if c % 2 == 0 { "0,2" } else { "1,3" },
            );
            w(&format!("cpu{c}/cache/index1/level"), "1");
            w(&format!("cpu{c}/cache/index1/type"), "Instruction");
            w(&format!("cpu{c}/cache/index1/size"), "32K");
            w(&format!("cpu{c}/cache/index2/level"), "3");
            w(&format!("cpu{c}/cache/index2/type"), "Unified");
            w(&format!("cpu{c}/cache/index2/size"), "32768K");
            w(&format!("cpu{c}/cache/index2/shared_cpu_list"), "0-3");
        }
        w("cpu0/cpufreq/cpuinfo_max_freq", "3700000\n");
        assert_eq!(
            topology(&dir),
            Some(Topology {
                sockets: 1,
                cores: 2,
                threads: 4
            })
        );
        assert_eq!(cpufreq_mhz(&dir), (Some(3700.0), None));
        let c = caches(&dir);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0],
            CacheLevel {
                level: 1,
                kind: "data".into(),
                size_bytes: 48 * 1024,
                instances: 2,
                cpus_per_instance: 2
            }
        );
        assert_eq!(c[1].total_bytes(), 32 * 1024 * 1024);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir() -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("flopscope-machine-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
