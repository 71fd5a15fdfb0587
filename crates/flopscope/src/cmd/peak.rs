//! `flopscope peak`: the CPU and its theoretical peak GFLOP/s per core and
//! per machine, for each ISA and precision it has.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use flopscope_machine::{
    render, theoretical_peak, uarch_named, Machine, MachineProfile, Overrides, PeakDocument,
};
use flopscope_model::{Ceilings, MachineRecord, Report};
use std::path::Path;

#[derive(Args, Debug, Clone, Default)]
#[command(
    after_help = "Examples:\n  flopscope peak\n  flopscope peak --freq 3.7 --cores 96\n  flopscope peak --uarch \"Zen 5\" --format json"
)]
pub struct PeakArgs {
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PeakFormat::Table)]
    pub format: PeakFormat,
}

// What the peak assumes instead of what flopscope detects (shared with `bench`;
// a plain comment, so that clap does not take it for the command's about).
#[derive(Args, Debug, Clone, Default)]
pub struct OverrideArgs {
    /// Core clock in GHz instead of the detected one.
    #[arg(long, value_name = "GHZ", value_parser = positive_f64, global = true)]
    pub freq: Option<f64>,
    /// Number of cores instead of the detected physical cores.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), global = true)]
    pub cores: Option<u32>,
    /// Microarchitecture table entry instead of the detected one (for
    /// example "Zen 4"; an event set's name as `flopscope events --list`
    /// gives it, such as skx, is taken too).
    #[arg(long, visible_alias = "arch", value_name = "NAME", global = true)]
    pub uarch: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum PeakFormat {
    #[default]
    Table,
    Json,
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("{s:?} is not a positive number")),
    }
}

impl OverrideArgs {
    /// The overrides, with `--uarch` resolved to its table entry.
    pub fn overrides(&self) -> Result<Overrides> {
        let uarch = match &self.uarch {
            Some(name) => Some(table_entry(name)?.name),
            None => None,
        };
        Ok(Overrides {
            freq_ghz: self.freq,
            cores: self.cores,
            uarch,
        })
    }
}

/// The table entry `name` names, or the first one an event set of that name
/// (`flopscope events --arch`, `count --arch`) is also called: `skx` is
/// "Skylake-SP" (its alias skylake-sp), `hsw` "Haswell".
fn table_entry(name: &str) -> Result<flopscope_machine::Uarch> {
    uarch_named(name).or_else(|e| {
        flopscope_engine_perf::event_set_named(name)
            .and_then(|set| set.names().find_map(|n| uarch_named(n).ok()))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{e}; nor is {name:?} an event set with an entry in that table \
                     (`flopscope events --list` names the sets)"
                )
            })
    })
}

pub fn run(a: PeakArgs) -> Result<i32> {
    let overrides = a.overrides.overrides()?;
    let machine = Machine::detect();
    let peak = theoretical_peak(&machine, &overrides);
    match a.format {
        PeakFormat::Table => print!("{}", render::peak_text(&machine, &peak)),
        PeakFormat::Json => print!("{}", PeakDocument::new(&machine, &peak).to_json()),
    }
    Ok(0)
}

/// This machine as a `count` report records it, with the peak its figures
/// are compared with: the machine profile `machine` (`count --machine
/// FILE`) when given, else the profile `bench --save` kept for this machine,
/// else its theoretical peak.
pub fn machine_record(machine: Option<&Path>) -> Result<MachineRecord> {
    let m = Machine::detect();
    let host = crate::launch::hostname();
    let profile = match machine {
        Some(p) => Some((p.to_path_buf(), MachineProfile::load(p)?)),
        None => flopscope_machine::store::saved_profile(&m)?,
    };
    let mut record = flopscope_machine::record::record(
        &m,
        &host,
        profile.as_ref().map(|(p, prof)| (p.as_path(), prof)),
    );
    if record.ceilings.bandwidth.is_empty() {
        // A roofline needs a bandwidth roof: without a profile, a short
        // STREAM triad, measured once on this machine and kept.
        let (kept, _) =
            flopscope_machine::store::kept("bandwidth", &record.identity, || quick_bandwidth(&m));
        record.ceilings.bandwidth = kept
            .value
            .iter()
            .map(|(level, gbs)| flopscope_model::BandwidthCeiling {
                level: level.clone(),
                gbytes_per_s: *gbs,
                measured: true,
            })
            .collect();
        record.ceilings.source.push_str(&format!(
            "; bandwidth: a short STREAM triad on all cores, measured once on this machine ({}) and kept; `flopscope bench --save FILE` measures every level properly",
            flopscope_machine::store::utc(kept.measured_unix_s)
        ));
    }
    Ok(record)
}

