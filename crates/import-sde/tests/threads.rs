use crate::common::{report, thread};
use flopscope_import_sde::{parse_mix, report_from};

#[test]
fn one_row_per_thread_section_and_they_add_up_to_the_global_one() {
    // skx-avx512-iform.txt: thread 0 (OS-TID 6000) and thread 1 (OS-TID 6013).
    //   instructions 20000 + 10000 = 30000
    //   read  t0: 64x3000 + 8x1200 + 2688 = 204288; t1: 64x2000 + 8x800 = 134400
    //   write t0: 64x600 + 2688 = 41088;            t1: 64x400 = 25600
    let r = report("skx-avx512-iform.txt", Some("skx-avx512-mask.xml"));
    assert_eq!(r.threads.iter().map(|t| t.tid).collect::<Vec<_>>(), [0, 1]);
    let (t0, t1) = (thread(&r, 0), thread(&r, 1));
    assert_eq!(
        (t0.instructions, t1.instructions),
        (Some(20_000), Some(10_000))
    );
    assert_eq!(
        t0.bytes.map(|b| (b.read, b.written)),
        Some((204_288, 41_088))
    );
    assert_eq!(
        t1.bytes.map(|b| (b.read, b.written)),
        Some((134_400, 25_600))
    );
    assert_eq!(t0.fp_elements["elements_fp_double_8_masked"], 700);
    assert_eq!(t1.fp_elements["elements_fp_double_8_masked"], 500);
    assert_eq!(t0.flop.total + t1.flop.total, r.summary.flop.total);
    assert_eq!(r.summary.instructions, Some(30_000));
}

#[test]
fn single_thread_row_equals_the_totals() {
    let r = report("hsw-iform.txt", None);
    assert_eq!(r.threads.len(), 1);
    assert_eq!(r.threads[0].summary, r.summary);
}

#[test]
fn a_global_section_that_is_not_the_sum_of_its_threads_is_flagged() {
    let text = [
        "# EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 10 EMIT# 1",
        "*elements_fp_double_1    5",
        "*total                  10",
        "# END_DYNAMIC_STATS",
        "# EMIT_DYNAMIC_STATS FOR TID 1  OS-TID 11 EMIT# 1",
        "*elements_fp_double_1    5",
        "*total                  10",
        "# END_DYNAMIC_STATS",
        "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
        "*elements_fp_double_1   12",
        "*mem-read-8              1",
        "*total                  20",
        "# END_GLOBAL_DYNAMIC_STATS",
    ]
    .join("\n");
    let r = report_from(&parse_mix(&text, "m").unwrap(), None).unwrap();
    assert_eq!(r.summary.flop.total, 12);
    let w = r.warnings.join("\n");
    assert!(w.contains("FLOP 12 (global) vs 10 (threads)"), "{w}");
    assert!(w.contains("bytes read 8 (global) vs 0 (threads)"), "{w}");
    assert!(!w.contains("instructions"), "{w}");
}

#[test]
fn several_emits_use_the_last_and_say_so() {
    let text = [
        "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
        "*elements_fp_double_1   3",
        "*mem-read-8             1",
        "# END_GLOBAL_DYNAMIC_STATS",
        "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 2",
        "*elements_fp_double_1   7",
        "*mem-read-8             1",
        "# END_GLOBAL_DYNAMIC_STATS",
    ]
    .join("\n");
    let r = report_from(&parse_mix(&text, "m").unwrap(), None).unwrap();
    assert_eq!(r.summary.flop.total, 7);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("2 `EMIT_GLOBAL_DYNAMIC_STATS` sections") && w.contains("line 5")),
        "{:?}",
        r.warnings
    );
}
