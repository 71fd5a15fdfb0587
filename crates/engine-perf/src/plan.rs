//! From an event set and the kernel's sysfs to the counters to open: each event's
//! PMU instances, `perf_event_attr` type and config words, CPUs and byte scale.
//! Pure (reads files under the given sysfs root only), so fixtures can drive it.

use crate::error::PerfError;
use crate::eventset::{DramSource, Encoding, Event, EventSet, GenericEvent, Scope};
use crate::formula::Num;
use crate::sys;
use crate::sysfs::{find_pmus, parse_cpu_list, pmu_names, RawConfig, SysfsPmu};
use std::path::Path;

/// One counter to open (one event on one PMU instance, and one CPU for socket scope).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenSpec {
    pub event: String,
    pub pmu: String,
    /// `perf_event_attr.type`.
    pub type_: u32,
    pub raw: RawConfig,
    pub scope: Scope,
    /// The CPU of a socket-scope counter; -1 (any) for thread scope.
    pub cpu: i32,
    /// Multiplier for the count (bytes per count); `None` keeps the table's.
    pub scale: Option<Num>,
    /// The PMU covers only some CPUs (a hybrid core type): a counter that never
    /// ran means the program never ran there, so it counts 0, not unknown.
    pub zero_when_not_run: bool,
    /// Where the config came from: `table` or `sysfs events/<name>`.
    pub origin: String,
}

/// Everything to open for one run of one event set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub opens: Vec<OpenSpec>,
    /// Optional events whose PMU this machine lacks: they count 0.
    pub absent: Vec<String>,
    /// The DRAM source in use, if any.
    pub dram_source: Option<String>,
    /// Why DRAM bytes or anything else will be missing.
    pub notes: Vec<String>,
}

