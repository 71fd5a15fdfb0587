//! [`Machine`]: what the CPU is, from CPUID, `/proc/cpuinfo` and sysfs.

use crate::cpuid::{self, CpuidInfo};
use crate::freq::{self, Frequencies};
use crate::procfs::CpuInfo;
use crate::sysfs::{self, CacheLevel};
use crate::uarch::{CpuKey, Vendor};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The ISA extensions flopscope reports (of the many `/proc/cpuinfo` lists):
/// the FP vector and matrix extensions.
pub const FP_FLAGS: &[&str] = &[
    "sse",
    "sse2",
    "pni",
    "ssse3",
    "sse4_1",
    "sse4_2",
    "sse4a",
    "fma4",
    "avx",
    "fma",
    "f16c",
    "avx2",
    "avx_vnni",
    "avx512f",
    "avx512dq",
    "avx512cd",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
];

/// The CPU of this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub vendor: Vendor,
    /// CPUID vendor string (`GenuineIntel`, `AuthenticAMD`).
    pub vendor_id: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    /// The brand string (`model name`).
    pub model_name: String,
    pub sockets: u32,
    /// Physical cores among the online CPUs.
    pub cores: u32,
    /// Online hardware threads.
    pub threads: u32,
    /// FP ISA extensions present and enabled by the OS (`/proc/cpuinfo` names).
    pub flags: Vec<String>,
    /// Running under a hypervisor (CPUID.1:ECX bit 31).
    pub hypervisor: bool,
    pub freq: Frequencies,
    #[serde(default)]
    pub caches: Vec<CacheLevel>,
}

impl Machine {
    /// Detects this machine. Measures the clock (about 0.3 s, once: the
    /// figure is kept between runs, see [`crate::store`]) when neither
    /// cpufreq nor CPUID reports a maximum frequency.
    pub fn detect() -> Machine {
        let mut m = Machine::identify();
        if m.freq.needs_measurement() {
            let (clock, mhz) =
                crate::store::stable_clock(&crate::store::identity(&m), freq::measure_mhz);
            m.freq.measured_mhz = Some(mhz);
            // The same words in every run that uses the kept clock.
            m.freq.measured_how = Some(format!(
                "the highest of {} measurements, taken at {} and kept for later runs",
                clock.value.len(),
                crate::store::utc(clock.measured_unix_s)
            ));
        }
        m
    }

    /// What this CPU is (vendor, family and model, flags, topology,
    /// caches), without measuring its clock.
    pub fn identify() -> Machine {
        Machine::from_sources(
            cpuid::read(),
            CpuInfo::read(),
            Path::new("/sys/devices/system/cpu"),
        )
    }

    /// Assembles a machine from what each source said; `sys` is the
    /// `/sys/devices/system/cpu` directory (or a copy of it).
    pub fn from_sources(id: Option<CpuidInfo>, info: Option<CpuInfo>, sys: &Path) -> Machine {
        let id = id.unwrap_or_default();
        let info = info.unwrap_or_default();
        let vendor_id = if id.vendor_id.is_empty() {
            info.vendor_id.clone().unwrap_or_default()
        } else {
            id.vendor_id.clone()
        };
        let have_id = !id.vendor_id.is_empty();
        let family = if have_id {
            id.family
        } else {
            info.family.unwrap_or(0)
        };
        let model = if have_id {
            id.model
        } else {
            info.model.unwrap_or(0)
        };
        let stepping = if have_id {
            id.stepping
        } else {
            info.stepping.unwrap_or(0)
        };
        let model_name = info
            .model_name
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| id.brand.clone());
        // The kernel's flags say what the OS enabled; CPUID's are the fallback.
        let flags: Vec<String> = if info.flags.is_empty() {
            id.flags.clone()
        } else {
            FP_FLAGS
                .iter()
                .filter(|f| info.flags.contains(**f))
                .map(|f| f.to_string())
                .collect()
        };
        let (sockets, cores, threads) = match sysfs::topology(sys) {
            Some(t) => (t.sockets, t.cores, t.threads),
            None => {
                let threads = info.processors.max(1);
                let sockets = info
                    .cores
                    .iter()
                    .map(|(p, _)| *p)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len() as u32;
                let cores = if info.cores.is_empty() {
                    threads
                } else {
                    info.cores.len() as u32
                };
                (sockets.max(1), cores, threads)
            }
        };
        let (sysfs_max_mhz, sysfs_base_mhz) = sysfs::cpufreq_mhz(sys);
        let freq = Frequencies {
            sysfs_max_mhz,
            sysfs_base_mhz,
            cpuid_base_mhz: id.base_mhz,
            cpuid_max_mhz: id.max_mhz,
            cpuinfo_mhz: info.mhz,
            measured_mhz: None,
            measured_how: None,
        };
        Machine {
            vendor: Vendor::from_vendor_id(&vendor_id),
            vendor_id,
            family,
            model,
            stepping,
            model_name,
            sockets,
            cores,
            threads,
            flags,
            hypervisor: id.hypervisor || info.flags.contains("hypervisor"),
            freq,
            caches: sysfs::caches(sys),
        }
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// What identifies this CPU to the microarchitecture table.
    pub fn cpu_key(&self) -> CpuKey<'_> {
        CpuKey {
            vendor: self.vendor,
            family: self.family,
            model: self.model,
            stepping: self.stepping,
            brand: &self.model_name,
            flags: &self.flags,
            hypervisor: self.hypervisor,
        }
    }

    /// The data or unified cache of `level`, if known.
    pub fn cache(&self, level: u32) -> Option<&CacheLevel> {
        self.caches.iter().find(|c| c.level == level)
    }

    /// `family 0x19 model 0x11 stepping 1`.
    pub fn signature(&self) -> String {
        format!(
            "family {:#x} model {:#x} stepping {}",
            self.family, self.model, self.stepping
        )
    }
}
