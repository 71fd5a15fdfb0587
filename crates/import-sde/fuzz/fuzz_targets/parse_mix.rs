//! Any bytes as an `-omix` file: an error or a report, never a panic.
#![no_main]

use flopscope_import_sde::{parse_mix, report_from};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(mix) = parse_mix(&text, "fuzz") {
        let _ = report_from(&mix, None);
    }
});
