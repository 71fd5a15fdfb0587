use flopscope_machine::{theoretical_peak, Isa, Machine, Overrides, Vendor};
use flopscope_model::Precision;

/// The project's machines are AMD EPYC guests with AVX-512; elsewhere the
/// checks that need that say why they are skipped.
fn is_the_project_machine(m: &Machine) -> bool {
    m.vendor == Vendor::Amd && m.has_flag("avx512f")
}

#[test]
fn detects_this_machine() {
    let m = Machine::detect();
    assert!(
        m.cores >= 1 && m.threads >= m.cores && m.sockets >= 1,
        "{m:?}"
    );
    assert!(m.has_flag("sse2"), "{:?}", m.flags);
    assert!(!m.model_name.is_empty());
    assert!(
        m.freq.best().0.is_some(),
        "no frequency at all: {:?}",
        m.freq
    );
    assert!(!m.caches.is_empty(), "no caches in sysfs");
    let p = theoretical_peak(&m, &Overrides::default());
    assert!(p.best(Precision::Fp64).is_some(), "{p:?}");
    if !is_the_project_machine(&m) {
        eprintln!(
            "skipping the AMD AVX-512 checks: this is {} {}",
            m.vendor_id, m.model_name
        );
        return;
    }
    assert_eq!(m.vendor_id, "AuthenticAMD");
    assert!(
        m.has_flag("avx2") && m.has_flag("fma") && m.has_flag("avx512f"),
        "{:?}",
        m.flags
    );
    assert_eq!(p.best(Precision::Fp64).unwrap().isa, Isa::Avx512);
    let u = p.uarch.as_ref().unwrap();
    assert!(!u.generic, "no table entry for {}", m.signature());
}

#[test]
fn a_guest_without_cpufreq_gets_a_measured_clock() {
    let m = Machine::detect();
    if m.freq.sysfs_max_mhz.is_some() || m.freq.cpuid_max_mhz.is_some() {
        eprintln!("this machine reports its maximum clock: nothing to measure");
        return;
    }
    let mhz = m.freq.measured_mhz.expect("measured when unreported");
    assert!((500.0..7000.0).contains(&mhz), "{mhz}");
}