impl Plan {
    /// Distinct PMU names the plan uses.
    pub fn pmus(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.opens.iter().map(|o| o.pmu.as_str()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// All CPUs the kernel has online (`<root>/devices/system/cpu/online`).
pub(crate) fn online_cpus(root: &Path) -> Option<Vec<u32>> {
    parse_cpu_list(&std::fs::read_to_string(root.join("devices/system/cpu/online")).ok()?)
}

fn num_from_f64(x: f64) -> Num {
    if x.fract() == 0.0 && x.abs() < 1e30 {
        Num::Exact(x as i128)
    } else {
        Num::Approx(x)
    }
}

/// The config and scale of `event` on `pmu`: the kernel's named event where it has one.
fn encode(
    event: &Event,
    pmu: &SysfsPmu,
    zero_when_not_run: bool,
) -> Result<(u32, RawConfig, Option<Num>, String), String> {
    if let Some(named) = event
        .sysfs
        .as_deref()
        .and_then(|n| pmu.named_event(n).map(|e| (n, e)))
    {
        let (name, ev) = named;
        let raw = pmu.format.encode(&ev.terms)?;
        let scale = ev.bytes_per_count().map(num_from_f64).or(event.scale);
        return Ok((pmu.type_, raw, scale, format!("sysfs events/{name}")));
    }
    match &event.encoding {
        Encoding::Fields(terms) => Ok((
            pmu.type_,
            pmu.format.encode(terms)?,
            event.scale,
            "table".into(),
        )),
        Encoding::Generic(GenericEvent::Instructions) => {
            // A generic event names its hybrid PMU in the upper config bits (Linux 5.13+).
            let ext = if zero_when_not_run {
                u64::from(pmu.type_) << sys::PERF_PMU_TYPE_SHIFT
            } else {
                0
            };
            let raw = RawConfig {
                config: sys::PERF_COUNT_HW_INSTRUCTIONS | ext,
                ..Default::default()
            };
            Ok((sys::PERF_TYPE_HARDWARE, raw, event.scale, "generic".into()))
        }
        Encoding::SysfsOnly => Err(format!(
            "the kernel has no named event `{}` under {}/events",
            event.sysfs.as_deref().unwrap_or("?"),
            pmu.dir.display()
        )),
    }
}

fn specs_for(
    event: &Event,
    pmus: &[SysfsPmu],
    online: Option<&[u32]>,
) -> Result<Vec<OpenSpec>, (String, String)> {
    let mut out = Vec::new();
    for pmu in pmus {
        let partial = match (&pmu.cpus, online) {
            (Some(cpus), Some(all)) => cpus.as_slice() != all,
            _ => false,
        };
        let (type_, raw, scale, origin) =
            encode(event, pmu, partial).map_err(|why| (pmu.name.clone(), why))?;
        let cpus: Vec<i32> = match event.scope {
            Scope::Thread => vec![-1],
            Scope::Socket => match &pmu.cpumask {
                Some(mask) if !mask.is_empty() => mask.iter().map(|c| *c as i32).collect(),
                _ => {
                    return Err((
                        pmu.name.clone(),
                        "the PMU has no cpumask to open a system-wide counter on".into(),
                    ))
                }
            },
        };
        for cpu in cpus {
            out.push(OpenSpec {
                event: event.name.clone(),
                pmu: pmu.name.clone(),
                type_,
                raw,
                scope: event.scope,
                cpu,
                scale,
                zero_when_not_run: partial,
                origin: origin.clone(),
            });
        }
    }
    Ok(out)
}

fn load_all(root: &Path, names: &[String]) -> Result<Vec<SysfsPmu>, PerfError> {
    names.iter().map(|n| SysfsPmu::load(root, n)).collect()
}

fn plan_dram(
    source: &DramSource,
    root: &Path,
    online: Option<&[u32]>,
) -> Result<Vec<OpenSpec>, String> {
    let pmus = load_all(root, &find_pmus(root, &source.pmu)).map_err(|e| e.to_string())?;
    let mut opens = Vec::new();
    for event in &source.events {
        opens.extend(
            specs_for(event, &pmus, online)
                .map_err(|(pmu, why)| format!("{} on {pmu}: {why}", event.name))?,
        );
    }
    Ok(opens)
}

/// Resolves `set` against the sysfs tree at `root` (normally `/sys`).
///
/// Core events must resolve (else the set does not fit this machine); DRAM is best
/// effort: the first source whose PMU exists is used, and a failure becomes a note.
pub fn plan(set: &EventSet, root: &Path, with_dram: bool) -> Result<Plan, PerfError> {
    let online = online_cpus(root);
    let mut plan = Plan::default();
    for event in &set.events {
        let names = find_pmus(root, &event.pmu);
        if names.is_empty() {
            if event.optional {
                plan.absent.push(event.name.clone());
                continue;
            }
            return Err(PerfError::MissingPmu {
                set: set.name.clone(),
                wanted: event.pmu.clone(),
                present: pmu_names(root),
            });
        }
        let pmus = load_all(root, &names)?;
        let specs =
            specs_for(event, &pmus, online.as_deref()).map_err(|(pmu, why)| PerfError::Encode {
                event: event.name.clone(),
                pmu,
                why,
            })?;
        plan.opens.extend(specs);
    }
    if !with_dram {
        return Ok(plan);
    }
    let present: Vec<&DramSource> = set
        .dram
        .iter()
        .filter(|d| !find_pmus(root, &d.pmu).is_empty())
        .collect();
    match present.first() {
        None if set.dram.is_empty() => plan.notes.push(format!(
            "DRAM bytes: event set {} has no DRAM source",
            set.name
        )),
        None => plan.notes.push(format!(
            "DRAM bytes unavailable: none of the memory-controller PMUs {} is on this machine",
            set.dram
                .iter()
                .flat_map(|d| d.pmu.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(source) => match plan_dram(source, root, online.as_deref()) {
            Ok(opens) => {
                plan.opens.extend(opens);
                plan.dram_source = Some(source.name.clone());
            }
            Err(why) => plan
                .notes
                .push(format!("DRAM bytes unavailable ({}): {why}", source.title)),
        },
    }
    Ok(plan)
}
