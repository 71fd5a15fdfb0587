use crate::common::report;
use flopscope_model::Precision;

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
    assert_eq!(r.summary.flop_by_op.get("fma"), None);
    let w = r.warnings.join("\n");
    assert!(w.contains("2500 packed fp64 FMA executions"), "{w}");
    assert!(w.contains("5000 to 20000"), "{w}");
    assert!(w.contains("rerun SDE with `-iform`"), "{w}");
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (104_000, 32_000));
    assert_eq!(r.summary.instructions, Some(10_200));
}

#[test]
fn scalar_rows_are_known_packed_rows_are_not() {
    let r = report("hsw-iclass.txt", None);
    let rows: Vec<_> = r
        .summary
        .fp_instructions
        .iter()
        .map(|x| (x.precision, x.width_bits, x.lanes, x.count, x.flop))
        .collect();
    assert_eq!(
        rows,
        [
            (Precision::Fp64, 64, 1, 600, 1200),
            (Precision::Fp32, 32, 1, 200, 400)
        ]
    );
}
