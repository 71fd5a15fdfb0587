use crate::common::{counts, set};
use flopscope_engine_perf::{report_from_counts, CounterValues, Num, Reading};

/// The expected numbers below are worked out by hand from the multipliers of
/// shared/reference/pmu-events.md.

#[test]
fn skylake_x_double_and_single() {
    let skx = set("skx");
    let c = counts(
        skx,
        &[
            ("FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE", 1000), // x4 = 4000
            ("FP_ARITH_INST_RETIRED.SCALAR_DOUBLE", 7),         // x1 = 7
            ("FP_ARITH_INST_RETIRED.512B_PACKED_SINGLE", 10),   // x16 = 160
            ("INSTRUCTIONS", 50_000),
        ],
    );
    let r = report_from_counts(skx, &c);
    assert_eq!(r.summary.flop.fp64, Some(4007));
    assert_eq!(r.summary.flop.fp32, Some(160));
    assert_eq!(r.summary.flop.total, 4167);
    assert_eq!(
        (r.summary.flop.fp16, r.summary.flop.bf16, r.summary.flop.x87),
        (None, None, None)
    );
    assert_eq!(r.summary.instructions, Some(50_000));
    assert!(r.complete);
    assert_eq!(r.engine, "perf");
    assert!(
        r.summary.bytes.is_none()
            && r.summary.fp_instructions.is_empty()
            && r.summary.fp_elements.is_empty()
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("masks are ignored")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.summary.flop_by_width["fp64.256"], 4000);
    assert_eq!(r.summary.flop_by_width["fp64.scalar"], 7);
    assert_eq!(r.summary.flop_by_width["fp32.512"], 160);
}

#[test]
fn sandy_bridge_overcounts_and_says_so() {
    let snb = set("snb");
    let c = counts(
        snb,
        &[
            ("SIMD_FP_256.PACKED_DOUBLE", 100),       // x4 = 400
            ("FP_COMP_OPS_EXE.SSE_SCALAR_DOUBLE", 3), // x1 = 3
            ("FP_COMP_OPS_EXE.SSE_PACKED_SINGLE", 5), // x4 = 20
            ("SIMD_FP_256.PACKED_SINGLE", 2),         // x8 = 16
        ],
    );
    let r = report_from_counts(snb, &c);
    assert_eq!(
        (
            r.summary.flop.fp64,
            r.summary.flop.fp32,
            r.summary.flop.total
        ),
        (Some(403), Some(36), 439)
    );
    assert!(r.warnings.iter().any(|w| w.contains("overcounted")));
}

#[test]
fn haswell_is_an_approximate_total() {
    let hsw = set("hsw");
    // 250 256-bit arithmetic instructions, taken as double: x4 = 1000.
    let r = report_from_counts(
        hsw,
        &counts(hsw, &[("AVX_INSTS.CALC", 250), ("AVX_INSTS.ALL", 400)]),
    );
    assert_eq!(r.summary.flop.total, 1000);
    assert_eq!((r.summary.flop.fp64, r.summary.flop.fp32), (None, None));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("avx256_all_instructions 400")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn sapphire_rapids_half_precision() {
    let spr = set("spr");
    let c = counts(
        spr,
        &[
            ("FP_ARITH_INST_RETIRED2.512B_PACKED_HALF", 2), // x32 = 64
            ("FP_ARITH_INST_RETIRED2.COMPLEX_SCALAR_HALF", 3), // x2 = 6
            ("FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE", 5), // x2 = 10
        ],
    );
    let r = report_from_counts(spr, &c);
    assert_eq!(
        (
            r.summary.flop.fp16,
            r.summary.flop.fp64,
            r.summary.flop.fp32
        ),
        (Some(70), Some(10), Some(0))
    );
    assert_eq!(r.summary.flop.total, 80);
}

#[test]
fn alder_lake_warns_about_uncounted_e_core_work() {
    let adl = set("adl");
    let c = counts(
        adl,
        &[
            ("FP_ARITH_INST_RETIRED.256B_PACKED_SINGLE", 10),
            ("INSTRUCTIONS.CORE", 900),
            ("INSTRUCTIONS.ATOM", 5),
        ],
    );
    let r = report_from_counts(adl, &c);
    assert_eq!((r.summary.flop.fp32, r.summary.flop.total), (Some(80), 80));
    assert_eq!(r.summary.instructions, Some(905));
    assert!(!r.complete, "FLOP on E-cores were missed");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("5 instructions ran on E-cores")),
        "{:?}",
        r.warnings
    );
    // All on P-cores: complete.
    let r = report_from_counts(adl, &counts(adl, &[("INSTRUCTIONS.CORE", 900)]));
    assert!(r.complete);
}

