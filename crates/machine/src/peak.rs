//! The theoretical peak: FLOP/cycle per core (the table) x cores x GHz.

use crate::detect::Machine;
use crate::freq::FreqSource;
use crate::isa::Isa;
use crate::uarch::{self, Uarch};
use flopscope_model::{Ceilings, ComputeCeiling, PeakRef, Precision};
use serde::{Deserialize, Serialize};

/// What the user told flopscope instead of what it detected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overrides {
    /// `--freq GHZ`.
    pub freq_ghz: Option<f64>,
    /// `--cores N`.
    pub cores: Option<u32>,
    /// `--uarch NAME`: a table entry instead of the detected one (check the
    /// name first with [`uarch::uarch_named`]; an unknown name is ignored
    /// with an assumption line saying so).
    pub uarch: Option<String>,
}

/// One vector width and precision of a peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakRow {
    pub isa: Isa,
    pub precision: Precision,
    pub flop_per_cycle: u32,
    pub gflops_per_core: f64,
    pub gflops_machine: f64,
}

/// The theoretical peak of a machine and what it assumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// The table entry used (absent when none fits: no rows then).
    pub uarch: Option<Uarch>,
    pub freq_ghz: f64,
    pub freq_source: FreqSource,
    pub cores: u32,
    /// Each ISA the CPU has x each precision the table and the ISA have, narrowest first.
    pub rows: Vec<PeakRow>,
    /// One line each: frequency source, cores, FLOP/cycle source.
    pub assumptions: Vec<String>,
}

impl Peak {
    pub fn row(&self, isa: Isa, p: Precision) -> Option<&PeakRow> {
        self.rows.iter().find(|r| r.isa == isa && r.precision == p)
    }

    /// The row of `p` at the widest ISA the CPU has (the highest GFLOP/s).
    pub fn best(&self, p: Precision) -> Option<&PeakRow> {
        self.rows
            .iter()
            .filter(|r| r.precision == p)
            .max_by(|a, b| {
                a.gflops_machine
                    .total_cmp(&b.gflops_machine)
                    .then(a.isa.cmp(&b.isa))
            })
    }
}

/// Precisions a row is given for, and the flag the CPU needs for each.
fn precision_flag(p: Precision) -> Option<&'static str> {
    match p {
        Precision::Fp64 | Precision::Fp32 => None,
        Precision::Fp16 => Some("avx512_fp16"),
        Precision::Bf16 => Some("avx512_bf16"),
        Precision::X87 => Some("-"),
    }
}

/// The theoretical peak of `machine`: the table's FLOP/cycle per core for
/// each ISA and precision the CPU has, x cores x GHz, with `overrides`
/// applied.
pub fn theoretical_peak(machine: &Machine, overrides: &Overrides) -> Peak {
    let mut assumptions = Vec::new();

    // Frequency.
    let (freq_mhz, freq_source) = match overrides.freq_ghz {
        Some(g) => (Some(g * 1000.0), FreqSource::Override),
        None => machine.freq.best(),
    };
    let freq_ghz = freq_mhz.unwrap_or(0.0) / 1000.0;
    assumptions.push(freq_line(machine, freq_ghz, freq_source));

    // Cores.
    let cores = overrides.cores.unwrap_or(machine.cores).max(1);
    assumptions.push(match overrides.cores {
        Some(n) => format!("cores: {n}, given with --cores (detected {})", machine.cores),
        None => format!(
            "cores: {} ({} socket{} x {} cores, {} hardware threads; SMT threads share their core's FMA units)",
            machine.cores,
            machine.sockets,
            if machine.sockets == 1 { "" } else { "s" },
            machine.cores / machine.sockets.max(1),
            machine.threads
        ),
    });
    if machine.hypervisor && overrides.cores.is_none() {
        assumptions.push("under a hypervisor: the vCPUs are taken as distinct physical cores, which the host may not give them".into());
    }

    // FLOP/cycle.
    let by_name = overrides.uarch.as_deref().map(uarch::uarch_named);
    let named_ok = matches!(by_name, Some(Ok(_)));
    let detected = || uarch::table().lookup(&machine.cpu_key());
    let ua = match by_name {
        Some(Ok(u)) => {
            assumptions.push(format!(
                "FLOP/cycle: table entry {:?}, given with --uarch ({})",
                u.name,
                u.units_description()
            ));
            Some(u)
        }
        Some(Err(e)) => {
            assumptions.push(format!("--uarch ignored: {e}"));
            detected()
        }
        None => detected(),
    };
    if !named_ok {
        assumptions.push(match &ua {
            Some(
                u @ Uarch {
                    instead_of: Some(aside),
                    ..
                },
            ) => format!(
                "FLOP/cycle: table entry {:?} chosen by the ISA flags ({}): CPUID says {} {}, the model number of {:?}, whose cores never have {}; a hypervisor can report a model of its own, so the first generation in the table with all of these is taken (pass --uarch if you know the host's)",
                u.name,
                u.units_description(),
                machine.vendor.label(),
                machine.signature(),
                aside.name,
                aside.lacks.join(", ")
            ),
            Some(u) if !u.generic => format!(
                "FLOP/cycle: table entry {:?} for {} {} ({}); an FMA is 2 FLOP",
                u.name,
                machine.vendor.label(),
                machine.signature(),
                u.units_description()
            ),
            Some(u) => format!(
                "FLOP/cycle: no table entry for {} {}, so the {:?} entry chosen by the ISA flags ({}); check with `flopscope bench flops` or pass --uarch",
                machine.vendor.label(),
                machine.signature(),
                u.name,
                u.units_description()
            ),
            None => format!("FLOP/cycle: no table entry for {} {} and no SSE2: no peak", machine.vendor.label(), machine.signature()),
        });
    }
    if let Some(u) = &ua {
        if u.fma_units > 0 && !machine.has_flag("fma") && !machine.flags.is_empty() {
            assumptions.push("the table counts FMA, but the CPU does not report the fma flag: the FMA figures are out of reach".into());
        }
    }

    let mut rows = Vec::new();
    if let Some(u) = &ua {
        for isa in Isa::ALL {
            let has_isa = isa == Isa::Scalar
                || machine.flags.is_empty()
                || machine.has_flag(isa.required_flag());
            if !has_isa {
                continue;
            }
            for p in Precision::ALL {
                let has_p = match precision_flag(p) {
                    None => true,
                    Some(f) => machine.has_flag(f),
                };
                let Some(fpc) = u.flop_per_cycle(isa, p).filter(|_| has_p) else {
                    continue;
                };
                let per_core = fpc as f64 * freq_ghz;
                rows.push(PeakRow {
                    isa,
                    precision: p,
                    flop_per_cycle: fpc,
                    gflops_per_core: per_core,
                    gflops_machine: per_core * cores as f64,
                });
            }
        }
    }
    Peak {
        uarch: ua,
        freq_ghz,
        freq_source,
        cores,
        rows,
        assumptions,
    }
}

