//! The [`MachineRecord`] a report carries: this machine, the peak its
//! figures are compared with and its roofs, from the profile given or saved
//! for it (`bench --save`), else from its theoretical peak.

use crate::detect::Machine;
use crate::peak::{ceilings, peak_ref, theoretical_peak, Overrides};
use crate::profile::MachineProfile;
use flopscope_model::MachineRecord;
use std::path::Path;

/// The record of machine `m` on host `host`; `profile`: its measured
/// ceilings and where they were read.
pub fn record(m: &Machine, host: &str, profile: Option<(&Path, &MachineProfile)>) -> MachineRecord {
    let theoretical = theoretical_peak(m, &Overrides::default());
    let clock_source = theoretical
        .assumptions
        .iter()
        .find(|a| a.starts_with("frequency:"))
        .cloned()
        .unwrap_or_default();
    let (peak, ceilings) = match profile {
        Some((path, p)) => {
            let mut peak = p.peak_ref();
            peak.assumptions.insert(
                0,
                format!(
                    "machine profile {} (flopscope bench --save, {})",
                    path.display(),
                    crate::store::utc(p.created_unix_s)
                ),
            );
            (peak, p.ceilings())
        }
        None => (peak_ref(&theoretical), ceilings(&theoretical)),
    };
    MachineRecord {
        identity: crate::store::identity(m),
        host: host.to_string(),
        cpu: m.model_name.clone(),
        sockets: m.sockets,
        cores: m.cores,
        threads: m.threads,
        isa: m.flags.clone(),
        caches: m
            .caches
            .iter()
            .map(|c| {
                let kind = if c.kind == "data" { "d" } else { "" };
                format!(
                    "L{}{kind} {} KiB x {}",
                    c.level,
                    c.size_bytes / 1024,
                    c.instances
                )
            })
            .collect(),
        clock_ghz: theoretical.freq_ghz,
        clock_source,
        hypervisor: m.hypervisor,
        peak,
        ceilings,
    }
}
