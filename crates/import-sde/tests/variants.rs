//! The structural variants of real SDE outputs (each fixture names the public
//! file whose structure it follows), with totals derived by hand from the
//! global counters, and the cross-check warnings.

use crate::common::{assert_one_truth, fixture, report, text};
use flopscope_import_sde::{import_files, parse_mix, report_from, UNLISTED};
use flopscope_model::Report;

fn totals(r: &Report) -> (u64, Option<u64>, Option<u64>, u64, u64) {
    let s = &r.summary;
    let b = s.bytes.expect("bytes");
    (s.flop.total, s.flop.fp32, s.flop.fp64, b.read, b.written)
}

#[test]
fn sde_9_24_openmp_mix_with_the_global_function_report() {
    let r = report("variants/sde924-openmp.txt", None);
    // fp32: *elements_fp_single_1 500 x 1 = 500.
    // fp64: *elements_fp_double_1 45 x 1 + *elements_fp_double_2 40 x 2 = 125.
    // read: 1600 x 4 + 200 x 8 + 2 x 576 = 9152; written: 50 x 4 + 400 x 8 + 2 x 576 = 4552.
    assert_eq!(totals(&r), (625, Some(500), Some(125), 9152, 4552));
    // By operation, from the opcode rows of each shape: single_1 = 300 ADDSS
    // + 50 MULSS + 150 COMISS (a compare SDE counts: `other`); double_1 = 10
    // ADDSD + 10 DIVSD + 5 SQRTSD + 20 UCOMISD; double_2 = 25 ADDPD + 15 MULPD.
    let op = |k: &str| r.summary.flop_by_op[k];
    assert_eq!(
        (
            op("add"),
            op("mul"),
            op("div"),
            op("sqrt"),
            op("other"),
            op("fma")
        ),
        (300 + 10 + 50, 50 + 30, 10, 5, 150 + 20, 0)
    );
    assert_eq!(r.summary.flop_by_width["fp64.128"], 80);
    assert_eq!(r.threads.len(), 3);
    assert_eq!(
        r.threads
            .iter()
            .map(|t| t.summary.flop.total)
            .collect::<Vec<_>>(),
        [300 + 40 + 50, 200 + 30, 5]
    );
    // The `*total 0` section closed by END_DYNAMIC_STATS is not the totals.
    assert_eq!(r.summary.instructions, Some(9000));
    // The process's function report: kernel 400 + 40 x 2, omp_get_num_procs 0, the rest 145.
    let f: Vec<(&str, u64)> = r
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.summary.flop.total))
        .collect();
    assert_eq!(
        f,
        [
            ("kernel(graph const&)", 480),
            ("omp_get_num_procs", 0),
            (UNLISTED, 145)
        ]
    );
    assert_eq!(r.functions[1].module, "/lib/x86_64-linux-gnu/libgomp.so.1");
    assert!(
        r.warnings
            .iter()
            .all(|w| !w.contains("differs from the sum")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn sde_8_63_global_section_only() {
    let r = report("variants/sde863-global-only.txt", None);
    // fp64: *elements_fp_double_1 1000 x 1; read 800 x 8, written 200 x 8.
    assert_eq!(totals(&r), (1000, Some(0), Some(1000), 6400, 1600));
    assert_eq!(
        (r.summary.flop_by_op["add"], r.summary.flop_by_op["mul"]),
        (600, 400)
    );
    assert!(r.threads.is_empty());
    assert!(r.functions.is_empty());
}

#[test]
fn pin_mix_mt_version_2_with_a_section_flopscope_does_not_read() {
    let r = report("variants/pin-mixmt-v2.txt", None);
    // fp64: *elements_fp_double_4 100 x 4 + the 60 VEX ymm FMAs' second FLOP 60 x 4 = 640.
    // fp32: *elements_fp_single_8 50 x 8 = 400. read 250 x 32, written 100 x 32.
    assert_eq!(totals(&r), (1040, Some(400), Some(640), 8000, 3200));
    // add: 40 VADDPD x 4; fma: 60 x 4 x 2; mul: 50 VMULPS x 8.
    let op = |k: &str| r.summary.flop_by_op[k];
    assert_eq!(
        (op("add"), op("fma"), op("mul"), op("other")),
        (160, 480, 400, 0)
    );
    let w = r.warnings.join("\n");
    assert!(
        w.contains("line 48: section `EMIT_PC_STATS` is not one flopscope reads: skipped"),
        "{w}"
    );
    // Threads without OS-TID, functions without `IMG:`.
    assert_eq!(r.threads.iter().map(|t| t.tid).collect::<Vec<_>>(), [0, 1]);
    let f: Vec<(&str, u64)> = r
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.summary.flop.total))
        .collect();
    assert_eq!(f, [("axpy", 640), ("scale", 400)]);
}

