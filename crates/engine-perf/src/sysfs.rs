//! The kernel's description of its PMUs under `<root>/bus/event_source/devices/<pmu>/`:
//! `type`, the `format/` bit layout of each config field, `cpumask` (uncore) or
//! `cpus` (hybrid core PMUs), and named `events/` with `.scale` and `.unit`.
//!
//! Raw configs are built from `format/` bit by bit, never from hard-coded shifts:
//! AMD's 12-bit event code is `config:0-7,32-35`, its data fabric's 14-bit one
//! `config:0-7,32-35,59-60`, and Intel's PerfMon v6 widens fields the same way.

use crate::error::PerfError;
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Which `perf_event_attr` word a field lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigWord {
    Config,
    Config1,
    Config2,
}

/// A field's layout: the attr word and its bit ranges, low bits of the value first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLayout {
    pub word: ConfigWord,
    /// Inclusive `(low, high)` bit ranges in the order the kernel lists them.
    pub ranges: Vec<(u32, u32)>,
}

impl FieldLayout {
    /// Parses a `format/<field>` file: `config:0-7`, `config:0-7,32-35`, `config1:0-31`, `config:21`.
    pub fn parse(text: &str) -> Result<FieldLayout, String> {
        let text = text.trim();
        let (word, bits) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}` has no `configN:` prefix"))?;
        let word = match word {
            "config" => ConfigWord::Config,
            "config1" => ConfigWord::Config1,
            "config2" => ConfigWord::Config2,
            other => {
                return Err(format!(
                    "`{other}` is not a config word this engine sets (config, config1, config2)"
                ))
            }
        };
        let mut ranges = Vec::new();
        for part in bits.split(',') {
            let bit = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("`{s}` is not a bit number in `{text}`"))
            };
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => (bit(lo)?, bit(hi)?),
                None => (bit(part)?, bit(part)?),
            };
            if lo > hi || hi > 63 {
                return Err(format!("bad bit range `{part}` in `{text}`"));
            }
            ranges.push((lo, hi));
        }
        Ok(FieldLayout { word, ranges })
    }

    /// Total width in bits.
    pub fn width(&self) -> u32 {
        self.ranges.iter().map(|(lo, hi)| hi - lo + 1).sum()
    }

    /// Scatters `value` into the ranges, low bits first; `None` if it does not fit.
    pub fn place(&self, mut value: u64) -> Option<u64> {
        let mut out = 0u64;
        for &(lo, hi) in &self.ranges {
            let width = hi - lo + 1;
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            out |= (value & mask) << lo;
            value = if width == 64 { 0 } else { value >> width };
        }
        (value == 0).then_some(out)
    }
}

/// The three config words of a `perf_event_attr`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawConfig {
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
}

impl fmt::Display for RawConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config={:#x}", self.config)?;
        if self.config1 != 0 {
            write!(f, ",config1={:#x}", self.config1)?;
        }
        if self.config2 != 0 {
            write!(f, ",config2={:#x}", self.config2)?;
        }
        Ok(())
    }
}

/// Parses `event=0xc7,umask=0x10` (the event tables and sysfs `events/` files);
/// a bare term such as `edge` means 1.
pub fn parse_terms(text: &str) -> Result<Vec<(String, u64)>, String> {
    let mut out = Vec::new();
    for term in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        let (name, value) = match term.split_once('=') {
            Some((n, v)) => (
                n.trim(),
                parse_u64(v.trim()).ok_or_else(|| format!("`{v}` is not a number in `{text}`"))?,
            ),
            None => (term, 1),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{term}` is not a field=value term in `{text}`"));
        }
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// Decimal or `0x` hexadecimal.
pub fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A PMU's `format/` directory: field name -> layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmuFormat {
    pub fields: BTreeMap<String, FieldLayout>,
}

impl PmuFormat {
    /// Encodes field assignments into config words. Errors name the field and what is wrong.
    pub fn encode(&self, terms: &[(String, u64)]) -> Result<RawConfig, String> {
        let mut raw = RawConfig::default();
        for (name, value) in terms {
            let layout = self.fields.get(name).ok_or_else(|| {
                let known: Vec<&str> = self.fields.keys().map(String::as_str).collect();
                format!(
                    "the PMU has no `{name}` field (its format/ has {})",
                    known.join(", ")
                )
            })?;
            let bits = layout.place(*value).ok_or_else(|| {
                format!(
                    "{name}={value:#x} does not fit the field's {} bits",
                    layout.width()
                )
            })?;
            match layout.word {
                ConfigWord::Config => raw.config |= bits,
                ConfigWord::Config1 => raw.config1 |= bits,
                ConfigWord::Config2 => raw.config2 |= bits,
            }
        }
        Ok(raw)
    }
}

