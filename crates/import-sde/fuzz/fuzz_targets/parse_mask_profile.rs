//! Any bytes as a dynamic mask profile, applied to a fixed mix: an error or a
//! report, never a panic.
#![no_main]

use flopscope_import_sde::{parse_mask_profile, parse_mix, report_from};
use libfuzzer_sys::fuzz_target;

const MIX: &str = include_str!("../../tests/fixtures/skx-avx512-iform.txt");

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(profile) = parse_mask_profile(&text, "fuzz") {
        if let Ok(mix) = parse_mix(MIX, "mix") {
            let _ = report_from(&mix, Some(&profile));
        }
    }
});
