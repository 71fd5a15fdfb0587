use flopscope_import_sde::{
    parse_mask_profile, parse_mix, report_from, MaskProfile, MixFile, Report,
};
use flopscope_model::{Precision, Summary};
use std::path::PathBuf;

/// One truth: by precision, by width, by operation and the instruction rows
/// each add up to `flop.total`.
pub fn assert_one_truth(s: &Summary) {
    let total = s.flop.total;
    let by_precision: u64 = Precision::ALL.iter().filter_map(|p| s.flop.get(*p)).sum();
    assert_eq!(by_precision, total, "by precision");
    assert_eq!(s.flop_by_width.values().sum::<u64>(), total, "by width");
    assert_eq!(s.flop_by_op.values().sum::<u64>(), total, "by operation");
    let rows: u64 = s.fp_instructions.iter().map(|x| x.flop).sum();
    assert_eq!(rows, total, "fp_instructions");
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn mix(name: &str) -> MixFile {
    parse_mix(&text(name), name).unwrap_or_else(|e| panic!("{e}"))
}

pub fn mask(name: &str) -> MaskProfile {
    parse_mask_profile(&text(name), name).unwrap_or_else(|e| panic!("{e}"))
}

/// The report of one mix file, with its mask profile if named.
pub fn report(mix_name: &str, mask_name: Option<&str>) -> Report {
    let m = mask_name.map(mask);
    report_from(&mix(mix_name), m.as_ref()).unwrap_or_else(|e| panic!("{e}"))
}

pub fn thread(r: &Report, tid: u64) -> &flopscope_model::Summary {
    &r.threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap_or_else(|| panic!("no thread {tid}"))
        .summary
}
