//! `/proc/cpuinfo`: identity, flags, `cpu MHz` and the (socket, core) pairs.

use std::collections::BTreeSet;

/// What `/proc/cpuinfo` says about the CPUs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuInfo {
    pub vendor_id: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    pub model_name: Option<String>,
    /// `cpu MHz` of the first processor: the current clock on bare metal,
    /// the TSC rate under most hypervisors.
    pub mhz: Option<f64>,
    pub flags: BTreeSet<String>,
    /// Number of `processor` blocks.
    pub processors: u32,
    /// Distinct (`physical id`, `core id`) pairs.
    pub cores: BTreeSet<(u32, u32)>,
}

impl CpuInfo {
    pub fn parse(text: &str) -> CpuInfo {
        let mut c = CpuInfo::default();
        let mut first = true;
        let (mut phys, mut core) = (None, None);
        let end_block = |c: &mut CpuInfo, phys: &mut Option<u32>, core: &mut Option<u32>| {
            if let (Some(p), Some(k)) = (phys.take(), core.take()) {
                c.cores.insert((p, k));
            }
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                if line.trim().is_empty() {
                    end_block(&mut c, &mut phys, &mut core);
                }
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "processor" => {
                    end_block(&mut c, &mut phys, &mut core);
                    c.processors += 1;
                    first = c.processors == 1;
                }
                "physical id" => phys = value.parse().ok(),
                "core id" => core = value.parse().ok(),
                _ if !first => {}
                "vendor_id" => c.vendor_id = Some(value.to_string()),
                "cpu family" => c.family = value.parse().ok(),
                "model" => c.model = value.parse().ok(),
                "stepping" => c.stepping = value.parse().ok(),
                "model name" => c.model_name = Some(value.to_string()),
                "cpu MHz" => c.mhz = value.parse().ok(),
                "flags" => c.flags = value.split_whitespace().map(str::to_string).collect(),
                _ => {}
            }
        }
        end_block(&mut c, &mut phys, &mut core);
        c
    }

    pub fn read() -> Option<CpuInfo> {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .map(|t| CpuInfo::parse(&t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_CPUS: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\
model name\t: AMD EPYC\nstepping\t: 1\ncpu MHz\t\t: 2596.142\nphysical id\t: 0\ncore id\t\t: 0\n\
flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512_bf16\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n\
cpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 1000.0\nphysical id\t: 0\ncore id\t\t: 1\n\n";

    #[test]
    fn parses_identity_flags_and_cores() {
        let c = CpuInfo::parse(TWO_CPUS);
        assert_eq!(c.vendor_id.as_deref(), Some("AuthenticAMD"));
        assert_eq!(
            (c.family, c.model, c.stepping),
            (Some(25), Some(17), Some(1))
        );
        assert_eq!(c.model_name.as_deref(), Some("AMD EPYC"));
        assert_eq!(c.mhz, Some(2596.142));
        assert!(c.flags.contains("avx512f") && c.flags.contains("avx512_bf16"));
        assert_eq!(c.processors, 2);
        assert_eq!(c.cores, [(0, 0), (0, 1)].into_iter().collect());
    }
}