fn freq_line(machine: &Machine, ghz: f64, source: FreqSource) -> String {
    let f = &machine.freq;
    match source {
        FreqSource::Override => format!("frequency: {ghz:.2} GHz, given with --freq"),
        FreqSource::SysfsMax => format!(
            "frequency: {ghz:.2} GHz, the highest cpufreq state (cpuinfo_max_freq, a boost clock; the all-core vector clock is often lower)"
        ),
        FreqSource::CpuidMax => format!("frequency: {ghz:.2} GHz, the maximum in CPUID leaf 0x16"),
        FreqSource::Measured => {
            let mut s = format!("frequency: {ghz:.2} GHz, measured with a dependent-add loop (no cpufreq or CPUID maximum reported");
            if let Some(how) = &f.measured_how {
                s.push_str(&format!("; {how}"));
            }
            if let Some(m) = f.cpuinfo_mhz {
                s.push_str(&format!("; /proc/cpuinfo says {m:.0} MHz"));
                if machine.hypervisor {
                    s.push_str(", under a hypervisor the TSC rate");
                }
            }
            s.push(')');
            s
        }
        FreqSource::Cpuinfo => format!("frequency: {ghz:.2} GHz, /proc/cpuinfo `cpu MHz` (the clock when it was read, not the maximum)"),
        FreqSource::Unknown => "frequency: unknown (nothing reports it): pass --freq GHZ; GFLOP/s are 0".into(),
    }
}

/// The peak a `count` report refers to: fp64 and fp32 GFLOP/s of the whole
/// machine at the widest ISA the CPU has, with the assumptions.
pub fn peak_ref(peak: &Peak) -> PeakRef {
    let fp64 = peak.best(Precision::Fp64);
    let fp32 = peak.best(Precision::Fp32);
    let mut assumptions = peak.assumptions.clone();
    if let (Some(d), Some(s)) = (fp64, fp32) {
        assumptions.push(format!(
            "ISA: {} ({} fp64 and {} fp32 FLOP/cycle per core)",
            d.isa.label(),
            d.flop_per_cycle,
            s.flop_per_cycle
        ));
    }
    PeakRef {
        gflops_fp64: fp64.map_or(0.0, |r| r.gflops_machine),
        gflops_fp32: fp32.map_or(0.0, |r| r.gflops_machine),
        source: "theoretical".into(),
        assumptions,
    }
}

/// The theoretical compute roofs of a peak (whole machine, each ISA and
/// precision), for a roofline drawn without a machine profile. No bandwidth:
/// only `flopscope bench memory` measures it.
pub fn ceilings(peak: &Peak) -> Ceilings {
    let compute = peak
        .rows
        .iter()
        .map(|r| ComputeCeiling {
            name: format!("{} {}, theoretical", r.precision.key(), r.isa.label()),
            precision: r.precision.key().into(),
            width_bits: crate::profile::width_bits(r.isa, r.precision),
            gflops: r.gflops_machine,
            measured: false,
        })
        .collect();
    let machine = match &peak.uarch {
        Some(u) => format!(
            "{}, {} cores at {:.2} GHz",
            u.name, peak.cores, peak.freq_ghz
        ),
        None => format!("{} cores at {:.2} GHz", peak.cores, peak.freq_ghz),
    };
    Ceilings {
        source: "theoretical".into(),
        machine,
        compute,
        bandwidth: Vec::new(),
    }
}

pub const PEAK_SCHEMA: &str = "flopscope.peak/1";

/// `flopscope peak --format json`: the machine, its theoretical peak and
/// the `peak` a report would carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakDocument {
    pub schema: String,
    pub machine: Machine,
    pub peak: Peak,
    pub peak_ref: PeakRef,
}

impl PeakDocument {
    pub fn new(machine: &Machine, peak: &Peak) -> PeakDocument {
        PeakDocument {
            schema: PEAK_SCHEMA.into(),
            machine: machine.clone(),
            peak: peak.clone(),
            peak_ref: peak_ref(peak),
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a peak always serializes");
        s.push('\n');
        s
    }
}
