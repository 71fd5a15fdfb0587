//! Event sets: the data files under `events/` parsed into [`EventSet`]s.
//!
//! One file per microarchitecture family (`events/*.toml`) names the CPUs it
//! matches, its events by sysfs field (`event=0xc7,umask=0x10`), the formulas
//! from events to FLOP by precision and width, its caveats, and the DRAM
//! sources (`events/dram/*.toml`) to try, in order, for memory traffic.

use crate::cpu::CpuId;
use crate::error::PerfError;
use crate::formula::{Expr, Formula, Num};
use crate::sysfs::parse_terms;
use flopscope_model::Precision;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Where an event counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// On the measured program's threads and children (inherited), user space only.
    Thread,
    /// System-wide, on each CPU of the PMU's `cpumask` (uncore: one per socket).
    Socket,
}

/// A kernel-generic event, opened as `PERF_TYPE_HARDWARE` on the event's PMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenericEvent {
    Instructions,
}

/// How an event's config is made.
#[derive(Debug, Clone, PartialEq)]
pub enum Encoding {
    /// Field assignments encoded with the PMU's `format/` (`event=0xc7,umask=0x10`).
    Fields(Vec<(String, u64)>),
    /// A generic hardware event.
    Generic(GenericEvent),
    /// Only the kernel's named sysfs event (the event's `sysfs` name) defines it.
    SysfsOnly,
}

/// One counter.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The name formulas use (Intel/AMD/Arm documentation spelling).
    pub name: String,
    /// PMU names to look for, by preference; a trailing `*` stands for digits (`uncore_imc_*`).
    pub pmu: Vec<String>,
    pub encoding: Encoding,
    /// The config as the reference writes it (`umask<<8 | event`), checked by the tests.
    pub raw: Option<u64>,
    /// The kernel's name for it under `<pmu>/events/`, preferred where present.
    pub sysfs: Option<String>,
    /// Multiplier applied to the count before formulas see it (bytes per count for
    /// DRAM events); a sysfs `.scale` with a byte `.unit` replaces it where present.
    pub scale: Option<Num>,
    pub scope: Scope,
    /// Counts 0 when the machine lacks the PMU (`cpu_atom` with the E-cores disabled).
    pub optional: bool,
    /// Text shown by `flopscope events`.
    pub note: Option<String>,
}

impl Event {
    /// The config as written in the table.
    pub fn config_text(&self) -> String {
        match &self.encoding {
            Encoding::Fields(terms) => terms
                .iter()
                .map(|(k, v)| format!("{k}={v:#04x}"))
                .collect::<Vec<_>>()
                .join(","),
            Encoding::Generic(GenericEvent::Instructions) => "generic: instructions".into(),
            Encoding::SysfsOnly => format!("sysfs: {}", self.sysfs.as_deref().unwrap_or("?")),
        }
    }
}

/// Inclusive model ranges of one vendor and family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuMatch {
    pub vendor: String,
    pub family: u32,
    pub models: Vec<(u32, u32)>,
}

impl CpuMatch {
    pub fn matches(&self, cpu: &CpuId) -> bool {
        self.vendor == cpu.vendor
            && self.family == cpu.family
            && self
                .models
                .iter()
                .any(|(a, b)| (*a..=*b).contains(&cpu.model))
    }
}

/// A runtime check: when `expr` is positive, `warning` (with `{value}` filled in)
/// goes to the report and the counts are marked incomplete.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub expr: Expr,
    pub warning: String,
}

/// A way to count DRAM traffic on one platform (`events/dram/*.toml`).
#[derive(Debug, Clone, PartialEq)]
pub struct DramSource {
    pub name: String,
    pub title: String,
    /// PMUs to open every event on (all instances matching the first pattern that matches).
    pub pmu: Vec<String>,
    pub scope: Scope,
    pub events: Vec<Event>,
    /// `read`, `write` and/or `total`, in bytes.
    pub formulas: Vec<Formula>,
    pub caveats: Vec<String>,
    pub verify: Vec<String>,
}

