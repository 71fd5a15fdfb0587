use crate::{machine, AVX2, AVX512};
use flopscope_machine::{peak_ref, theoretical_peak, FreqSource, Isa, Overrides, Vendor};
use flopscope_model::Precision;

fn at(ghz: f64) -> Overrides {
    Overrides {
        freq_ghz: Some(ghz),
        ..Default::default()
    }
}

#[test]
fn zen4_two_cores_at_2_5_ghz() {
    let mut flags = AVX512.to_vec();
    flags.push("avx512_bf16");
    let m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", &flags, 2);
    let p = theoretical_peak(&m, &at(2.5));
    assert_eq!(p.freq_source, FreqSource::Override);
    // By hand: FLOP/cycle x 2.5 GHz per core, x 2 cores.
    let expect = [
        (Isa::Scalar, Precision::Fp64, 4, 10.0, 20.0),
        (Isa::Scalar, Precision::Fp32, 4, 10.0, 20.0),
        (Isa::Sse, Precision::Fp64, 8, 20.0, 40.0),
        (Isa::Sse, Precision::Fp32, 16, 40.0, 80.0),
        (Isa::Avx, Precision::Fp64, 16, 40.0, 80.0),
        (Isa::Avx, Precision::Fp32, 32, 80.0, 160.0),
        (Isa::Avx512, Precision::Fp64, 16, 40.0, 80.0),
        (Isa::Avx512, Precision::Fp32, 32, 80.0, 160.0),
        (Isa::Avx512, Precision::Bf16, 64, 160.0, 320.0),
    ];
    assert_eq!(p.rows.len(), expect.len(), "{:?}", p.rows);
    for (isa, prec, fpc, core, all) in expect {
        let r = p
            .row(isa, prec)
            .unwrap_or_else(|| panic!("{isa:?} {prec:?}"));
        assert_eq!(
            (r.flop_per_cycle, r.gflops_per_core, r.gflops_machine),
            (fpc, core, all),
            "{isa:?} {prec:?}"
        );
    }
    let r = peak_ref(&p);
    assert_eq!(
        (r.gflops_fp64, r.gflops_fp32, r.source.as_str()),
        (80.0, 160.0, "theoretical")
    );
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("given with --freq")),
        "{:?}",
        r.assumptions
    );
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.contains("table entry \"Zen 4\"")),
        "{:?}",
        r.assumptions
    );
}

#[test]
fn the_seed_example_sandy_bridge_xeon_e3_1275() {
    // 4 cores at 3.574 GHz: 16 SP FLOP/cycle -> 228 GFLOP/s, 8 DP -> 114.
    let m = machine(
        Vendor::Intel,
        6,
        0x2a,
        7,
        "Intel(R) Xeon(R) CPU E3-1275",
        &["sse2", "avx"],
        4,
    );
    let p = theoretical_peak(&m, &at(3.574));
    let r = peak_ref(&p);
    assert_eq!(r.gflops_fp32, 16.0 * 3.574 * 4.0);
    assert_eq!(r.gflops_fp64, 8.0 * 3.574 * 4.0);
    assert_eq!(r.gflops_fp32.round(), 229.0);
    assert_eq!(r.gflops_fp64.floor(), 114.0);
    assert!(p.row(Isa::Avx512, Precision::Fp64).is_none());
}

#[test]
fn zen5_and_sapphire_rapids_at_full_width() {
    let m = machine(Vendor::Amd, 0x1a, 0x02, 0, "AMD EPYC 9755", AVX512, 128);
    let r = peak_ref(&theoretical_peak(&m, &at(2.5)));
    assert_eq!(r.gflops_fp64, 32.0 * 2.5 * 128.0);
    let mut flags = AVX512.to_vec();
    flags.extend(["avx512_fp16", "avx512_bf16"]);
    let spr = machine(
        Vendor::Intel,
        6,
        0x8f,
        8,
        "Intel(R) Xeon(R) Platinum 8480+",
        &flags,
        56,
    );
    let p = theoretical_peak(&spr, &at(2.0));
    assert_eq!(
        p.row(Isa::Avx512, Precision::Fp16).unwrap().gflops_machine,
        128.0 * 2.0 * 56.0
    );
    // VDPBF16PS zmm (64 FLOP) one every 2 cycles.
    assert_eq!(
        p.row(Isa::Avx512, Precision::Bf16).unwrap().flop_per_cycle,
        32
    );
}

