use crate::common::{fixture, report, thread};
use flopscope_import_sde::import_files;
use flopscope_model::{OpClass, Precision};

// skx-avx512-iform.txt + skx-avx512-mask.xml (`sde -skx -iform 1 -omix` and
// `-odyn_mask_profile` of one run, two threads). All EVEX FMA iforms carry
// `MASKmskw`, masked or not; the profile's per-instruction details say which
// executions ran under k1..k7 and how many lanes they computed.
//
// Global, fp64:
//   unmasked elements   double_8 4000 x 8 + double_4 400 x 4          = 33600
//   masked rows         (512b 64b fp) 3300 + 2500 + (128b 64b fp) 30  =  5830
//   second FMA FLOP     VEX  VFMADD231PD_YMMqq 300 x 4                =  1200
//                       EVEX zmm pd: 3000 + 200 = 3200 executions, of which
//                            900 masked (400 + 500) computing 1800 + 2500 lanes:
//                            (3200 - 900) x 8 + 4300                  = 22700
//                       EVEX ymm pd VFNMADD231PD 100 x 4 (none masked) =   400
//                       EVEX sd 50, all masked, 30 lanes              =    30
//   fp64 = 33600 + 5830 + 24330 = 63760
// Global, fp32: elements single_16 400 x 16 = 6400; masked row 1000;
//   FMA zmm ps 500, 100 masked computing 1000 lanes: 400 x 16 + 1000 = 7400
//   fp32 = 6400 + 1000 + 7400 = 14800
// total 78560; FMA FLOP 2 x (24330 + 7400) = 63460.
//
// The same as a program would count it: zmm pd FMA unmasked 600+200+1500
// executions x 8 x 2 = 36800, masked (1800+2500) x 2 = 8600; vmulpd 700 x 8;
// vsubpd 1000 x 8; masked vaddpd 1500; ymm pd FMA (100+300) x 4 x 2 = 3200;
// masked sd FMA 30 x 2 = 60: 36800+8600+5600+8000+1500+3200+60 = 63760.

#[test]
fn masked_flop_comes_from_the_mask_profile() {
    let r = report("skx-avx512-iform.txt", Some("skx-avx512-mask.xml"));
    let f = &r.summary.flop;
    assert_eq!(
        (f.fp64, f.fp32, f.total),
        (Some(63_760), Some(14_800), 78_560)
    );
    assert_eq!(r.summary.flop_by_op.get("fma"), Some(&63_460));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // The masked `128b 2elem 64b` row: the mix ran masked fp64 of more than
    // one width, so it stays a 128-bit row; every table adds up.
    crate::common::assert_one_truth(&r.summary);
    // Thread 1 has only zmm rows: fp64.512 = 2500 x 8 + 2500 + 14500 = 37000.
    let t1 = thread(&r, 1);
    assert_eq!(
        t1.flop_by_width.iter().collect::<Vec<_>>(),
        [(&"fp64.512".to_string(), &37_000)]
    );
}

#[test]
fn masked_fma_rows_split_by_the_profile() {
    let r = report("skx-avx512-iform.txt", Some("skx-avx512-mask.xml"));
    let row = |p: Precision, width: u32, masked: bool| {
        let x = r
            .summary
            .fp_instructions
            .iter()
            .find(|x| {
                x.precision == p
                    && x.width_bits == width
                    && x.masked == masked
                    && x.op == OpClass::Fma
            })
            .unwrap_or_else(|| panic!("no row {p:?} {width} masked={masked}"));
        assert_eq!(x.op, OpClass::Fma);
        (x.lanes, x.count, x.flop)
    };
    assert_eq!(row(Precision::Fp64, 512, false), (8, 2300, 36_800));
    assert_eq!(row(Precision::Fp64, 512, true), (8, 900, 8600));
    assert_eq!(row(Precision::Fp64, 256, false), (4, 400, 3200));
    assert_eq!(row(Precision::Fp64, 64, true), (1, 50, 60));
    assert_eq!(row(Precision::Fp32, 512, false), (16, 400, 12_800));
    assert_eq!(row(Precision::Fp32, 512, true), (16, 100, 2000));
    let fma: Vec<_> = r
        .summary
        .fp_instructions
        .iter()
        .filter(|x| x.op == OpClass::Fma)
        .collect();
    assert_eq!(fma.len(), 6);
    assert_eq!(fma.iter().map(|x| x.flop).sum::<u64>(), 63_460);
}

