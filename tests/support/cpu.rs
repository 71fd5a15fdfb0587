//! What the processor running the tests has, and what glibc is told to use.
//!
//! A test that needs an instruction-set extension asks [`has_or_skip`]: where
//! the processor lacks it (or `FLOPSCOPE_HIDE_CPU_FEATURES` hides it, the way
//! to run the suite as on a smaller machine), the test says so on the
//! terminal, past cargo's output capture, lists itself in
//! `target/tmp/skipped-for-cpu.txt` (scripts/test.sh prints that list after
//! the run), and returns early.

use flopscope_model::vocab::{cpu_feature_key, hidden_cpu_features, HIDE_CPU_FEATURES_ENV};
use std::io::Write;

/// Whether this processor has `feature` (a /proc/cpuinfo flag, `avx512f`)
/// not hidden by `FLOPSCOPE_HIDE_CPU_FEATURES`; if not, the calling test is
/// reported as skipped (see the module's doc) and the caller returns.
pub fn has_or_skip(feature: &str) -> bool {
    if has(feature) {
        return true;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let why = if flags().iter().any(|f| f == feature) {
        "hidden by FLOPSCOPE_HIDE_CPU_FEATURES"
    } else {
        "this processor lacks it"
    };
    let line = format!("SKIPPED {test}: needs the CPU feature {feature} ({why})\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    let list = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-for-cpu.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(list)
    {
        let _ = f.write_all(line.as_bytes());
    }
    false
}

/// Whether this processor has `feature` and it is not hidden.
pub fn has(feature: &str) -> bool {
    let key = cpu_feature_key(feature);
    flags().iter().any(|f| f == feature) && !hidden().contains(&key)
}

/// The processor's feature flags, from the first CPU in /proc/cpuinfo.
fn flags() -> Vec<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").expect("reading /proc/cpuinfo");
    info.lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The features `FLOPSCOPE_HIDE_CPU_FEATURES` hides, with those that need
/// them (`avx2` hides AVX-512 too), as the engine reckons them.
fn hidden() -> Vec<String> {
    hidden_cpu_features(&std::env::var(HIDE_CPU_FEATURES_ENV).unwrap_or_default())
}

/// `GLIBC_TUNABLES` under which glibc picks the same string and math
/// function variants on every x86-64 processor and under QEMU's `-cpu max`
/// (whose CPUID is neither this processor's nor any real one's): only the
/// SSE2 baseline variants (no AVX/AVX2/AVX-512, no ERMS/FSRM `rep
/// movsb`/`rep stosb`, no SSSE3/SSE4 variants, no FMA libm variants), the
/// preferences glibc derives from the CPU model off, and the cache sizes
/// and thresholds that choose between copy strategies fixed. For tests that
/// compare bytes and access sizes between the engines. Checked: the same
/// counts natively and under QEMU's max, EPYC (Zen 1), EPYC-Rome, EPYC-Milan,
/// Haswell, Skylake and Icelake models.
pub const SAME_GLIBC_EVERYWHERE: (&str, &str) = (
    "GLIBC_TUNABLES",
    "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512ER,-AVX512PF,\
-AVX2,-AVX,-ERMS,-FSRM,-SSSE3,-SSE4_1,-SSE4_2,-BMI1,-BMI2,-LZCNT,-MOVBE,-POPCNT,-RTM,-FMA,-FMA4,-F16C,\
-AVX_Fast_Unaligned_Load,-Fast_Unaligned_Copy,-Fast_Copy_Backward,-Fast_Unaligned_Load,\
-Prefer_No_VZEROUPPER,-Slow_BSF,-Prefer_PMINUB_for_stringop\
:glibc.cpu.x86_data_cache_size=32768:glibc.cpu.x86_shared_cache_size=1048576\
:glibc.cpu.x86_non_temporal_threshold=786432:glibc.cpu.x86_rep_movsb_threshold=2048\
:glibc.cpu.x86_rep_stosb_threshold=2048",
);