/// Every fixture SDE could have written, with its mask profile where it has one.
const ALL: [(&str, Option<&str>); 10] = [
    ("variants/sde924-openmp.txt", None),
    ("variants/sde863-global-only.txt", None),
    ("variants/pin-mixmt-v2.txt", None),
    ("hsw-iform.txt", None),
    ("hsw-iclass.txt", None),
    ("skx-avx512-iform.txt", None),
    ("skx-avx512-iform.txt", Some("skx-avx512-mask.xml")),
    ("skx-functions.txt", Some("skx-functions-mask.xml")),
    ("ranks/sde-mix-out.1001.txt", None),
    ("ranks/sde-mix-out.1002.txt", None),
];

#[test]
fn every_table_adds_up_for_every_fixture() {
    for (mix, mask) in ALL {
        let r = report(mix, mask);
        assert_one_truth(&r.summary);
        for t in &r.threads {
            assert_one_truth(&t.summary);
        }
        for f in &r.functions {
            assert_one_truth(&f.summary);
        }
    }
    let merged = import_files(&[
        fixture("ranks/sde-mix-out.1001.txt"),
        fixture("ranks/sde-mix-out.1002.txt"),
    ])
    .unwrap();
    assert_one_truth(&merged.summary);
}

#[test]
fn an_impossible_counter_is_named_with_its_line_and_not_counted() {
    let text = "\
# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
# $global-dynamic-counts
*elements_fp_double_4   500
*elements_fp_double_3   200
*elements_fp_double_16  7
*mem-read-8   10
*total   900
# END_GLOBAL_DYNAMIC_STATS
";
    let r = report_from(&parse_mix(text, "hand.txt").unwrap(), None).unwrap();
    // Only the possible counter: 500 x 4.
    assert_eq!(r.summary.flop.total, 2000);
    assert_one_truth(&r.summary);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("`*elements_fp_double_3` (line 4) is not an elements counter SDE writes"),
        "{w}"
    );
    assert!(w.contains("`*elements_fp_double_16` (line 5)"), "{w}");
}

#[test]
fn instruction_rows_beyond_their_elements_counter_name_both_figures() {
    // 300 ADDPD of 2 lanes, but SDE counted 200 double_2 instructions.
    let text = "\
# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
# $global-dynamic-counts
*elements_fp_double_2   200
ADDPD_XMMpd_XMMpd   300
*mem-read-16   10
*total   900
# END_GLOBAL_DYNAMIC_STATS
";
    let r = report_from(&parse_mix(text, "hand.txt").unwrap(), None).unwrap();
    assert_eq!(r.summary.flop.total, 400, "the elements counter decides");
    assert_eq!(r.summary.flop_by_op["other"], 400);
    assert_one_truth(&r.summary);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("name 300 fp64 arithmetic instructions of 2 lanes besides 0 FMA, more than the 200 of `*elements_fp_double_2`"),
        "{w}"
    );
}

#[test]
fn fma_rows_beyond_their_elements_counter_name_both_figures() {
    let text = "\
# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1
# $global-dynamic-counts
*elements_fp_double_4   100
VFMADD231PD_YMMqq_YMMqq_YMMqq   150
*mem-read-32   10
*total   900
# END_GLOBAL_DYNAMIC_STATS
";
    let r = report_from(&parse_mix(text, "hand.txt").unwrap(), None).unwrap();
    // 100 of the 150 are counted: 100 x 4 x 2.
    assert_eq!(r.summary.flop.total, 800);
    assert_one_truth(&r.summary);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("the FMA rows count 150 fp64 executions of 4 lanes, more than the 100 of `*elements_fp_double_4`"),
        "{w}"
    );
}

#[test]
fn the_global_section_against_its_threads_names_both_figures() {
    let t = text("variants/sde924-openmp.txt").replacen(
        "*elements_fp_double_1                                            5",
        "*elements_fp_double_1                                            9",
        1,
    );
    let r = report_from(&parse_mix(&t, "m").unwrap(), None).unwrap();
    let w = r.warnings.join("\n");
    assert!(w.contains("FLOP 625 (global) vs 629 (threads)"), "{w}");
}

#[test]
fn real_structures_import_through_the_file_api() {
    for (mix, _) in ALL {
        import_files(&[fixture(mix)]).unwrap_or_else(|e| panic!("{mix}: {e}"));
    }
}