#[test]
fn masked_fma_counts_its_computation_count_once_more() {
    // Thread 0: zmm pd FMA 1200 executions, 400 masked computing 1800 lanes.
    //   fp64 = 1500x8 + 400x4 (elements) + 3300 + 30 (masked rows)
    //        + 300x4 (VEX) + (800x8 + 1800) + 100x4 + 30 = 13600 + 3330 + 9830 = 26760
    //   fp32 = 400x16 + 1000 + (400x16 + 1000) = 14800
    // Thread 1: zmm pd FMA 2000 executions, 500 masked computing 2500 lanes.
    //   fp64 = 2500x8 + 2500 + (1500x8 + 2500) = 37000
    let r = report("skx-avx512-iform.txt", Some("skx-avx512-mask.xml"));
    let t0 = thread(&r, 0);
    assert_eq!(
        (t0.flop.fp64, t0.flop.fp32, t0.flop.total),
        (Some(26_760), Some(14_800), 41_560)
    );
    assert_eq!(t0.flop_by_op.get("fma"), Some(&(2 * (9830 + 7400))));
    let t1 = thread(&r, 1);
    assert_eq!(
        (t1.flop.fp64, t1.flop.fp32, t1.flop.total),
        (Some(37_000), Some(0), 37_000)
    );
    assert_eq!(t1.flop_by_op.get("fma"), Some(&(2 * 14_500)));
}

#[test]
fn without_the_profile_masked_flop_is_left_out_and_said() {
    // Known without a profile: unmasked elements 33600 (fp64) and 6400 (fp32);
    // VEX FMA 300 x 4; the EVEX ymm pd FMA (no `double_4_masked` counter, so
    // none of them ran masked) 100 x 4. fp64 = 33600 + 1200 + 400 = 35200.
    // Left out: masked elements 1200 + 100 + 50 = 1350 instructions, at most
    // 1200x8 + 100x16 + 50x1 = 11250 FLOP; FMA executions that may be masked:
    // zmm pd 3200, sd 50, zmm ps 500 = 3750, at most 25600 + 50 + 8000 = 33650.
    let r = report("skx-avx512-iform.txt", None);
    let f = &r.summary.flop;
    assert_eq!(
        (f.fp64, f.fp32, f.total),
        (Some(35_200), Some(6400), 41_600)
    );
    // The FMAs that may be masked are booked as `other` (their first FLOP).
    assert_eq!(r.summary.flop_by_op.get("fma"), Some(&3200));
    crate::common::assert_one_truth(&r.summary);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("1350 masked FP instructions ran") && w.contains("up to 11250"),
        "{w}"
    );
    assert!(
        w.contains("3750 AVX-512 FMA executions may have run under a mask")
            && w.contains("up to 33650"),
        "{w}"
    );
    assert!(w.contains("-odyn_mask_profile"), "{w}");
    // 4000 x 8 (zmm elements), 400 x 4 + 1200 + 400 (ymm), 400 x 16 (zmm single).
    let w: Vec<(&str, u64)> = r
        .summary
        .flop_by_width
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        w,
        [("fp32.512", 6400), ("fp64.256", 3200), ("fp64.512", 32_000)]
    );
    let fma: Vec<_> = r
        .summary
        .fp_instructions
        .iter()
        .filter(|x| x.op == OpClass::Fma)
        .collect();
    assert_eq!(fma.len(), 1);
    let row = fma[0];
    assert_eq!(
        (row.width_bits, row.count, row.flop, row.masked),
        (256, 400, 3200, false)
    );
}

#[test]
fn imported_warnings_start_with_the_mix_file() {
    let path = fixture("skx-avx512-iform.txt");
    let r = import_files(std::slice::from_ref(&path)).unwrap();
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    let prefix = format!("{}: ", path.display());
    assert!(
        r.warnings.iter().all(|w| w.starts_with(&prefix)),
        "{:?}",
        r.warnings
    );
}

#[test]
fn import_files_pairs_the_mix_with_its_profile() {
    let r = import_files(&[
        fixture("skx-avx512-mask.xml"),
        fixture("skx-avx512-iform.txt"),
    ])
    .unwrap();
    assert_eq!(r.summary.flop.total, 78_560);
    assert_eq!(r.engine, "sde-import");
    assert!(r.processes.is_empty());
    assert_eq!(r.threads.len(), 2);
}

#[test]
fn a_profile_from_another_run_is_flagged() {
    let r = report("hsw-iform.txt", Some("skx-avx512-mask.xml"));
    let w = r.warnings.join("\n");
    assert!(
        w.contains("thread 1") && w.contains("not be from the same run"),
        "{w}"
    );
    assert!(
        w.contains("masked fp64 FMA executions of 8 lanes that the mix does not show"),
        "{w}"
    );
}
