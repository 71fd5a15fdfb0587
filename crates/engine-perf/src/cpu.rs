//! Which CPU this is: vendor, family, model, stepping, the keys of the event tables.

use std::fmt;

/// A CPU model as the event tables match it.
///
/// x86: `vendor` is the CPUID vendor string (`GenuineIntel`, `AuthenticAMD`,
/// `HygonGenuine`), `family`/`model` the display family and model (extended
/// fields folded in, as /proc/cpuinfo prints them). Arm: `vendor` names the
/// implementer (`ARM` for 0x41, `Fujitsu` for 0x46, else `arm-0xNN`), `family`
/// is the architecture (8) and `model` the part number (0xd40 for Neoverse V1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuId {
    pub vendor: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    /// The marketing name, when known (for messages only).
    pub model_name: Option<String>,
}

impl fmt::Display for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} family {:#x} model {:#x} stepping {}",
            self.vendor, self.family, self.model, self.stepping
        )?;
        if let Some(name) = &self.model_name {
            write!(f, " \"{name}\"")?;
        }
        Ok(())
    }
}

/// The CPU this process runs on: CPUID on x86-64, /proc/cpuinfo elsewhere.
pub fn detect_cpu() -> CpuId {
    let from_info = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| CpuId::from_cpuinfo(&t));
    #[cfg(target_arch = "x86_64")]
    {
        let mut id = cpuid_x86();
        id.model_name = from_info.and_then(|i| i.model_name);
        id
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        from_info.unwrap_or(CpuId {
            vendor: "unknown".into(),
            family: 0,
            model: 0,
            stepping: 0,
            model_name: None,
        })
    }
}

#[cfg(target_arch = "x86_64")]
fn cpuid_x86() -> CpuId {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID leaves 0 and 1 exist on every x86-64 processor (the intrinsic is
    // only `unsafe` before Rust 1.87, hence the allow).
    #[allow(unused_unsafe)]
    let (l0, l1) = unsafe { (__cpuid(0), __cpuid(1)) };
    let mut vendor = Vec::with_capacity(12);
    for r in [l0.ebx, l0.edx, l0.ecx] {
        vendor.extend_from_slice(&r.to_le_bytes());
    }
    // Intel SDM Vol. 2A, CPUID leaf 01H: display family/model fold in the extended fields.
    let base_family = (l1.eax >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((l1.eax >> 20) & 0xff)
    } else {
        base_family
    };
    let base_model = (l1.eax >> 4) & 0xf;
    let model = if base_family == 0x6 || base_family == 0xf {
        base_model | (((l1.eax >> 16) & 0xf) << 4)
    } else {
        base_model
    };
    CpuId {
        vendor: String::from_utf8_lossy(&vendor).into_owned(),
        family,
        model,
        stepping: l1.eax & 0xf,
        model_name: None,
    }
}

fn arm_vendor(implementer: u32) -> String {
    match implementer {
        0x41 => "ARM".into(),
        0x46 => "Fujitsu".into(),
        other => format!("arm-{other:#x}"),
    }
}

fn number(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

impl CpuId {
    /// Parses the first processor of a /proc/cpuinfo text (x86 or Arm).
    pub fn from_cpuinfo(text: &str) -> Option<CpuId> {
        let block = text.split("\n\n").find(|b| !b.trim().is_empty())?;
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        if let Some(vendor) = field("vendor_id") {
            return Some(CpuId {
                vendor,
                family: number(&field("cpu family")?)?,
                model: number(&field("model")?)?,
                stepping: field("stepping").and_then(|s| number(&s)).unwrap_or(0),
                model_name: field("model name"),
            });
        }
        let implementer = number(&field("CPU implementer")?)?;
        Some(CpuId {
            vendor: arm_vendor(implementer),
            family: field("CPU architecture")
                .and_then(|s| number(&s))
                .unwrap_or(8),
            model: number(&field("CPU part")?)?,
            stepping: field("CPU revision").and_then(|s| number(&s)).unwrap_or(0),
            model_name: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_x86_and_arm_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n\nprocessor\t: 1\n";
        let id = CpuId::from_cpuinfo(x86).unwrap();
        assert_eq!(
            (id.vendor.as_str(), id.family, id.model, id.stepping),
            ("AuthenticAMD", 0x19, 0x11, 1)
        );
        let arm = "processor\t: 0\nBogoMIPS\t: 2100.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 1\n";
        let id = CpuId::from_cpuinfo(arm).unwrap();
        assert_eq!((id.vendor.as_str(), id.family, id.model), ("ARM", 8, 0xd4f));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpuid_agrees_with_proc_cpuinfo() {
        let info = CpuId::from_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").unwrap()).unwrap();
        let id = detect_cpu();
        assert_eq!(
            (id.vendor, id.family, id.model, id.stepping),
            (info.vendor, info.family, info.model, info.stepping)
        );
    }
}
