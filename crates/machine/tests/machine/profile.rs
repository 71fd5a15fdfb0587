use crate::{machine, AVX512};
use flopscope_machine::{
    theoretical_peak, BandwidthMeasurement, FlopsMeasurement, Isa, MachineError, MachineProfile,
    Overrides, Spread, Vendor,
};
use flopscope_model::Precision;

fn profile() -> MachineProfile {
    let m = machine(Vendor::Amd, 0x19, 0x11, 1, "AMD EPYC", AVX512, 2);
    let t = theoretical_peak(
        &m,
        &Overrides {
            freq_ghz: Some(2.5),
            ..Default::default()
        },
    );
    MachineProfile::new(m, t, vec!["flopscope".into(), "bench".into()])
}

fn flops(isa: Isa, p: Precision, threads: u32, median: f64) -> FlopsMeasurement {
    FlopsMeasurement {
        kernel: format!("peak_{}_{}", isa.key(), p.key()),
        isa,
        precision: p,
        threads,
        gflops: Spread {
            min: median - 1.0,
            median,
            max: median + 1.0,
        },
        percent_of_theoretical: None,
    }
}

#[test]
fn spread_of_samples() {
    assert_eq!(
        Spread::of(&[3.0, 1.0, 2.0]),
        Spread {
            min: 1.0,
            median: 2.0,
            max: 3.0
        }
    );
    assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
    assert_eq!(Spread::of(&[]), Spread::default());
}

#[test]
fn round_trips_through_a_file() {
    let mut p = profile();
    p.flops.push(flops(Isa::Avx512, Precision::Fp64, 2, 70.0));
    p.bandwidth.push(BandwidthMeasurement {
        kernel: "triad".into(),
        isa: Isa::Avx512,
        level: "DRAM".into(),
        working_set_bytes: 1 << 30,
        threads: 2,
        nontemporal: true,
        gbs: Spread {
            min: 20.0,
            median: 21.0,
            max: 22.0,
        },
    });
    let dir =
        std::env::temp_dir().join(format!("flopscope-machine-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("machine.json");
    p.save(&f).unwrap();
    assert_eq!(MachineProfile::load(&f).unwrap(), p);
    std::fs::write(&f, "{\"schema\": \"flopscope.report/1\"}").unwrap();
    assert!(matches!(
        MachineProfile::load(&f),
        Err(MachineError::ProfileSchema { .. })
    ));
    std::fs::write(&f, "not json").unwrap();
    let e = MachineProfile::load(&f).unwrap_err().to_string();
    assert!(
        e.contains("is not a flopscope machine profile") && e.contains("bench --save"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn peak_ref_is_the_best_all_core_median() {
    let mut p = profile();
    // Theoretical when nothing was measured.
    let t = p.peak_ref();
    assert_eq!((t.gflops_fp64, t.source.as_str()), (80.0, "theoretical"));
    p.flops.push(flops(Isa::Avx512, Precision::Fp64, 1, 39.0));
    p.flops.push(flops(Isa::Avx512, Precision::Fp64, 2, 76.0));
    p.flops.push(flops(Isa::Avx, Precision::Fp64, 2, 78.0));
    p.flops.push(flops(Isa::Avx512, Precision::Fp32, 2, 150.0));
    let r = p.peak_ref();
    assert_eq!(
        (r.gflops_fp64, r.gflops_fp32, r.source.as_str()),
        (78.0, 150.0, "measured")
    );
    assert!(
        r.assumptions[0].contains("AVX/AVX2 kernel peak_avx_fp64 on 2 pinned threads"),
        "{:?}",
        r.assumptions
    );
}

#[test]
fn ceilings_for_the_roofline() {
    let mut p = profile();
    let theoretical = p.ceilings();
    assert!(theoretical.compute.iter().all(|c| !c.measured));
    assert!(theoretical.bandwidth.is_empty());
    p.flops.push(flops(Isa::Avx512, Precision::Fp64, 1, 39.0));
    p.flops.push(flops(Isa::Avx512, Precision::Fp64, 2, 76.0));
    p.bandwidth.push(BandwidthMeasurement {
        kernel: "triad".into(),
        isa: Isa::Avx512,
        level: "DRAM".into(),
        working_set_bytes: 1 << 30,
        threads: 2,
        nontemporal: true,
        gbs: Spread {
            min: 20.0,
            median: 21.0,
            max: 22.0,
        },
    });
    let c = p.ceilings();
    let best = c.best_compute("fp64").unwrap();
    assert_eq!(
        (best.gflops, best.measured, best.width_bits),
        (76.0, true, 512)
    );
    assert_eq!(c.bandwidth.len(), 1);
    assert_eq!(
        (c.bandwidth[0].level.as_str(), c.bandwidth[0].gbytes_per_s),
        ("DRAM", 21.0)
    );
    // The theoretical roofs stay beside the measured ones.
    let t = c
        .compute
        .iter()
        .find(|x| x.name == "fp64 AVX-512, theoretical")
        .unwrap();
    assert_eq!(t.gflops, 16.0 * 2.5 * 2.0);
    assert!(c.machine.starts_with("AMD EPYC: Zen 4"), "{}", c.machine);
}
