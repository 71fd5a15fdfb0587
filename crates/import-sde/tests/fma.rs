use crate::common::report;
use flopscope_model::{FpInstructionRow, OpClass, Precision};

// hsw-iform.txt (`sde -hsw -iform 1 -omix`, one thread). Every VEX FMA family:
//
//   iform                                 count  lanes  second FLOP (count x lanes)
//   VFMADD213PD_XMMdq_XMMdq_XMMdq          1000   2     2000   fp64
//   VFMADD231PD_YMMqq_YMMqq_YMMqq          3000   4    12000   fp64
//   VFMSUB213PD_YMMqq_YMMqq_MEMqq           500   4     2000   fp64
//   VFNMADD231SD_XMMdq_XMMq_XMMq            700   1      700   fp64
//   VFNMSUB132SD_XMMdq_XMMq_MEMq            300   1      300   fp64
//   VFMADDSUB231PD_YMMqq_YMMqq_YMMqq        100   4      400   fp64
//   VFMSUBADD132PD_XMMdq_XMMdq_MEMdq         50   2      100   fp64   -> fp64 17500
//   VFMADD231PS_XMMdq_XMMdq_XMMdq           400   4     1600   fp32
//   VFMADD132PS_YMMqq_YMMqq_YMMqq          2000   8    16000   fp32
//   VFNMADD213PS_YMMqq_YMMqq_MEMqq          250   8     2000   fp32
//   VFMSUB231SS_XMMdq_XMMd_XMMd             600   1      600   fp32
//   VFMADDSUB213PS_YMMqq_YMMqq_YMMqq         10   8       80   fp32
//   VFMSUBADD231PS_XMMdq_XMMdq_XMMdq         20   4       80   fp32   -> fp32 20360
//
// Elements (FMA counted once), x lanes:
//   fp64: 1940 x 1 + 1150 x 2 + 4400 x 4 = 21840;  fp32: 605 x 1 + 480 x 4 + 3460 x 8 = 30205
// FLOP: fp64 21840 + 17500 = 39340; fp32 30205 + 20360 = 50565; total 89905.
// FMA FLOP: 2 x (17500 + 20360) = 75720.
const FP64: u64 = 39_340;
const FP32: u64 = 50_565;

#[test]
fn every_vex_fma_family_width_and_precision_counts_exactly() {
    let r = report("hsw-iform.txt", None);
    let f = &r.summary.flop;
    assert_eq!(f.fp64, Some(FP64));
    assert_eq!(f.fp32, Some(FP32));
    assert_eq!(f.total, FP64 + FP32);
    assert_eq!(f.x87, None, "SDE's elements counters do not count x87");
    assert_eq!(r.summary.flop_by_op.get("fma"), Some(&75_720));
    crate::common::assert_one_truth(&r.summary);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.complete);
}

#[test]
fn fp_instructions_rows_give_each_fma_shape() {
    let r = report("hsw-iform.txt", None);
    let row = |p: Precision, width: u32| -> Option<&FpInstructionRow> {
        r.summary.fp_instructions.iter().find(|x| {
            x.precision == p && x.width_bits == width && !x.masked && x.op == OpClass::Fma
        })
    };
    // 3000 + 500 + 100 ymm double FMAs, 4 lanes, 2 FLOP each.
    let ymm_pd = row(Precision::Fp64, 256).unwrap();
    assert_eq!(
        (ymm_pd.lanes, ymm_pd.op, ymm_pd.count, ymm_pd.flop),
        (4, OpClass::Fma, 3600, 28_800)
    );
    let xmm_pd = row(Precision::Fp64, 128).unwrap();
    assert_eq!((xmm_pd.lanes, xmm_pd.count, xmm_pd.flop), (2, 1050, 4200));
    let sd = row(Precision::Fp64, 64).unwrap();
    assert_eq!((sd.lanes, sd.count, sd.flop), (1, 1000, 2000));
    let ymm_ps = row(Precision::Fp32, 256).unwrap();
    assert_eq!((ymm_ps.lanes, ymm_ps.count, ymm_ps.flop), (8, 2260, 36_160));
    let xmm_ps = row(Precision::Fp32, 128).unwrap();
    assert_eq!((xmm_ps.lanes, xmm_ps.count, xmm_ps.flop), (4, 420, 3360));
    let ss = row(Precision::Fp32, 32).unwrap();
    assert_eq!((ss.lanes, ss.count, ss.flop), (1, 600, 1200));
    let fma = r
        .summary
        .fp_instructions
        .iter()
        .filter(|x| x.op == OpClass::Fma);
    assert_eq!(fma.map(|x| x.flop).sum::<u64>(), 75_720);
}