/// STREAM triad GB/s (median of 3 short repetitions, all cores) with a
/// working set in L1 and one well beyond the last-level cache (at least
/// 256 MiB): about a second, once per machine (see [`machine_record`]).
fn quick_bandwidth(m: &Machine) -> Vec<(String, f64)> {
    use flopscope_bench::{memory, spec::StreamOp, team::Plan};
    let threads = m.cores.max(1) as usize;
    let capacities: Vec<(u32, u64)> = m
        .caches
        .iter()
        .map(|c| (c.level, memory::capacity(c, threads, m.cores)))
        .collect();
    let l1 = capacities
        .iter()
        .filter(|(l, _)| *l == 1)
        .map(|(_, b)| *b)
        .max();
    let llc = capacities.iter().map(|(_, b)| *b).max().unwrap_or(32 << 20);
    let sizes: Vec<u64> = l1
        .map(|b| b / 2)
        .into_iter()
        .chain([(4 * llc).max(256 << 20)])
        .collect();
    let opts = memory::MemoryOptions {
        threads,
        plan: Plan {
            reps: 3,
            rep_seconds: 0.05,
        },
        sizes,
        ops: vec![StreamOp::Triad],
        isa: None,
    };
    let mut by_level: Vec<(String, f64)> = Vec::new();
    for b in memory::bench(m, &opts, &mut flopscope_bench::progress::Silent) {
        match by_level.iter_mut().find(|(l, _)| *l == b.level) {
            Some((_, g)) => *g = g.max(b.gbs.median),
            None => by_level.push((b.level, b.gbs.median)),
        }
    }
    by_level
}

/// The roofs of a roofline of `reports`: those of the machine profile
/// `machine` when given (a file of `bench --save`; a plain ceilings JSON is
/// read as it is), else those of the machine the reports were made on (their
/// machine record), else this machine's theoretical compute roofs (a report
/// made before reports recorded their machine), said in a warning.
pub fn ceilings_for(machine: Option<&Path>, reports: &[&Report]) -> Result<Ceilings> {
    let Some(p) = machine else {
        let records: Vec<&MachineRecord> =
            reports.iter().filter_map(|r| r.machine.as_ref()).collect();
        if let Some(first) = records.first() {
            if records.iter().any(|r| r.identity != first.identity) {
                eprintln!(
                    "flopscope: warning: the reports were made on different machines; the roofs are those of the first ({}); give --machine to choose",
                    first.identity
                );
            }
            return Ok(first.ceilings.clone());
        }
        eprintln!("flopscope: warning: the report records no machine (made by an older flopscope): the roofs are this machine's; give --machine FILE for the machine that ran it");
        return Ok(flopscope_machine::ceilings(&theoretical_peak(
            &Machine::detect(),
            &Overrides::default(),
        )));
    };
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("reading the machine profile {}", p.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not JSON: expected a machine profile from `flopscope bench --save`",
            p.display()
        )
    })?;
    if v.get("schema").and_then(|s| s.as_str()) == Some(flopscope_machine::PROFILE_SCHEMA) {
        return Ok(MachineProfile::load(p)?.ceilings());
    }
    serde_json::from_value(v).with_context(|| {
        format!(
            "{} is neither a machine profile (`flopscope bench --save`) nor a ceilings file",
            p.display()
        )
    })
}