/// A named event from a PMU's `events/` directory.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedEvent {
    pub terms: Vec<(String, u64)>,
    /// `<name>.scale`: multiply counts by this to get `unit`.
    pub scale: Option<f64>,
    /// `<name>.unit`, e.g. `MiB`.
    pub unit: Option<String>,
}

impl NamedEvent {
    /// Bytes per count, when `.scale` and `.unit` say so (`6.103515625e-5` MiB = 64 bytes).
    pub fn bytes_per_count(&self) -> Option<f64> {
        let unit_bytes = match self.unit.as_deref()?.trim() {
            "B" | "Bytes" | "bytes" => 1.0,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "KB" | "kB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            _ => return None,
        };
        Some(self.scale.unwrap_or(1.0) * unit_bytes)
    }
}

/// One PMU as sysfs describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SysfsPmu {
    pub name: String,
    pub dir: PathBuf,
    /// `perf_event_attr.type` for this PMU.
    pub type_: u32,
    pub format: PmuFormat,
    /// Uncore PMUs: one CPU per socket (or die) to open system-wide counters on.
    pub cpumask: Option<Vec<u32>>,
    /// Hybrid core PMUs: the CPUs this PMU counts on.
    pub cpus: Option<Vec<u32>>,
}

/// `<root>/bus/event_source/devices`.
pub fn devices_dir(root: &Path) -> PathBuf {
    root.join("bus/event_source/devices")
}

/// Names of the PMUs present, sorted with numeric suffixes in numeric order.
pub fn pmu_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(devices_dir(root))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|n| natural_key(n));
    names
}

fn natural_key(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, num) = name.split_at(name.len() - digits);
    (stem.to_string(), num.parse().unwrap_or(0))
}

/// Whether `name` matches `pattern`: exact, or a trailing `*` standing for one or more digits
/// (`uncore_imc_*` matches `uncore_imc_0`, not `uncore_imc_free_running_0`).
pub fn pmu_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(stem) => name
            .strip_prefix(stem)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())),
        None => pattern == name,
    }
}

/// The PMUs present that match any of `patterns`, in pattern order (the first pattern
/// that matches anything wins, so alternatives can be listed by preference).
pub fn find_pmus(root: &Path, patterns: &[String]) -> Vec<String> {
    let names = pmu_names(root);
    for p in patterns {
        let hits: Vec<String> = names
            .iter()
            .filter(|n| pmu_matches(p, n))
            .cloned()
            .collect();
        if !hits.is_empty() {
            return hits;
        }
    }
    Vec::new()
}

/// Parses a kernel CPU list: `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                cpus.extend(a.trim().parse::<u32>().ok()?..=b.trim().parse::<u32>().ok()?)
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

impl SysfsPmu {
    /// Reads `<root>/bus/event_source/devices/<name>`.
    pub fn load(root: &Path, name: &str) -> Result<SysfsPmu, PerfError> {
        let dir = devices_dir(root).join(name);
        let type_path = dir.join("type");
        let type_text = read_trimmed(&type_path).ok_or_else(|| PerfError::Sysfs {
            path: type_path.clone(),
            why: "cannot read the PMU's type".into(),
        })?;
        let type_ = type_text.parse().map_err(|_| PerfError::Sysfs {
            path: type_path.clone(),
            why: format!("`{type_text}` is not a PMU type number"),
        })?;
        let mut format = PmuFormat::default();
        let format_dir = dir.join("format");
        if let Ok(rd) = fs::read_dir(&format_dir) {
            for entry in rd.filter_map(|e| e.ok()) {
                let path = entry.path();
                let Some(field) = entry.file_name().into_string().ok() else {
                    continue;
                };
                let text = fs::read_to_string(&path).map_err(|e| PerfError::Sysfs {
                    path: path.clone(),
                    why: e.to_string(),
                })?;
                let layout = FieldLayout::parse(&text).map_err(|why| PerfError::Sysfs {
                    path: path.clone(),
                    why,
                })?;
                format.fields.insert(field, layout);
            }
        }
        Ok(SysfsPmu {
            name: name.to_string(),
            type_,
            format,
            cpumask: read_trimmed(&dir.join("cpumask")).and_then(|t| parse_cpu_list(&t)),
            cpus: read_trimmed(&dir.join("cpus")).and_then(|t| parse_cpu_list(&t)),
            dir,
        })
    }

    /// The kernel's named event `events/<name>` (with `.scale` and `.unit`), if it has one.
    pub fn named_event(&self, name: &str) -> Option<NamedEvent> {
        let events = self.dir.join("events");
        let terms = parse_terms(&fs::read_to_string(events.join(name)).ok()?).ok()?;
        Some(NamedEvent {
            terms,
            scale: read_trimmed(&events.join(format!("{name}.scale"))).and_then(|s| s.parse().ok()),
            unit: read_trimmed(&events.join(format!("{name}.unit"))),
        })
    }
}