#[test]
fn meteor_lake_adds_e_core_flop() {
    let mtl = set("mtl");
    // P-cores: 10 x 256-bit double = 40; E-cores: FP_FLOPS_RETIRED counts FLOP, 100.
    let c = counts(
        mtl,
        &[
            ("FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE", 10),
            ("FP_FLOPS_RETIRED.FP64", 100),
        ],
    );
    let r = report_from_counts(mtl, &c);
    assert_eq!(
        (r.summary.flop.fp64, r.summary.flop.total),
        (Some(140), 140)
    );
    // A hybrid counter that never ran (the program stayed on P-cores) counts 0, not unknown.
    let mut c = counts(mtl, &[("FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE", 10)]);
    let never = Reading {
        value: 0,
        time_enabled: 5_000,
        time_running: 0,
        zero_when_not_run: true,
    };
    c.readings
        .insert("FP_FLOPS_RETIRED.FP64".into(), vec![never]);
    let r = report_from_counts(mtl, &c);
    assert_eq!((r.summary.flop.fp64, r.complete), (Some(40), true));
}

#[test]
fn knights_landing_weighs_packed_uops_by_eight() {
    let knl = set("knl");
    let r = report_from_counts(
        knl,
        &counts(
            knl,
            &[
                ("UOPS_RETIRED.PACKED_SIMD", 10),
                ("UOPS_RETIRED.SCALAR_SIMD", 3),
            ],
        ),
    );
    assert_eq!(r.summary.flop.total, 83); // 10 x 8 + 3
    assert_eq!(r.summary.flop.fp64, None);
}

#[test]
fn zen_families() {
    let zen1 = set("zen1");
    let r = report_from_counts(
        zen1,
        &counts(
            zen1,
            &[("FpRetSseAvxOps.SP", 100), ("FpRetSseAvxOps.DP", 50)],
        ),
    );
    assert_eq!(
        (
            r.summary.flop.fp32,
            r.summary.flop.fp64,
            r.summary.flop.total
        ),
        (Some(100), Some(50), 150)
    );

    // Zen 2: the total only; no precision, and the JSON has no fp64/fp32 keys.
    let zen2 = set("zen2");
    let r = report_from_counts(zen2, &counts(zen2, &[("FpRetSseAvxOps.ALL", 12345)]));
    assert_eq!(r.summary.flop.total, 12345);
    assert_eq!((r.summary.flop.fp64, r.summary.flop.fp32), (None, None));
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["flop"], serde_json::json!({ "total": 12345 }));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("cannot split single from double")));
    assert!(r.warnings.iter().any(|w| w.contains("merge event")));

    let zen4 = set("zen4");
    let r = report_from_counts(
        zen4,
        &counts(
            zen4,
            &[
                ("FpRetSseAvxOps.ALL", 1000),
                ("FpRetSseAvxOps.BF16_MAC", 40),
            ],
        ),
    );
    assert_eq!(
        (
            r.summary.flop.total,
            r.summary.flop.bf16,
            r.summary.flop.fp64
        ),
        (1000, Some(40), None)
    );

    let zen5 = set("zen5");
    let c = counts(
        zen5,
        &[
            ("FpRetSseAvxOps.SP_SCALAR", 1),
            ("FpRetSseAvxOps.SP_PACKED", 2),
            ("FpRetSseAvxOps.DP_SCALAR", 3),
            ("FpRetSseAvxOps.DP_PACKED", 4),
            ("FpRetSseAvxOps.BF16", 5),
        ],
    );
    let r = report_from_counts(zen5, &c);
    assert_eq!(
        (
            r.summary.flop.fp32,
            r.summary.flop.fp64,
            r.summary.flop.bf16,
            r.summary.flop.total
        ),
        (Some(3), Some(7), Some(5), 15)
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("unverified:") && w.contains("#767")));
}

#[test]
fn arm_scales_sve_counts_by_vector_length() {
    let v1 = set("neoverse-v1");
    let mut c = counts(v1, &[("FP_SCALE_OPS_SPEC", 100), ("FP_FIXED_OPS_SPEC", 7)]);
    assert_eq!(report_from_counts(v1, &c).summary.flop.total, 207); // 100 x 256/128 + 7
    c.constants.insert("VL".into(), Num::Exact(512));
    assert_eq!(report_from_counts(v1, &c).summary.flop.total, 407); // the measured VL wins

    let v2 = set("neoverse-v2");
    let r = report_from_counts(
        v2,
        &counts(
            v2,
            &[
                ("FP_SCALE_OPS_SPEC", 10),
                ("FP_FIXED_OPS_SPEC", 1),
                ("FP_DP_SPEC", 9),
            ],
        ),
    );
    assert_eq!((r.summary.flop.total, r.summary.flop.fp64), (11, None)); // VL 128: x1
    assert!(r.warnings.iter().any(|w| w.contains("fp64_operations 9")));
}

