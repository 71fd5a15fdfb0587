//! The core clock: where the figure comes from, and a measurement with a
//! dependent-add loop for machines that do not report it (virtual machines
//! without cpufreq, where `/proc/cpuinfo`'s `cpu MHz` is the TSC rate).

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Every frequency the machine reports, in MHz.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Frequencies {
    /// cpufreq `cpuinfo_max_freq` (the highest boost state).
    pub sysfs_max_mhz: Option<f64>,
    /// cpufreq `base_frequency` (intel_pstate).
    pub sysfs_base_mhz: Option<f64>,
    /// CPUID leaf 0x16.
    pub cpuid_base_mhz: Option<f64>,
    pub cpuid_max_mhz: Option<f64>,
    /// `/proc/cpuinfo` `cpu MHz` of the first CPU.
    pub cpuinfo_mhz: Option<f64>,
    /// Measured with [`measure_mhz`] (only when no maximum is reported):
    /// the highest of several measurements, kept between runs
    /// ([`crate::store::stable_clock`]).
    pub measured_mhz: Option<f64>,
    /// How `measured_mhz` was obtained, for people ("highest of 3
    /// measurements, kept from an earlier run").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_how: Option<String>,
}

/// Where the frequency of a peak came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreqSource {
    /// `--freq`.
    Override,
    /// cpufreq `cpuinfo_max_freq`.
    SysfsMax,
    /// CPUID leaf 0x16 maximum.
    CpuidMax,
    /// The dependent-add loop.
    Measured,
    /// `/proc/cpuinfo` `cpu MHz`.
    Cpuinfo,
    /// Nothing reported it.
    Unknown,
}

impl Frequencies {
    /// The frequency a theoretical peak uses, first of: cpufreq maximum,
    /// CPUID maximum, measured, `/proc/cpuinfo`.
    pub fn best(&self) -> (Option<f64>, FreqSource) {
        let order = [
            (self.sysfs_max_mhz, FreqSource::SysfsMax),
            (self.cpuid_max_mhz, FreqSource::CpuidMax),
            (self.measured_mhz, FreqSource::Measured),
            (self.cpuinfo_mhz, FreqSource::Cpuinfo),
        ];
        order
            .into_iter()
            .find_map(|(v, s)| v.filter(|m| *m > 0.0).map(|m| (Some(m), s)))
            .unwrap_or((None, FreqSource::Unknown))
    }

    /// Whether detection should measure: no maximum is reported.
    pub fn needs_measurement(&self) -> bool {
        self.sysfs_max_mhz.is_none() && self.cpuid_max_mhz.is_none()
    }
}

/// `ADDS` dependent register-register adds per loop trip. Each takes one
/// cycle on every x86-64 core since the P6; register-register (not
/// add-immediate, which recent Intel cores can fold at rename) so that no
/// core can shorten the chain.
const ADDS: u64 = 32;

#[cfg(target_arch = "x86_64")]
fn dependent_adds(trips: u64) {
    use std::arch::asm;
    let one: u64 = std::hint::black_box(1);
    let mut x: u64 = 0;
    // SAFETY: register-only arithmetic and a counted loop.
    unsafe {
        asm!(
            "2:",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            one = in(reg) one,
            n = inout(reg) trips => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(x);
}

#[cfg(not(target_arch = "x86_64"))]
fn dependent_adds(trips: u64) {
    let mut x = 0u64;
    for _ in 0..trips * ADDS {
        x = std::hint::black_box(x + 1);
    }
}

/// Measures the core clock in MHz: the best of many short runs of a chain of
/// dependent adds (one cycle each), after a warm-up that lets the clock ramp
/// up. Short runs and the best of them keep out preemption by other work or
/// by the hypervisor. Takes about 0.1 s.
pub fn measure_mhz() -> f64 {
    let warm = Instant::now();
    while warm.elapsed().as_millis() < 30 {
        dependent_adds(10_000);
    }
    // About 1 ms per run at 3 GHz.
    let trips = 100_000;
    let mut best = 0.0f64;
    for _ in 0..40 {
        let t = Instant::now();
        dependent_adds(trips);
        let s = t.elapsed().as_secs_f64();
        if s > 0.0 {
            best = best.max((trips * ADDS) as f64 / s / 1e6);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_taken_in_order() {
        let mut f = Frequencies {
            cpuinfo_mhz: Some(2596.1),
            ..Default::default()
        };
        assert_eq!(f.best(), (Some(2596.1), FreqSource::Cpuinfo));
        f.measured_mhz = Some(3300.0);
        assert_eq!(f.best(), (Some(3300.0), FreqSource::Measured));
        f.cpuid_max_mhz = Some(3500.0);
        assert_eq!(f.best(), (Some(3500.0), FreqSource::CpuidMax));
        f.sysfs_max_mhz = Some(3700.0);
        assert_eq!(f.best(), (Some(3700.0), FreqSource::SysfsMax));
        assert!(!f.needs_measurement());
        assert_eq!(Frequencies::default().best(), (None, FreqSource::Unknown));
    }

    #[test]
    fn measured_clock_is_plausible() {
        // Any x86-64 core of the last twenty years runs between 0.5 and 7 GHz.
        let mhz = measure_mhz();
        assert!((500.0..7000.0).contains(&mhz), "measured {mhz} MHz");
    }
}
