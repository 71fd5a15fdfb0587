//! What the CPUID instruction says: vendor, family/model/stepping, brand,
//! hypervisor bit, the frequencies of leaf 0x16 and the FP ISA flags.

/// The CPUID facts flopscope uses. Flag names follow `/proc/cpuinfo`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuidInfo {
    pub vendor_id: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub brand: String,
    /// CPUID.1:ECX bit 31, set by hypervisors.
    pub hypervisor: bool,
    /// Leaf 0x16 base and maximum frequency (Intel since Skylake; 0 means unreported).
    pub base_mhz: Option<f64>,
    pub max_mhz: Option<f64>,
    pub flags: Vec<String>,
}

/// Display family and model from CPUID.1:EAX, with the extended fields added
/// as the Intel SDM (vol. 2A, CPUID, "Processor Version Information") and
/// AMD's CPUID specification define them.
pub fn family_model_stepping(eax: u32) -> (u32, u32, u32) {
    let stepping = eax & 0xf;
    let base_model = (eax >> 4) & 0xf;
    let base_family = (eax >> 8) & 0xf;
    let ext_model = (eax >> 16) & 0xf;
    let ext_family = (eax >> 20) & 0xff;
    let family = if base_family == 0xf {
        base_family + ext_family
    } else {
        base_family
    };
    let model = if base_family == 0x6 || base_family == 0xf {
        (ext_model << 4) | base_model
    } else {
        base_model
    };
    (family, model, stepping)
}

#[cfg(target_arch = "x86_64")]
pub fn read() -> Option<CpuidInfo> {
    use std::arch::x86_64::{__cpuid_count, _xgetbv};
    // SAFETY: CPUID exists on every x86-64 CPU (the intrinsic is safe from Rust 1.87 on).
    #[allow(unused_unsafe)]
    let leaf = |l: u32, s: u32| unsafe { __cpuid_count(l, s) };
    let l0 = leaf(0, 0);
    let max_leaf = l0.eax;
    let mut vendor = Vec::with_capacity(12);
    for r in [l0.ebx, l0.edx, l0.ecx] {
        vendor.extend_from_slice(&r.to_le_bytes());
    }
    let vendor_id = String::from_utf8_lossy(&vendor).into_owned();
    let l1 = leaf(1, 0);
    let (family, model, stepping) = family_model_stepping(l1.eax);
    let bit = |r: u32, b: u32| r & (1 << b) != 0;
    let osxsave = bit(l1.ecx, 27);
    // XCR0: the OS saves XMM|YMM (bits 1,2) and opmask|ZMM (bits 5,6,7).
    // SAFETY: XGETBV is available when CPUID reports OSXSAVE.
    let xcr0 = if osxsave { unsafe { _xgetbv(0) } } else { 0 };
    let os_avx = xcr0 & 0b110 == 0b110;
    let os_avx512 = os_avx && xcr0 & 0b1110_0000 == 0b1110_0000;
    let zero = std::arch::x86_64::CpuidResult {
        eax: 0,
        ebx: 0,
        ecx: 0,
        edx: 0,
    };
    let l7 = if max_leaf >= 7 { leaf(7, 0) } else { zero };
    let l7_1 = if max_leaf >= 7 && l7.eax >= 1 {
        leaf(7, 1)
    } else {
        zero
    };
    let mut flags = Vec::new();
    let mut add = |name: &str, on: bool| {
        if on {
            flags.push(name.to_string());
        }
    };
    add("sse", bit(l1.edx, 25));
    add("sse2", bit(l1.edx, 26));
    add("pni", bit(l1.ecx, 0));
    add("ssse3", bit(l1.ecx, 9));
    add("sse4_1", bit(l1.ecx, 19));
    add("sse4_2", bit(l1.ecx, 20));
    add("avx", os_avx && bit(l1.ecx, 28));
    add("fma", os_avx && bit(l1.ecx, 12));
    add("f16c", os_avx && bit(l1.ecx, 29));
    add("avx2", os_avx && bit(l7.ebx, 5));
    add("avx512f", os_avx512 && bit(l7.ebx, 16));
    add("avx512dq", os_avx512 && bit(l7.ebx, 17));
    add("avx512ifma", os_avx512 && bit(l7.ebx, 21));
    add("avx512cd", os_avx512 && bit(l7.ebx, 28));
    add("avx512bw", os_avx512 && bit(l7.ebx, 30));
    add("avx512vl", os_avx512 && bit(l7.ebx, 31));
    add("avx512_vnni", os_avx512 && bit(l7.ecx, 11));
    add("avx512_fp16", os_avx512 && bit(l7.edx, 23));
    add("amx_bf16", bit(l7.edx, 22));
    add("amx_tile", bit(l7.edx, 24));
    add("amx_int8", bit(l7.edx, 25));
    add("avx_vnni", os_avx && bit(l7_1.eax, 4));
    add("avx512_bf16", os_avx512 && bit(l7_1.eax, 5));
    add("amx_fp16", bit(l7_1.eax, 21));
    let (base_mhz, max_mhz) = if max_leaf >= 0x16 {
        let l = leaf(0x16, 0);
        let mhz = |v: u32| (v & 0xffff != 0).then_some((v & 0xffff) as f64);
        (mhz(l.eax), mhz(l.ebx))
    } else {
        (None, None)
    };
    let max_ext = leaf(0x8000_0000, 0).eax;
    let brand = if max_ext >= 0x8000_0004 {
        let mut b = Vec::with_capacity(48);
        for l in 0x8000_0002..=0x8000_0004u32 {
            let r = leaf(l, 0);
            for v in [r.eax, r.ebx, r.ecx, r.edx] {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        String::from_utf8_lossy(&b)
            .trim_matches(char::from(0))
            .trim()
            .to_string()
    } else {
        String::new()
    };
    Some(CpuidInfo {
        vendor_id,
        family,
        model,
        stepping,
        brand,
        hypervisor: bit(l1.ecx, 31),
        base_mhz,
        max_mhz,
        flags,
    })
}

#[cfg(not(target_arch = "x86_64"))]
pub fn read() -> Option<CpuidInfo> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_family_and_model_are_added() {
        // AMD EPYC 9004 (Genoa): family 0x19 model 0x11 stepping 1.
        assert_eq!(family_model_stepping(0x00A1_0F11), (0x19, 0x11, 1));
        // Intel Xeon Skylake-SP: family 6 model 0x55 stepping 4.
        assert_eq!(family_model_stepping(0x0005_0654), (6, 0x55, 4));
        // AMD Zen 5 (Turin): family 0x1A model 0x02.
        assert_eq!(family_model_stepping(0x00B0_0F20), (0x1a, 0x02, 0));
    }
}