#[test]
fn a64fx_flop_and_dram_from_l2() {
    let a = set("a64fx");
    let mut c = counts(
        a,
        &[
            ("FP_DP_SCALE_OPS_SPEC", 10), // x 512/128 = 40
            ("FP_DP_FIXED_OPS_SPEC", 2),
            ("FP_SP_FIXED_OPS_SPEC", 5),
        ],
    );
    for (e, v) in [
        ("L2D_CACHE_REFILL", 100),
        ("L2D_SWAP_DM", 10),
        ("L2D_CACHE_MIBMCH_PRF", 5),
        ("L2D_CACHE_WB", 20),
    ] {
        c.add(e, Reading::exact(v));
    }
    c.dram_source = Some("a64fx-l2".into());
    let r = report_from_counts(a, &c);
    assert_eq!(
        (
            r.summary.flop.fp64,
            r.summary.flop.fp32,
            r.summary.flop.total
        ),
        (Some(42), Some(5), 47)
    );
    // read (100 - 10 - 5) x 256 = 21760, write 20 x 256 = 5120.
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("read 21760 bytes") && w.contains("write 5120 bytes")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.arithmetic_intensity.dram, Some(47.0 / 26880.0));
    assert_eq!(
        r.dram_bytes,
        Some(flopscope_model::ByteTotals {
            read: 21760,
            written: 5120
        })
    );
    assert_eq!(r.arithmetic_intensity.l1, None);
}

#[test]
fn dram_bytes_from_two_controllers_and_the_sysfs_scale() {
    let skx = set("skx");
    let mut c = counts(skx, &[("FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE", 1400)]); // x8 = 11200
    c.add("UNC_M_CAS_COUNT.RD", Reading::exact(1000))
        .add("UNC_M_CAS_COUNT.RD", Reading::exact(500));
    c.add("UNC_M_CAS_COUNT.WR", Reading::exact(250));
    c.dram_source = Some("intel-imc-snbep".into());
    // As sysfs' 6.103515625e-5 MiB says: 64 bytes per CAS.
    c.scales.insert("UNC_M_CAS_COUNT.RD".into(), Num::Exact(64));
    let r = report_from_counts(skx, &c);
    // read 1500 x 64 = 96000, write 250 x 64 = 16000; AI = 11200 / 112000 = 0.1.
    assert_eq!(r.arithmetic_intensity.dram, Some(0.1));
    assert_eq!(
        r.dram_bytes,
        Some(flopscope_model::ByteTotals {
            read: 96000,
            written: 16000
        })
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("read 96000 bytes, write 16000 bytes")),
        "{:?}",
        r.warnings
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("every core's traffic")));
}

#[test]
fn multiplexed_counts_are_scaled_and_marked() {
    let skx = set("skx");
    let mut c = counts(skx, &[("FP_ARITH_INST_RETIRED.SCALAR_DOUBLE", 7)]);
    // On the counter half the time: 1000 counted -> 2000 estimated -> x4 = 8000 FLOP.
    c.readings.insert(
        "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE".into(),
        vec![Reading::timed(1000, 2_000_000, 1_000_000)],
    );
    let r = report_from_counts(skx, &c);
    assert_eq!(r.summary.flop.fp64, Some(8007));
    assert!(r.complete);
    assert!(
        r.warnings.iter().any(|w| w
            .starts_with("estimated: FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE")
            && w.contains("50.0%")),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("fp64.256 8000 (estimated)")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn a_counter_that_never_ran_is_unknown_not_zero() {
    let skx = set("skx");
    let mut c = counts(skx, &[("FP_ARITH_INST_RETIRED.SCALAR_SINGLE", 9)]);
    c.readings.insert(
        "FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE".into(),
        vec![Reading::timed(0, 1_000, 0)],
    );
    let r = report_from_counts(skx, &c);
    assert_eq!((r.summary.flop.fp64, r.summary.flop.fp32), (None, Some(9)));
    assert_eq!(r.summary.flop.total, 0);
    assert!(!r.complete);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("unknown: FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE")));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("FLOP total is unknown")));
    // No reading at all is the same.
    let r = report_from_counts(skx, &CounterValues::default());
    assert!(!r.complete && r.summary.flop.fp64.is_none());
}

#[test]
fn huge_counts_stay_exact() {
    let skx = set("skx");
    let n = (1u64 << 58) + 3; // x8 = 2^61 + 24, beyond f64's 53-bit mantissa
    let r = report_from_counts(
        skx,
        &counts(skx, &[("FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE", n)]),
    );
    assert_eq!(r.summary.flop.fp64, Some((1u64 << 61) + 24));
}
