use crate::common::report;
use flopscope_import_sde::{parse_mix, report_from};

// hsw-iform.txt:
//   read:  1x100 + 2x20 + 4x1000 + 8x5000 + 16x2000 + 32x4000 + 512x3 + 832x2
//        = 100 + 40 + 4000 + 40000 + 32000 + 128000 + 1536 + 1664 = 207340
//   write: 1x50 + 8x3000 + 16x400 + 32x1500 + 512x3 + 832x2
//        = 50 + 24000 + 6400 + 48000 + 1536 + 1664 = 81650
// The same file has `*mem-read 12125` and `*mem-write 4955`: memory operand
// counts, not bytes.

#[test]
fn bytes_are_size_times_count_over_every_size() {
    let r = report("hsw-iform.txt", None);
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (207_340, 81_650));
    let m = r.summary.mem_accesses.as_ref().unwrap();
    let read: Vec<(&str, u64)> = m.read.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut read = read;
    read.sort_by_key(|(k, _)| k.parse::<u32>().unwrap());
    assert_eq!(
        read,
        [
            ("1", 100),
            ("2", 20),
            ("4", 1000),
            ("8", 5000),
            ("16", 2000),
            ("32", 4000),
            ("512", 3),
            ("832", 2)
        ]
    );
    assert_eq!(m.write["832"], 2);
    assert_eq!(m.write.len(), 6);
}

#[test]
fn operand_counts_are_not_bytes() {
    let r = report("hsw-iform.txt", None);
    let b = r.summary.bytes.unwrap();
    assert_ne!(b.read, 12_125);
    assert_ne!(b.written, 4_955);
    assert_ne!(b.read, 207_340 + 12_125);
    assert!(!r.summary.mem_accesses.unwrap().read.contains_key(""));
}

#[test]
fn sizes_above_64_bytes_are_kept() {
    // Stopping at 64 bytes (as parsers that list sizes 1..64 do) would give
    // 207340 - 1536 - 1664 = 204140 read and 81650 - 3200 = 78450 written.
    let r = report("hsw-iform.txt", None);
    let b = r.summary.bytes.unwrap();
    assert_eq!(b.read, 204_140 + 512 * 3 + 832 * 2);
    assert_eq!(b.written, 78_450 + 512 * 3 + 832 * 2);
    // skx-avx512-iform.txt: XSAVE/XRSTOR of a 2688-byte AVX-512 state.
    // read 64x5000 + 8x2000 + 2688 = 338688, write 64x1000 + 2688 = 66688.
    let r = report("skx-avx512-iform.txt", None);
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (338_688, 66_688));
}

#[test]
fn counter_names_match_exactly_not_by_prefix() {
    // A substring match of `mem-read-1` also hits `mem-read-16` and `mem-read-128`.
    let text = [
        "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
        "*mem-read-1        1",
        "*mem-read-16       1",
        "*mem-read-128      1",
        "*mem-write-2       1",
        "*mem-write-256     1",
        "*mem-read          3",
        "*mem-write         2",
        "*total             5",
        "# END_GLOBAL_DYNAMIC_STATS",
    ]
    .join("\n");
    let r = report_from(&parse_mix(&text, "t").unwrap(), None).unwrap();
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (1 + 16 + 128, 2 + 256));
}

#[test]
fn no_size_rows_means_bytes_unknown_not_zero() {
    let text = [
        "# EMIT_GLOBAL_DYNAMIC_STATS",
        "*mem-read  3",
        "*total  5",
        "# END_GLOBAL_DYNAMIC_STATS",
    ]
    .join("\n");
    let r = report_from(&parse_mix(&text, "t").unwrap(), None).unwrap();
    assert_eq!(r.summary.bytes, None);
    assert_eq!(r.summary.mem_accesses, None);
    assert!(
        r.warnings.iter().any(|w| w.contains("bytes are unknown")),
        "{:?}",
        r.warnings
    );
}