/// One microarchitecture family's events and formulas.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSet {
    pub name: String,
    pub title: String,
    pub aliases: Vec<String>,
    /// The data file it came from.
    pub file: String,
    pub cpus: Vec<CpuMatch>,
    /// Set when these CPUs have no event that counts FLOP: the reason.
    pub no_flop: Option<String>,
    /// Named numbers for formulas (the SVE vector length `VL`); a run may override them.
    pub constants: BTreeMap<String, Num>,
    pub events: Vec<Event>,
    /// `total`, `<precision>` or `<precision>.<width>` in FLOP (FMA = 2).
    pub flop: Vec<Formula>,
    /// Other figures: `instructions` fills the report's instruction count, the rest go to `warnings`.
    pub info: Vec<Formula>,
    pub checks: Vec<Check>,
    /// DRAM sources by preference: the first whose PMU this machine has is used.
    pub dram: Vec<DramSource>,
    /// Accuracy notes, each copied into the report's `warnings`.
    pub caveats: Vec<String>,
    /// Open questions nobody has checked on hardware yet, also copied into `warnings`.
    pub verify: Vec<String>,
}

impl EventSet {
    /// Its name, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.name).chain(&self.aliases)
    }

    pub fn matches(&self, cpu: &CpuId) -> bool {
        self.cpus.iter().any(|m| m.matches(cpu))
    }

    pub fn event(&self, name: &str) -> Option<&Event> {
        self.events.iter().find(|e| e.name == name)
    }

    pub fn dram_source(&self, name: &str) -> Option<&DramSource> {
        self.dram.iter().find(|d| d.name == name)
    }
}

