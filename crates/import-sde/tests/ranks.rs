use crate::common::fixture;
use flopscope_import_sde::{import_files, pair_files, SdeError};
use std::path::PathBuf;

// ranks/sde-mix-out.1001.txt and .1002.txt: STREAM under `srun -n 2 sde -ivb
// -d -iform 1 -omix ... -i -global_region`, two threads per rank, split so
// that the two files add up to what NERSC's parse-sde.sh prints for their
// example (shared/seeds/003):
//   elements_fp_double_1 = 2960, elements_fp_double_4 = 999999360
//   -> Total FLOPs = 2960 + 4 x 999999360 = 4000000400
//   -> Total Bytes read = 33752339756, written = 16117466472
// Per rank: FLOP 1480 + 4 x 499999680 = 2000000200;
//   rank 1001 read 16876169884, rank 1002 read 16876169872, each wrote 8058733236.

fn ranks() -> Vec<PathBuf> {
    vec![
        fixture("ranks/sde-mix-out.1001.txt"),
        fixture("ranks/sde-mix-out.1002.txt"),
    ]
}

#[test]
fn rank_files_merge_to_nersc_totals() {
    let r = import_files(&ranks()).unwrap();
    assert_eq!(r.summary.flop.total, 4_000_000_400);
    assert_eq!(r.summary.flop.fp64, Some(4_000_000_400));
    let b = r.summary.bytes.unwrap();
    assert_eq!((b.read, b.written), (33_752_339_756, 16_117_466_472));
    assert_eq!(b.read + b.written, 49_869_806_228);
    assert_eq!(r.summary.fp_elements["elements_fp_double_1"], 2960);
    assert_eq!(r.summary.fp_elements["elements_fp_double_4"], 999_999_360);
    assert_eq!(r.summary.instructions, Some(6_200_000_004));
    assert_eq!(r.summary.flop_by_width["fp64.scalar"], 2960);
    assert_eq!(r.summary.flop_by_width["fp64.256"], 3_999_997_440);
    assert_eq!(
        r.summary.mem_accesses.as_ref().unwrap().read["16"],
        1_999_998_720
    );
    // AI(L1) as NERSC computes it: 4000000400 / 49869806228.
    assert_eq!(
        r.arithmetic_intensity.l1,
        Some(4_000_000_400.0 / 49_869_806_228.0)
    );
}

#[test]
fn one_process_row_per_file_with_its_threads() {
    let r = import_files(&ranks()).unwrap();
    assert_eq!(r.processes.len(), 2);
    assert!(
        r.threads.is_empty(),
        "thread numbers repeat across processes: threads stay in each row"
    );
    for (p, read) in r.processes.iter().zip([16_876_169_884u64, 16_876_169_872]) {
        assert_eq!(p.engine, "sde-import");
        assert_eq!(p.summary.flop.total, 2_000_000_200);
        assert_eq!(
            p.summary.bytes.map(|b| (b.read, b.written)),
            Some((read, 8_058_733_236))
        );
        assert_eq!(p.threads.len(), 2);
        assert_eq!(
            p.threads[0].summary.flop.total + p.threads[1].summary.flop.total,
            2_000_000_200
        );
    }
    assert_eq!(r.processes[0].summary.instructions, Some(3_100_000_000));
    assert_eq!(r.processes[1].summary.instructions, Some(3_100_000_004));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

/// Copies fixtures under the names `sde -i` gives them.
fn named(dir: &tempfile::TempDir, pairs: &[(&str, &str)]) -> Vec<PathBuf> {
    pairs
        .iter()
        .map(|(from, to)| {
            let p = dir.path().join(to);
            std::fs::copy(fixture(from), &p).unwrap();
            p
        })
        .collect()
}

#[test]
fn mask_profiles_pair_with_the_mix_of_the_same_process_id() {
    let dir = tempfile::tempdir().unwrap();
    let paths = named(
        &dir,
        &[
            ("skx-avx512-mask.xml", "sde-dyn-mask-profile.2001.txt"),
            ("hsw-iform.txt", "sde-mix-out.2002.txt"),
            ("skx-avx512-iform.txt", "sde-mix-out.2001.txt"),
        ],
    );
    let runs = pair_files(&paths).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].mix, paths[1]);
    assert_eq!(runs[0].mask_profile, None);
    assert_eq!(runs[1].mix, paths[2]);
    assert_eq!(runs[1].mask_profile.as_ref(), Some(&paths[0]));
    let r = import_files(&paths).unwrap();
    // hsw 89905 (fma.rs) + skx with its profile 78560 (masked.rs).
    assert_eq!(r.processes[0].summary.flop.total, 89_905);
    assert_eq!(r.processes[1].summary.flop.total, 78_560);
    assert_eq!(r.summary.flop.total, 89_905 + 78_560);
    assert_eq!(r.summary.flop_by_op.get("fma"), Some(&(75_720 + 63_460)));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn a_mask_profile_without_its_mix_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let paths = named(
        &dir,
        &[
            ("hsw-iform.txt", "sde-mix-out.2002.txt"),
            ("skx-avx512-iform.txt", "sde-mix-out.2001.txt"),
            ("skx-avx512-mask.xml", "sde-dyn-mask-profile.2003.txt"),
        ],
    );
    let e = import_files(&paths).unwrap_err();
    assert!(matches!(e, SdeError::Inputs { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("sde-dyn-mask-profile.2003.txt") && msg.contains("(2003)"),
        "{msg}"
    );
    let e = import_files(&[fixture("skx-avx512-mask.xml")]).unwrap_err();
    assert!(
        e.to_string()
            .contains("give the `-omix` output of the same run"),
        "{e}"
    );
}

#[test]
fn the_merge_labels_each_process_row_with_its_mix_file() {
    use flopscope_import_sde::{import_sources, merge_sources};
    let runs = pair_files(&ranks()).unwrap();
    let merged = merge_sources(import_sources(&runs).unwrap()).unwrap();
    assert_eq!(merged.labels.len(), 2);
    assert!(merged.labels[0].ends_with("sde-mix-out.1001.txt"));
    assert!(merged.labels[1].ends_with("sde-mix-out.1002.txt"));
    // Ranks 1001 and 1002 did the same FLOP: no imbalance.
    assert_eq!(merged.imbalance.flop.ratio(), Some(1.0));
}
