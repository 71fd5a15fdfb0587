//! Random and mutated input: every call returns, an error or a report whose
//! totals agree with each other, and never panics. (The cargo-fuzz targets under fuzz/ do the same, longer.)

use crate::common::text;
use flopscope_import_sde::{parse_mask_profile, parse_mix, report_from, Report};

/// xorshift64*: a fixed seed, so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
    "# END_GLOBAL_DYNAMIC_STATS",
    "# EMIT_DYNAMIC_STATS FOR TID 0  OS-TID 5 EMIT# 1",
    "# END_DYNAMIC_STATS",
    "# EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 5 EMIT# 1",
    "# END_PER_FUNCTION_STATS",
    "# $dynamic-counts-for-function: f(int)  IMG: /x at [0x401c40, 0x401c50)  1.0%",
    "#GLOBAL FUNCTION TOTALS",
    "<address> 0x401c48 </address>",
    "*elements_fp_double_4294967295   18446744073709551615",
    "*elements_fp_half_32_masked   18446744073709551615",
    "VFMADD231PD_ZMMf64_MASKmskw_ZMMf64_ZMMf64_AVX512   18446744073709551615",
    "VFMADD231PS   18446744073709551615",
    "*mem-read-4294967295   18446744073709551615",
    "*mem-write-0   7",
    "<thread>",
    "</thread>",
    "<thread-number> 18446744073709551615 </thread-number>",
    "masked mask 512b 8elem 64b fp | 18446744073709551615 18446744073709551615 1.0",
    "<instruction-details><disassembly> vfmadd231ph zmm0{k1}, zmm1, zmm2 </disassembly><execution-counts>1</execution-counts><computation-count>18446744073709551615</computation-count></instruction-details>",
    "<![CDATA[ masked ]]>",
    "&amp;&bogus;",
    "\u{feff}",
    "\r",
];

fn mutate(rng: &mut Rng, input: &str) -> String {
    let mut lines: Vec<String> = input.lines().map(str::to_string).collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(lines.len() + 1);
        match rng.below(7) {
            0 if !lines.is_empty() => {
                lines.remove(at.min(lines.len() - 1));
            }
            1 if !lines.is_empty() => {
                let l = lines[at.min(lines.len() - 1)].clone();
                lines.insert(at, l);
            }
            2 => lines.insert(at, PIECES[rng.below(PIECES.len())].to_string()),
            3 if !lines.is_empty() => {
                let i = at.min(lines.len() - 1);
                let mut bytes = lines[i].clone().into_bytes();
                if !bytes.is_empty() {
                    let j = rng.below(bytes.len());
                    bytes[j] = b" #*<>/|_-0123456789k{}abcxyzXMMZMM"[rng.below(34)];
                }
                lines[i] = String::from_utf8_lossy(&bytes).into_owned();
            }
            4 => lines.truncate(at),
            5 if !lines.is_empty() => {
                let i = at.min(lines.len() - 1);
                let cut = rng.below(lines[i].len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|c| lines[i].is_char_boundary(*c))
                    .unwrap_or(0);
                lines[i].truncate(cut);
            }
            _ => {
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                if a < lines.len() && b < lines.len() {
                    lines.swap(a, b);
                }
            }
        }
    }
    lines.join(if rng.below(5) == 0 { "\r\n" } else { "\n" })
}

/// What holds for any report, however odd its input.
fn check(r: &Report) {
    let s = &r.summary;
    crate::common::assert_one_truth(s);
    if s.flop_by_op.get("fma").is_some_and(|f| *f > s.flop.total) {
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("do not come from one SDE run")),
            "{:?}",
            r.warnings
        );
    }
    // The functions add up to the totals, or a warning says they do not.
    let said = r.warnings.iter().any(|w| {
        w.contains("`functions` does not add up to the totals")
            || w.contains("the rest is not given as a row")
    });
    if !r.functions.is_empty() && !said {
        let sum: u128 = r
            .functions
            .iter()
            .map(|f| u128::from(f.summary.flop.total))
            .sum();
        assert_eq!(sum, u128::from(s.flop.total), "{:?}", r.warnings);
    }
}

fn exercise(mix_text: &str, mask_text: &str) {
    let mix = parse_mix(mix_text, "mix");
    let mask = parse_mask_profile(mask_text, "mask");
    if let Ok(m) = &mix {
        if let Ok(r) = report_from(m, None) {
            check(&r);
        }
        if let Ok(p) = &mask {
            if let Ok(r) = report_from(m, Some(p)) {
                check(&r);
            }
        }
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let mixes = [
        "hsw-iform.txt",
        "hsw-iclass.txt",
        "skx-avx512-iform.txt",
        "ranks/sde-mix-out.1001.txt",
        "skx-functions.txt",
        "variants/sde924-openmp.txt",
        "variants/sde863-global-only.txt",
        "variants/pin-mixmt-v2.txt",
    ]
    .map(text);
    let mask = text("skx-avx512-mask.xml");
    let mut rng = Rng(0x5de_f10b_5c0b);
    for round in 0..400 {
        for m in &mixes {
            let (a, b) = (mutate(&mut rng, m), mutate(&mut rng, &mask));
            exercise(&a, &mask);
            exercise(m, &b);
            if round % 4 == 0 {
                exercise(&a, &b);
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() >> 24) as u8).collect();
        let t = String::from_utf8_lossy(&bytes);
        exercise(&t, &t);
        let stitched: String = (0..rng.below(12))
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect::<Vec<_>>()
            .join("\n");
        exercise(&stitched, &stitched);
    }
}
