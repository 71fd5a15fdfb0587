//! The microarchitecture table (`data/uarch.toml`): FLOP per cycle per core by
//! vector width and precision, FMA units and width, notes; and the lookup of
//! the entry that describes a CPU.

use crate::error::MachineError;
use crate::isa::Isa;
use flopscope_model::Precision;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

const TABLE_TOML: &str = include_str!("../data/uarch.toml");

/// CPU vendor, from the CPUID vendor string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Intel,
    Amd,
    Hygon,
    Other,
}

impl Vendor {
    /// From the 12-character CPUID vendor string (`GenuineIntel`, ...).
    pub fn from_vendor_id(id: &str) -> Vendor {
        match id.trim() {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" => Vendor::Amd,
            "HygonGenuine" => Vendor::Hygon,
            _ => Vendor::Other,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Vendor::Intel => "Intel",
            Vendor::Amd => "AMD",
            Vendor::Hygon => "Hygon",
            Vendor::Other => "other",
        }
    }
}

/// FLOP per cycle per core of one vector width, by precision. fp16/bf16 are
/// present only where the ISA has them (AVX512_FP16, AVX512_BF16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlopPerCycle {
    pub fp64: u32,
    pub fp32: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf16: Option<u32>,
}

impl FlopPerCycle {
    pub fn get(&self, p: Precision) -> Option<u32> {
        match p {
            Precision::Fp64 => Some(self.fp64),
            Precision::Fp32 => Some(self.fp32),
            Precision::Fp16 => self.fp16,
            Precision::Bf16 => self.bf16,
            Precision::X87 => None,
        }
    }
}

/// One model number or an inclusive range of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
enum ModelSpec {
    One(u32),
    Range([u32; 2]),
}

impl ModelSpec {
    fn contains(self, m: u32) -> bool {
        match self {
            ModelSpec::One(x) => x == m,
            ModelSpec::Range([lo, hi]) => (lo..=hi).contains(&m),
        }
    }
}

/// A brand-string rule for SKUs that differ from their microarchitecture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Variant {
    brand_contains_any: Vec<String>,
    #[serde(default)]
    brand_excludes: Vec<String>,
    fma512_units: Option<u32>,
    note: String,
    flop_per_cycle: BTreeMap<Isa, FlopPerCycle>,
}

impl Variant {
    fn applies_to(&self, brand: &str) -> bool {
        self.brand_contains_any
            .iter()
            .any(|s| brand.contains(s.as_str()))
            && !self
                .brand_excludes
                .iter()
                .any(|s| brand.contains(s.as_str()))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    vendor: Option<Vendor>,
    family: Option<u32>,
    #[serde(default)]
    models: Vec<ModelSpec>,
    steppings: Option<[u32; 2]>,
    #[serde(default)]
    requires: Vec<String>,
    fma_units: u32,
    fma512_units: Option<u32>,
    #[serde(default)]
    add_units: u32,
    #[serde(default)]
    mul_units: u32,
    fma_width_bits: u32,
    fma_latency_cycles: Option<u32>,
    notes: Vec<String>,
    flop_per_cycle: BTreeMap<Isa, FlopPerCycle>,
    #[serde(default, rename = "variant")]
    variants: Vec<Variant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    uarch: Vec<Entry>,
    generic: Vec<Entry>,
}

/// A microarchitecture as the peak uses it: the table entry, with the
/// brand-string variant (if any) applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Uarch {
    pub name: String,
    /// A generic entry chosen by ISA flags, not by family/model.
    pub generic: bool,
    /// FMA pipes per core (0 where the core has none).
    pub fma_units: u32,
    /// FMA pipes that take 512-bit vectors, where fewer than `fma_units`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fma512_units: Option<u32>,
    /// Add and multiply pipes of a core without FMA.
    pub add_units: u32,
    pub mul_units: u32,
    /// Width of each FP pipe in bits; wider vectors take one pipe-cycle per half.
    pub fma_width_bits: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fma_latency_cycles: Option<u32>,
    pub notes: Vec<String>,
    pub flop_per_cycle: BTreeMap<Isa, FlopPerCycle>,
    /// The entry CPUID's family and model named, where the CPU's ISA rules
    /// it out under a hypervisor (whose model number can be made up): this
    /// entry was then chosen by the ISA instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instead_of: Option<SetAside>,
}

/// A family/model entry set aside because the CPU has what its cores never do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetAside {
    pub name: String,
    /// The CPU's flags the entry's cores never have (`avx512_fp16`).
    pub lacks: Vec<String>,
}

impl Uarch {
    /// FLOP per cycle per core for `isa` and `p`, if the table has it.
    pub fn flop_per_cycle(&self, isa: Isa, p: Precision) -> Option<u32> {
        self.flop_per_cycle.get(&isa).and_then(|f| f.get(p))
    }

