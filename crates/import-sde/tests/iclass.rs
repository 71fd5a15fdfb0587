use crate::common::report;
use flopscope_model::{OpClass, Precision};

// hsw-iclass.txt (`sde -hsw -omix`, no `-iform`): rows are XED iclasses, so
// `VFMADD231PD 2500` does not say xmm or ymm.
//   fp64: elements 1000 x 1 + 3000 x 4 = 13000; VFMADD213SD 600 x 1 (a
//         scalar form is one lane in any register) -> 13600
//   fp32: elements 200 x 1; VFMADD231SS 200 x 1 -> 400
//   the 2500 packed double FMAs add 2 to 8 lanes each (5000 to 20000 FLOP):
//   not counted, and a warning says so.
// Bytes: read 8 x 1000 + 32 x 3000 = 104000, written 32 x 1000 = 32000.

#[test]
fn scalar_fma_counts_and_packed_fma_of_unknown_width_is_warned() {
    let r = report("hsw-iclass.txt", None);
    let f = &r.summary.flop;
    assert_eq!((f.fp64, f.fp32, f.total), (Some(13_600), Some(400), 14_000));
    // Only the scalar FMAs are known: 600 x 2 + 200 x 2.
    assert_eq!(r.summary.flop_by_op.get("fma"), Some(&1600));
    crate::common::assert_one_truth(&r.summary);
    let w = r.warnings.join("\n");
    assert!(w.contains("2500 packed fp64 FMA executions"), "{w}");
    assert!(w.contains("5000 to 20000"), "{w}");
    assert!(w.contains("rerun SDE with `-iform`"), "{w}");
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (104_000, 32_000));
    assert_eq!(r.summary.instructions, Some(10_200));
}

#[test]
fn rows_split_the_elements_counters_by_operation() {
    let r = report("hsw-iclass.txt", None);
    let rows: Vec<_> = r
        .summary
        .fp_instructions
        .iter()
        .map(|x| (x.precision, x.width_bits, x.lanes, x.op, x.count, x.flop))
        .collect();
    // double_1 (1000): 600 VFMADD213SD, 400 VMULSD. double_4 (3000): the one
    // packed fp64 width, so the 500 VADDPD are 4 lanes; the rest (the 2500
    // packed FMAs, their width unproven) `other`. single_1: 200 VFMADD231SS.
    assert_eq!(
        rows,
        [
            (Precision::Fp64, 64, 1, OpClass::Mul, 400, 400),
            (Precision::Fp64, 64, 1, OpClass::Fma, 600, 1200),
            (Precision::Fp64, 256, 4, OpClass::Add, 500, 2000),
            (Precision::Fp64, 256, 4, OpClass::Other, 2500, 10_000),
            (Precision::Fp32, 32, 1, OpClass::Fma, 200, 400)
        ]
    );
}
