use crate::common::{fixture, report};
use flopscope_import_sde::import_files;
use flopscope_model::Report;

#[test]
fn the_report_keeps_the_json_contract() {
    let r = report("skx-avx512-iform.txt", Some("skx-avx512-mask.xml"));
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    for key in flopscope_model::report::CONTRACT_KEYS {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["engine"], "sde-import");
    assert_eq!(v["complete"], true);
    assert_eq!(
        v["exit_status"],
        serde_json::Value::Null,
        "SDE's mix does not record the exit status"
    );
    assert_eq!(v["flop"]["total"], 78_560);
    assert!(
        v["flop"].get("x87").is_none(),
        "absent, not zero: SDE does not count x87"
    );
    assert_eq!(v["fp_elements"]["elements_fp_single_16_masked"], 100);
    assert_eq!(v["mem_accesses"]["read"]["2688"], 1);
    assert_eq!(v["threads"][1]["tid"], 1);
    assert_eq!(Report::from_json(&r.to_json()).unwrap(), r);
}

#[test]
fn merged_report_nests_one_report_per_file() {
    let r = import_files(&[
        fixture("ranks/sde-mix-out.1001.txt"),
        fixture("ranks/sde-mix-out.1002.txt"),
    ])
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["processes"].as_array().unwrap().len(), 2);
    assert_eq!(v["processes"][0]["engine"], "sde-import");
    assert_eq!(v["processes"][1]["threads"].as_array().unwrap().len(), 2);
    assert_eq!(v["flop"]["total"], 4_000_000_400u64);
}