/// The peak of a hypervisor's made-up model says which entry it set aside
/// and why, and gives the figures of the one the ISA points to.
#[test]
fn a_model_set_aside_by_the_isa_is_stated() {
    let mut flags = AVX512.to_vec();
    flags.extend(["avx512_fp16", "avx512_bf16"]);
    let mut m = machine(
        Vendor::Intel,
        6,
        0xa7,
        1,
        "Intel(R) Xeon(R) Processor",
        &flags,
        2,
    );
    m.hypervisor = true;
    let p = theoretical_peak(&m, &at(4.0));
    assert_eq!(
        p.row(Isa::Avx512, Precision::Fp64).unwrap().flop_per_cycle,
        32
    );
    let line = p
        .assumptions
        .iter()
        .find(|a| a.starts_with("FLOP/cycle:"))
        .unwrap();
    assert_eq!(
        line,
        "FLOP/cycle: table entry \"Sapphire Rapids\" chosen by the ISA flags (2 x 512-bit FMA, latency 4 cycles): \
         CPUID says Intel family 0x6 model 0xa7 stepping 1, the model number of \"Rocket Lake\", whose cores never have \
         avx512_fp16, avx512_bf16; a hypervisor can report a model of its own, so the first generation in the table \
         with all of these is taken (pass --uarch if you know the host's)"
    );
}

#[test]
fn overrides_for_cores_and_uarch_are_stated() {
    let m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", AVX512, 2);
    let o = Overrides {
        freq_ghz: Some(3.0),
        cores: Some(8),
        uarch: Some("zen 5".into()),
    };
    let p = theoretical_peak(&m, &o);
    assert_eq!(
        p.row(Isa::Avx512, Precision::Fp64).unwrap().gflops_machine,
        32.0 * 3.0 * 8.0
    );
    assert!(
        p.assumptions
            .iter()
            .any(|a| a == "cores: 8, given with --cores (detected 2)"),
        "{:?}",
        p.assumptions
    );
    assert!(
        p.assumptions
            .iter()
            .any(|a| a.contains("\"Zen 5\", given with --uarch")),
        "{:?}",
        p.assumptions
    );
    let bad = theoretical_peak(
        &m,
        &Overrides {
            uarch: Some("Zen 9".into()),
            ..at(3.0)
        },
    );
    assert!(bad
        .assumptions
        .iter()
        .any(|a| a.starts_with("--uarch ignored")));
    assert_eq!(bad.uarch.unwrap().name, "Zen 4");
}

#[test]
fn isa_rows_follow_the_cpu_flags() {
    // A Zen 4 whose hypervisor hides AVX-512: no AVX-512 rows.
    let m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", AVX2, 2);
    let p = theoretical_peak(&m, &at(2.0));
    assert!(p.rows.iter().all(|r| r.isa != Isa::Avx512));
    assert_eq!(p.best(Precision::Fp64).unwrap().isa, Isa::Avx);
}

#[test]
fn frequency_sources_are_stated() {
    let mut m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", AVX512, 2);
    m.hypervisor = true;
    m.freq.cpuinfo_mhz = Some(2596.0);
    m.freq.measured_mhz = Some(3300.0);
    let p = theoretical_peak(&m, &Overrides::default());
    assert_eq!((p.freq_ghz, p.freq_source), (3.3, FreqSource::Measured));
    assert!(
        p.assumptions[0].contains("measured with a dependent-add loop")
            && p.assumptions[0].contains("TSC rate"),
        "{}",
        p.assumptions[0]
    );
    assert!(p
        .assumptions
        .iter()
        .any(|a| a.contains("under a hypervisor")));
    m.freq.sysfs_max_mhz = Some(3700.0);
    let p = theoretical_peak(&m, &Overrides::default());
    assert_eq!((p.freq_ghz, p.freq_source), (3.7, FreqSource::SysfsMax));
    assert_eq!(
        p.row(Isa::Avx, Precision::Fp64).unwrap().gflops_per_core,
        16.0 * 3.7
    );
    m.freq = Default::default();
    let p = theoretical_peak(&m, &Overrides::default());
    assert_eq!((p.freq_ghz, p.freq_source), (0.0, FreqSource::Unknown));
    assert!(p.assumptions[0].contains("pass --freq"));
}

#[test]
fn the_peak_document_round_trips_with_its_schema_first() {
    let m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", AVX512, 2);
    let p = theoretical_peak(&m, &at(2.5));
    let doc = flopscope_machine::PeakDocument::new(&m, &p);
    let json = doc.to_json();
    assert!(
        json.starts_with("{\n  \"schema\": \"flopscope.peak/1\""),
        "{json}"
    );
    let back: flopscope_machine::PeakDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back, doc);
    assert_eq!(back.peak_ref.gflops_fp64, 80.0);
}