#[test]
fn packed_double_fmas_are_not_missed() {
    // A parser that only knows the scalar and single forms would give fp64 =
    // 21840 + 700 + 300 = 22840. The packed double ones add 2000 + 12000 +
    // 2000 + 400 + 100 = 16500.
    let r = report("hsw-iform.txt", None);
    assert_eq!(r.summary.flop.fp64, Some(22_840 + 16_500));
}

#[test]
fn single_precision_fmas_get_single_precision_lanes() {
    // With double lanes (ymm 4, xmm 2) the PS forms would give
    // 400x2 + 2000x4 + 250x4 + 600 + 10x4 + 20x2 = 10480 instead of 20360.
    let r = report("hsw-iform.txt", None);
    assert_eq!(r.summary.flop.fp32, Some(30_205 + 20_360));
    assert_ne!(r.summary.flop.fp32, Some(30_205 + 10_480));
}

#[test]
fn fp_elements_are_the_counters_as_printed() {
    let r = report("hsw-iform.txt", None);
    let e = &r.summary.fp_elements;
    assert_eq!(e.len(), 6, "{e:?}");
    assert_eq!(e["elements_fp_double_1"], 1940);
    assert_eq!(e["elements_fp_double_2"], 1150);
    assert_eq!(e["elements_fp_double_4"], 4400);
    assert_eq!(e["elements_fp_single_1"], 605);
    assert_eq!(e["elements_fp_single_4"], 480);
    assert_eq!(e["elements_fp_single_8"], 3460);
    assert_eq!(r.summary.instructions, Some(50_005));
}

#[test]
fn per_function_tables_are_not_added_in() {
    // hsw-iform.txt repeats every FP row in its per-function section (kernel):
    // the totals are the global section's, once.
    let r = report("hsw-iform.txt", None);
    assert_eq!(r.summary.flop.total, FP64 + FP32);
    assert_eq!(r.functions[0].summary.flop.total, FP64 + FP32);
}

#[test]
fn flop_by_width_adds_up_to_the_total() {
    // Elements of n lanes are n x element bits wide; each FMA form adds its second FLOP at its width.
    //   fp64.scalar 1940 + 700 + 300             =  2940
    //   fp64.128    1150 x 2 + 2000 + 100        =  4400
    //   fp64.256    4400 x 4 + 12000 + 2000 + 400 = 32000
    //   fp32.scalar 605 + 600                    =  1205
    //   fp32.128    480 x 4 + 1600 + 80          =  3600
    //   fp32.256    3460 x 8 + 16000 + 2000 + 80 = 45760
    let r = report("hsw-iform.txt", None);
    let w: Vec<(&str, u64)> = r
        .summary
        .flop_by_width
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        w,
        [
            ("fp32.128", 3600),
            ("fp32.256", 45_760),
            ("fp32.scalar", 1205),
            ("fp64.128", 4400),
            ("fp64.256", 32_000),
            ("fp64.scalar", 2940)
        ]
    );
    assert_eq!(
        r.summary.flop_by_width.values().sum::<u64>(),
        r.summary.flop.total
    );
}