// ---- the files as written ----

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ModelSpec {
    One(u32),
    /// `"0x30-0xff"`
    Range(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NumSpec {
    Int(i64),
    Float(f64),
}

impl NumSpec {
    fn num(&self) -> Num {
        match self {
            NumSpec::Int(i) => Num::Exact(i128::from(*i)),
            NumSpec::Float(x) => Num::Approx(*x),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CpuFile {
    vendor: String,
    family: u32,
    models: Vec<ModelSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventFile {
    name: String,
    pmu: Option<OneOrMany>,
    config: Option<String>,
    generic: Option<String>,
    raw: Option<u64>,
    sysfs: Option<String>,
    scale: Option<NumSpec>,
    #[serde(default)]
    optional: bool,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFile {
    value: String,
    warning: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFile {
    name: String,
    title: String,
    #[serde(default)]
    aliases: Vec<String>,
    cpu: Vec<CpuFile>,
    no_flop: Option<String>,
    #[serde(default)]
    constants: BTreeMap<String, NumSpec>,
    #[serde(default)]
    event: Vec<EventFile>,
    #[serde(default)]
    flop: Vec<String>,
    #[serde(default)]
    info: Vec<String>,
    #[serde(default)]
    check: Vec<CheckFile>,
    #[serde(default)]
    dram: Vec<String>,
    #[serde(default)]
    caveats: Vec<String>,
    #[serde(default)]
    verify: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DramFile {
    name: String,
    title: String,
    pmu: OneOrMany,
    scope: String,
    event: Vec<EventFile>,
    formulas: Vec<String>,
    #[serde(default)]
    caveats: Vec<String>,
    #[serde(default)]
    verify: Vec<String>,
}

fn parse_models(specs: &[ModelSpec]) -> Result<Vec<(u32, u32)>, String> {
    let one = |s: &str| crate::sysfs::parse_u64(s.trim()).and_then(|v| u32::try_from(v).ok());
    specs
        .iter()
        .map(|m| match m {
            ModelSpec::One(n) => Ok((*n, *n)),
            ModelSpec::Range(r) => {
                let (a, b) = r
                    .split_once('-')
                    .ok_or_else(|| format!("model range `{r}` is not `lo-hi`"))?;
                match (one(a), one(b)) {
                    (Some(a), Some(b)) if a <= b => Ok((a, b)),
                    _ => Err(format!("model range `{r}` is not `lo-hi`")),
                }
            }
        })
        .collect()
}

fn build_event(
    e: EventFile,
    default_pmu: Option<&[String]>,
    scope: Scope,
) -> Result<Event, String> {
    let pmu = match (e.pmu, default_pmu) {
        (Some(p), _) => p.into_vec(),
        (None, Some(d)) => d.to_vec(),
        (None, None) => return Err(format!("event {} names no pmu", e.name)),
    };
    let encoding = match (e.config, e.generic.as_deref()) {
        (Some(c), None) => {
            Encoding::Fields(parse_terms(&c).map_err(|why| format!("event {}: {why}", e.name))?)
        }
        (None, Some("instructions")) => Encoding::Generic(GenericEvent::Instructions),
        (None, Some(g)) => return Err(format!("event {}: unknown generic event `{g}`", e.name)),
        (None, None) if e.sysfs.is_some() => Encoding::SysfsOnly,
        _ => {
            return Err(format!(
                "event {} needs exactly one of config, generic, sysfs",
                e.name
            ))
        }
    };
    Ok(Event {
        name: e.name,
        pmu,
        encoding,
        raw: e.raw,
        sysfs: e.sysfs,
        scale: e.scale.map(|s| s.num()),
        scope,
        optional: e.optional,
        note: e.note,
    })
}

fn parse_formulas(lines: &[String]) -> Result<Vec<Formula>, String> {
    lines.iter().map(|l| Formula::parse(l)).collect()
}

/// Names in `formulas` must be events or constants; each key may appear once.
fn check_names(
    what: &str,
    formulas: &[Formula],
    events: &[Event],
    constants: &BTreeMap<String, Num>,
    used: &mut BTreeSet<String>,
) -> Result<(), String> {
    let mut keys = BTreeSet::new();
    for f in formulas {
        if !keys.insert(f.key.as_str()) {
            return Err(format!("{what}: `{}` is defined twice", f.key));
        }
        for n in f.expr.names() {
            if !events.iter().any(|e| e.name == n) && !constants.contains_key(n) {
                return Err(format!(
                    "{what}: `{f}` uses `{n}`, which is no event or constant of the set"
                ));
            }
            used.insert(n.to_string());
        }
    }
    Ok(())
}

fn flop_key_ok(key: &str) -> bool {
    let (prec, label) = match key.split_once('.') {
        Some((p, l)) => (p, Some(l)),
        None => (key, None),
    };
    (key == "total")
        || (Precision::from_key(prec).is_some()
            && !matches!(label, Some(l) if l.is_empty() || l.contains('.')))
}

/// Parses one DRAM source file.
pub fn parse_dram_file(file: &str, text: &str) -> Result<DramSource, PerfError> {
    let err = |why: String| PerfError::Data {
        file: file.to_string(),
        why,
    };
    let d: DramFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
    let scope = match d.scope.as_str() {
        "socket" => Scope::Socket,
        "thread" => Scope::Thread,
        other => return Err(err(format!("scope `{other}` is neither socket nor thread"))),
    };
    let pmu = d.pmu.into_vec();
    let events = d
        .event
        .into_iter()
        .map(|e| build_event(e, Some(&pmu), scope))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let formulas = parse_formulas(&d.formulas).map_err(err)?;
    let mut used = BTreeSet::new();
    check_names("formulas", &formulas, &events, &BTreeMap::new(), &mut used).map_err(err)?;
    if let Some(f) = formulas
        .iter()
        .find(|f| !matches!(f.key.as_str(), "read" | "write" | "total"))
    {
        return Err(err(format!(
            "DRAM formula key `{}` is not read, write or total",
            f.key
        )));
    }
    if let Some(e) = events.iter().find(|e| !used.contains(&e.name)) {
        return Err(err(format!("event {} is used by no formula", e.name)));
    }
    Ok(DramSource {
        name: d.name,
        title: d.title,
        pmu,
        scope,
        events,
        formulas,
        caveats: d.caveats,
        verify: d.verify,
    })
}

/// Parses one event set file; `dram` are the DRAM sources it may name.
pub fn parse_set_file(file: &str, text: &str, dram: &[DramSource]) -> Result<EventSet, PerfError> {
    let err = |why: String| PerfError::Data {
        file: file.to_string(),
        why,
    };
    let s: SetFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
    let cpus = s
        .cpu
        .iter()
        .map(|c| {
            Ok(CpuMatch {
                vendor: c.vendor.clone(),
                family: c.family,
                models: parse_models(&c.models)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(err)?;
    let constants: BTreeMap<String, Num> = s
        .constants
        .iter()
        .map(|(k, v)| (k.clone(), v.num()))
        .collect();
    let events = s
        .event
        .into_iter()
        .map(|e| build_event(e, None, Scope::Thread))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let mut names = BTreeSet::new();
    for e in &events {
        if !names.insert(e.name.as_str()) {
            return Err(err(format!("event {} is declared twice", e.name)));
        }
    }
    let flop = parse_formulas(&s.flop).map_err(err)?;
    let info = parse_formulas(&s.info).map_err(err)?;
    let mut used = BTreeSet::new();
    check_names("flop", &flop, &events, &constants, &mut used).map_err(err)?;
    check_names("info", &info, &events, &constants, &mut used).map_err(err)?;
    if let Some(f) = flop.iter().find(|f| !flop_key_ok(&f.key)) {
        return Err(err(format!(
            "flop key `{}` is not total, <precision> or <precision>.<width>",
            f.key
        )));
    }
    let mut checks = Vec::new();
    for c in &s.check {
        let f = Formula::parse(&format!("check = {}", c.value)).map_err(err)?;
        check_names(
            "check",
            std::slice::from_ref(&f),
            &events,
            &constants,
            &mut used,
        )
        .map_err(err)?;
        checks.push(Check {
            expr: f.expr,
            warning: c.warning.clone(),
        });
    }
    if let Some(e) = events.iter().find(|e| !used.contains(&e.name)) {
        return Err(err(format!(
            "event {} is used by no formula or check",
            e.name
        )));
    }
    if s.no_flop.is_some() != flop.is_empty() {
        return Err(err(
            "a set has flop formulas, or says why not with `no_flop`, not both".into(),
        ));
    }
    let dram = s
        .dram
        .iter()
        .map(|n| {
            dram.iter()
                .find(|d| &d.name == n)
                .cloned()
                .ok_or_else(|| err(format!("unknown DRAM source `{n}`")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for d in &dram {
        if let Some(e) = d.events.iter().find(|e| names.contains(e.name.as_str())) {
            return Err(err(format!(
                "DRAM source {} reuses the core event name {}",
                d.name, e.name
            )));
        }
    }
    Ok(EventSet {
        name: s.name,
        title: s.title,
        aliases: s.aliases,
        file: file.to_string(),
        cpus,
        no_flop: s.no_flop,
        constants,
        events,
        flop,
        info,
        checks,
        dram,
        caveats: s.caveats,
        verify: s.verify,
    })
}

macro_rules! data_files {
    ($dir:literal: $($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../events/", $dir, $name)))),*]
    };
}

/// The DRAM source files, embedded.
pub const DRAM_FILES: &[(&str, &str)] = data_files!("dram/":
    "intel-imc-snbep.toml",
    "intel-imc-icx.toml",
    "intel-imc-spr.toml",
    "intel-imc-gnr.toml",
    "intel-imc-client.toml",
    "intel-imc-client-free-running.toml",
    "amd-df-zen1.toml",
    "amd-umc.toml",
    "a64fx-l2.toml",
    "nvidia-grace-cmem.toml",
);

/// The event set files, embedded; the order is the order of `flopscope events --list`.
pub const SET_FILES: &[(&str, &str)] = data_files!("":
    "snb.toml",
    "hsw.toml",
    "bdw.toml",
    "skl.toml",
    "skx.toml",
    "icl.toml",
    "icx.toml",
    "spr.toml",
    "gnr.toml",
    "adl.toml",
    "mtl.toml",
    "lnl.toml",
    "gracemont.toml",
    "srf.toml",
    "knl.toml",
    "zen1.toml",
    "zen2.toml",
    "zen4.toml",
    "zen5.toml",
    "neoverse-n1.toml",
    "neoverse-v1.toml",
    "neoverse-v2.toml",
    "a64fx.toml",
);

/// Parses every embedded file.
pub fn load_event_sets() -> Result<Vec<EventSet>, PerfError> {
    let dram = DRAM_FILES
        .iter()
        .map(|(f, t)| parse_dram_file(f, t))
        .collect::<Result<Vec<_>, _>>()?;
    let sets = SET_FILES
        .iter()
        .map(|(f, t)| parse_set_file(f, t, &dram))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seen = BTreeSet::new();
    for s in &sets {
        for n in s.names() {
            if !seen.insert(n.to_ascii_lowercase()) {
                return Err(PerfError::Data {
                    file: s.file.clone(),
                    why: format!("the name `{n}` is used twice"),
                });
            }
        }
    }
    Ok(sets)
}

/// Every event set (parsed once; the files are embedded and checked by the tests).
pub fn event_sets() -> &'static [EventSet] {
    static SETS: OnceLock<Vec<EventSet>> = OnceLock::new();
    SETS.get_or_init(|| load_event_sets().unwrap_or_else(|e| panic!("embedded event tables: {e}")))
}

/// The names of every event set, in file order.
pub fn event_set_names() -> Vec<&'static str> {
    event_sets().iter().map(|s| s.name.as_str()).collect()
}

/// The set named `name` or with `name` as an alias, compared on letters and
/// digits alone, whatever their case: `zen4` is also "Zen 4", and
/// `sandybridge` "Sandy Bridge", as `flopscope peak --uarch` names them.
pub fn event_set_named(name: &str) -> Option<&'static EventSet> {
    let key = |n: &str| {
        n.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    let wanted = key(name);
    event_sets()
        .iter()
        .find(|s| s.names().any(|n| key(n) == wanted))
}

/// Like [`event_set_named`], with an error listing the known names.
pub fn event_set_by_name(name: &str) -> Result<&'static EventSet, PerfError> {
    event_set_named(name).ok_or_else(|| PerfError::UnknownArch {
        name: name.to_string(),
        known: known_names(),
    })
}

fn known_names() -> Vec<String> {
    event_set_names().into_iter().map(String::from).collect()
}

/// The set for `cpu`: [`PerfError::UnknownCpu`] if none matches, [`PerfError::NoFlopEvents`]
/// if the CPU is known to have no FLOP event.
pub fn event_set_for(cpu: &CpuId) -> Result<&'static EventSet, PerfError> {
    let set = event_sets()
        .iter()
        .find(|s| s.matches(cpu))
        .ok_or_else(|| PerfError::UnknownCpu {
            cpu: cpu.to_string(),
            known: known_names(),
        })?;
    usable(set)
}

/// `Ok(set)` unless the set says its CPUs cannot count FLOP.
pub fn usable(set: &'static EventSet) -> Result<&'static EventSet, PerfError> {
    match &set.no_flop {
        Some(why) => Err(PerfError::NoFlopEvents {
            set: set.name.clone(),
            title: set.title.clone(),
            why: why.clone(),
        }),
        None => Ok(set),
    }
}