    /// "2 x 256-bit FMA" and the like.
    pub fn units_description(&self) -> String {
        if self.fma_units == 0 {
            return format!(
                "{} add + {} mul pipes, {}-bit, no FMA",
                self.add_units, self.mul_units, self.fma_width_bits
            );
        }
        let mut s = format!("{} x {}-bit FMA", self.fma_units, self.fma_width_bits);
        if let Some(u) = self.fma512_units {
            s.push_str(&format!(" ({u} for 512-bit)"));
        }
        if let Some(l) = self.fma_latency_cycles {
            s.push_str(&format!(", latency {l} cycles"));
        }
        s
    }
}

/// What identifies a CPU to the table.
#[derive(Debug, Clone, Copy)]
pub struct CpuKey<'a> {
    pub vendor: Vendor,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub brand: &'a str,
    /// `/proc/cpuinfo`-style ISA flags.
    pub flags: &'a [String],
    /// Running under a hypervisor, which may report a model number of its
    /// own choosing.
    pub hypervisor: bool,
}

impl CpuKey<'_> {
    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// What the CPU's flags name that `u` has no figures for: AVX-512 and
    /// its fp16 and bf16 arithmetic. Empty when `u` could be this CPU.
    fn beyond(&self, u: &Uarch) -> Vec<&'static str> {
        [
            ("avx512f", Precision::Fp64),
            ("avx512_fp16", Precision::Fp16),
            ("avx512_bf16", Precision::Bf16),
        ]
        .into_iter()
        .filter(|&(flag, p)| self.has(flag) && u.flop_per_cycle(Isa::Avx512, p).is_none())
        .map(|(flag, _)| flag)
        .collect()
    }
}

/// The parsed table.
#[derive(Debug)]
pub struct Table {
    entries: Vec<Entry>,
    generic: Vec<Entry>,
}

impl Table {
    /// Parses and checks a table in the format of `data/uarch.toml`.
    pub fn parse(text: &str) -> Result<Table, MachineError> {
        let file: TableFile =
            toml::from_str(text).map_err(|e| MachineError::Table(e.to_string()))?;
        let table = Table {
            entries: file.uarch,
            generic: file.generic,
        };
        table.check()?;
        Ok(table)
    }

    fn check(&self) -> Result<(), MachineError> {
        let err = |name: &str, what: String| Err(MachineError::Table(format!("{name}: {what}")));
        for e in &self.entries {
            if e.vendor.is_none() || e.family.is_none() || e.models.is_empty() {
                return err(
                    &e.name,
                    "a [[uarch]] entry needs vendor, family and models".into(),
                );
            }
        }
        for e in &self.generic {
            if e.requires.is_empty() {
                return err(&e.name, "a [[generic]] entry needs `requires`".into());
            }
        }
        for e in self.entries.iter().chain(&self.generic) {
            for v in &e.variants {
                for isa in v.flop_per_cycle.keys() {
                    if !e.flop_per_cycle.contains_key(isa) {
                        return err(
                            &e.name,
                            format!("variant sets {} which the entry lacks", isa.key()),
                        );
                    }
                }
            }
            if !e.flop_per_cycle.contains_key(&Isa::Scalar) {
                return err(&e.name, "no scalar figures".into());
            }
        }
        Ok(())
    }

    /// Every entry name, family/model entries first.
    pub fn names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .chain(&self.generic)
            .map(|e| e.name.as_str())
            .collect()
    }

    /// The entry (with any brand variant applied) for this CPU: by vendor,
    /// family, model and stepping; else the first generic entry whose
    /// required flags the CPU has.
    ///
    /// Under a hypervisor, an entry whose cores never have what the CPU's
    /// flags name (a "Rocket Lake" with AVX512-FP16 and AMX: a made-up model
    /// number in front of a Sapphire Rapids-class host) gives way to the
    /// vendor's first entry, in the table's order of generations, that has
    /// it all; [`Uarch::instead_of`] names the one set aside.
    pub fn lookup(&self, cpu: &CpuKey) -> Option<Uarch> {
        let by_model = self.entries.iter().find(|e| {
            e.vendor == Some(cpu.vendor)
                && e.family == Some(cpu.family)
                && e.models.iter().any(|m| m.contains(cpu.model))
                && e.steppings
                    .is_none_or(|[lo, hi]| (lo..=hi).contains(&cpu.stepping))
        });
        if let Some(e) = by_model {
            let u = resolve(e, false, cpu.brand);
            if !cpu.hypervisor || cpu.beyond(&u).is_empty() {
                return Some(u);
            }
            let by_isa = self.entries.iter().find(|e| {
                e.vendor == Some(cpu.vendor) && cpu.beyond(&resolve(e, false, "")).is_empty()
            });
            if let Some(e) = by_isa {
                let mut instead = resolve(e, false, cpu.brand);
                instead.instead_of = Some(SetAside {
                    lacks: cpu.beyond(&u).into_iter().map(String::from).collect(),
                    name: u.name,
                });
                return Some(instead);
            }
        }
        let has = |f: &String| cpu.flags.iter().any(|g| g == f);
        self.generic
            .iter()
            .find(|e| e.requires.iter().all(has))
            .map(|e| resolve(e, true, cpu.brand))
    }

    /// The entry named `name` (case-insensitive), without brand variants.
    pub fn named(&self, name: &str) -> Result<Uarch, MachineError> {
        let generic = |e: &Entry| self.generic.iter().any(|g| std::ptr::eq(g, e));
        self.entries
            .iter()
            .chain(&self.generic)
            .find(|e| squeezed(&e.name) == squeezed(name))
            .map(|e| resolve(e, generic(e), ""))
            .ok_or_else(|| MachineError::UnknownUarch {
                name: name.to_string(),
                known: self
                    .names()
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Every entry as the peak would use it (variants not applied), for tests and listings.
    pub fn all(&self) -> Vec<Uarch> {
        self.entries
            .iter()
            .map(|e| resolve(e, false, ""))
            .chain(self.generic.iter().map(|e| resolve(e, true, "")))
            .collect()
    }

    /// Every entry with each of its variants applied in turn.
    pub fn all_with_variants(&self) -> Vec<Uarch> {
        let mut out = self.all();
        for e in self.entries.iter().chain(&self.generic) {
            for v in &e.variants {
                out.push(apply(resolve(e, false, ""), v));
            }
        }
        out
    }
}

fn resolve(e: &Entry, generic: bool, brand: &str) -> Uarch {
    let u = Uarch {
        name: e.name.clone(),
        generic,
        fma_units: e.fma_units,
        fma512_units: e.fma512_units,
        add_units: e.add_units,
        mul_units: e.mul_units,
        fma_width_bits: e.fma_width_bits,
        fma_latency_cycles: e.fma_latency_cycles,
        notes: e.notes.clone(),
        flop_per_cycle: e.flop_per_cycle.clone(),
        instead_of: None,
    };
    match e.variants.iter().find(|v| v.applies_to(brand)) {
        Some(v) => apply(u, v),
        None => u,
    }
}

fn apply(mut u: Uarch, v: &Variant) -> Uarch {
    if v.fma512_units.is_some() {
        u.fma512_units = v.fma512_units;
    }
    for (isa, f) in &v.flop_per_cycle {
        u.flop_per_cycle.insert(*isa, *f);
    }
    u.notes.push(v.note.clone());
    u
}

/// The embedded table (`data/uarch.toml`), parsed once.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        Table::parse(TABLE_TOML)
            .expect("data/uarch.toml is checked by `cargo test -p flopscope-machine`")
    })
}

/// The embedded table's entry named `name` (for `--uarch`).
/// A name as people type it: case, spaces, dashes and underscores aside
/// (`zen4`, as `flopscope events --arch` spells it, is "Zen 4";
/// `icelake-sp` is "Ice Lake-SP").
fn squeezed(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The table entry named `name` (see [`squeezed`] for the spellings accepted).
pub fn uarch_named(name: &str) -> Result<Uarch, MachineError> {
    table().named(name)
}

#[cfg(test)]
mod hypervisor_tests {
    use super::*;

    /// The flags a CPU of `u` has at most, as far as [`CpuKey::beyond`] looks.
    fn own_flags(u: &Uarch) -> Vec<String> {
        let mut f = vec![
            "sse2".to_string(),
            "avx".into(),
            "fma".into(),
            "avx2".into(),
        ];
        for (flag, p) in [
            ("avx512f", Precision::Fp64),
            ("avx512_fp16", Precision::Fp16),
            ("avx512_bf16", Precision::Bf16),
        ] {
            if u.flop_per_cycle(Isa::Avx512, p).is_some() {
                f.push(flag.into());
            }
        }
        f
    }

    /// Under a hypervisor, no family/model entry is set aside for a CPU
    /// whose flags are its own cores' (every model number of every entry,
    /// each range at both ends).
    #[test]
    fn no_entry_is_set_aside_for_its_own_flags() {
        let t = table();
        for e in &t.entries {
            let flags = own_flags(&resolve(e, false, ""));
            for m in &e.models {
                let (lo, hi) = match *m {
                    ModelSpec::One(x) => (x, x),
                    ModelSpec::Range([lo, hi]) => (lo, hi),
                };
                for model in [lo, hi] {
                    let key = CpuKey {
                        vendor: e.vendor.unwrap(),
                        family: e.family.unwrap(),
                        model,
                        stepping: e.steppings.map_or(0, |[lo, _]| lo),
                        brand: "",
                        flags: &flags,
                        hypervisor: true,
                    };
                    let u = t.lookup(&key).unwrap();
                    assert_eq!(u.instead_of, None, "{} model {model:#x}", e.name);
                }
            }
        }
    }
}

#[cfg(test)]
mod name_tests {
    #[test]
    fn names_are_matched_as_people_type_them() {
        for (typed, entry) in [
            ("zen4", "Zen 4"),
            ("ZEN 4", "Zen 4"),
            ("icelake-sp", "Ice Lake-SP"),
            ("sapphire_rapids", "Sapphire Rapids"),
        ] {
            assert_eq!(super::uarch_named(typed).unwrap().name, entry, "{typed}");
        }
        assert!(super::uarch_named("zen9").is_err());
    }
}
