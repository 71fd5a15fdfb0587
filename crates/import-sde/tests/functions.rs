use crate::common::{mask, report, text};
use flopscope_import_sde::{parse_mask_profile, parse_mix, report_from, Report, UNLISTED};
use flopscope_model::{FunctionRow, OpClass, Precision};
use std::collections::BTreeMap;

// skx-functions.txt + skx-functions-mask.xml: `sde -skx -iform 1 -omix` and
// `-odyn_mask_profile` of one two-thread run, in SDE 9's layout: image list,
// per-thread function reports (complete), then the whole process's report
// (after the `*total 0` pseudo-section and `#GLOBAL FUNCTION TOTALS`), which
// lists the top 4 functions by instructions only. Per function (threads 0 + 1):
//
//   daxpy_fma(double, double const*, double*, long)   vfmadd231pd ymm (VEX), 2500 + 1500
//     elements 4000 x 4 + second FMA FLOP 4000 x 4                  = 32000 fp64
//   masked_update   vfmadd213pd zmm 1000 + 800, of which 400 + 200 ran under k1
//                   computing 2000 + 1200 lanes; vaddpd zmm{k2} 500 + 300 computing 1500 + 600
//     unmasked elements (600 + 600) x 8                             =  9600
//     masked lanes (profile) 2000 + 1500 + 1200 + 600               =  5300
//     second FMA FLOP: unmasked 1200 x 8 + masked lanes 3200        = 12800
//                                                                    = 27700 fp64
//     (as a program counts it: 1200 x 8 x 2 + 3200 x 2 + 2100       = 27700)
//   scale_sse       mulps xmm 3000 x 4                              = 12000 fp32
//   libm.so.6 code without a symbol (`UNKNOWN` at 0x7f2a3c4150a0, image at 0x7f2a3c400000):
//                   vfmadd213sd 300, mulsd 400, addsd 400: 1100 + 300 = 1400 fp64
//   not listed: init_arrays (addsd 100: 100 fp64), main, _dl_runtime_resolve_xsavec
// Totals: 73200 FLOP (61200 fp64, 12000 fp32), 47474 instructions.
const MIX: &str = "skx-functions.txt";
const MASK: &str = "skx-functions-mask.xml";
const DAXPY: &str = "daxpy_fma(double, double const*, double*, long)";
const EXE: &str = "/home/user/kern.exe";
const LIBM: &str = "/lib/x86_64-linux-gnu/libm.so.6";

fn row<'a>(r: &'a Report, name: &str) -> &'a FunctionRow {
    r.functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name} in {:?}", names(r)))
}

fn names(r: &Report) -> Vec<&str> {
    r.functions.iter().map(|f| f.name.as_str()).collect()
}

fn flop(r: &Report) -> Vec<(&str, u64)> {
    r.functions
        .iter()
        .map(|f| (f.name.as_str(), f.summary.flop.total))
        .collect()
}

/// The counts the report schema requires `functions` to add up to, as
/// path -> number (zeros left out), for the totals or for the rows' sum.
fn counts<'a>(
    parts: impl IntoIterator<Item = &'a flopscope_model::Summary>,
) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let mut add = |k: String, v: u64| *out.entry(k).or_default() += v;
    for s in parts {
        add("flop.total".into(), s.flop.total);
        for p in Precision::ALL {
            add(format!("flop.{}", p.key()), s.flop.get(p).unwrap_or(0));
        }
        for (k, v) in &s.flop_by_op {
            add(format!("flop_by_op.{k}"), *v);
        }
        for (k, v) in &s.fp_elements {
            add(format!("fp_elements.{k}"), *v);
        }
        if let Some(b) = s.bytes {
            add("bytes.read".into(), b.read);
            add("bytes.written".into(), b.written);
        }
        if let Some(m) = &s.mem_accesses {
            for (k, v) in &m.read {
                add(format!("mem_accesses.read.{k}"), *v);
            }
            for (k, v) in &m.write {
                add(format!("mem_accesses.write.{k}"), *v);
            }
        }
        add("instructions".into(), s.instructions.unwrap_or(0));
    }
    out.retain(|_, v| *v != 0);
    out
}

/// The schema's attribution invariant: over `functions` the counts sum to the totals.
pub fn assert_functions_add_up(r: &Report) {
    assert!(!r.functions.is_empty());
    assert_eq!(
        counts(r.functions.iter().map(|f| &f.summary)),
        counts([&r.summary]),
        "{:?}",
        flop(r)
    );
}

#[test]
fn the_process_report_gives_each_listed_function_exactly() {
    let r = report(MIX, Some(MASK));
    assert_eq!(
        flop(&r),
        [
            (DAXPY, 32_000),
            ("masked_update", 27_700),
            ("scale_sse", 12_000),
            ("libm.so.6+0x150a0", 1400),
            (UNLISTED, 100),
        ]
    );
    assert_eq!(r.summary.flop.total, 73_200);

    let d = row(&r, DAXPY);
    assert_eq!((d.module.as_str(), d.address.as_str()), (EXE, "0x401b40"));
    assert_eq!(
        (d.summary.flop.fp64, d.summary.flop.fp32),
        (Some(32_000), Some(0))
    );
    assert_eq!(d.summary.flop_by_op["fma"], 32_000);
    assert_eq!(d.summary.flop_by_width["fp64.256"], 32_000);
    assert_eq!(d.summary.fp_elements["elements_fp_double_4"], 4000);
    // 8000 32-byte loads, 4000 32-byte stores.
    assert_eq!(
        d.summary.bytes.map(|b| (b.read, b.written)),
        Some((256_000, 128_000))
    );
    assert_eq!(d.summary.instructions, Some(24_000));
    assert_eq!(d.arithmetic_intensity.l1, Some(32_000.0 / 384_000.0));
    let fma = &d.summary.fp_instructions;
    assert_eq!(fma.len(), 1);
    assert_eq!(
        (
            fma[0].precision,
            fma[0].width_bits,
            fma[0].op,
            fma[0].count,
            fma[0].flop
        ),
        (Precision::Fp64, 256, OpClass::Fma, 4000, 32_000)
    );
    // SDE's histograms are exclusive and untimed; the mix has no source lines.
    assert_eq!(
        (d.file.as_ref(), d.line, d.time_s, d.samples, d.gflops),
        (None, None, None, None, None)
    );
    assert!(d.inclusive.is_none());

    let s = row(&r, "scale_sse");
    assert_eq!(
        (s.summary.flop.fp64, s.summary.flop.fp32),
        (Some(0), Some(12_000))
    );
    assert_eq!(s.summary.flop_by_width["fp32.128"], 12_000);
    assert_eq!(
        s.summary.bytes.map(|b| (b.read, b.written)),
        Some((48_000, 48_000))
    );

    let u = row(&r, "libm.so.6+0x150a0");
    assert_eq!(
        (u.module.as_str(), u.address.as_str()),
        (LIBM, "0x7f2a3c4150a0")
    );
    assert_eq!(u.summary.flop_by_op["fma"], 600);
    assert_eq!(u.summary.flop_by_width["fp64.scalar"], 1400);
}

#[test]
fn a_masked_avx512_function_counts_its_active_lanes() {
    let r = report(MIX, Some(MASK));
    let m = row(&r, "masked_update");
    assert_eq!(m.summary.flop.fp64, Some(27_700));
    // FMA: (1200 unmasked x 8 + 3200 masked lanes) x 2.
    assert_eq!(m.summary.flop_by_op["fma"], 25_600);
    let rows: Vec<(bool, u64, u64)> = m
        .summary
        .fp_instructions
        .iter()
        .filter(|x| x.op == flopscope_model::OpClass::Fma)
        .map(|x| (x.masked, x.count, x.flop))
        .collect();
    assert_eq!(rows, [(false, 1200, 19_200), (true, 600, 6400)]);
    assert_eq!(m.summary.flop_by_width["fp64.512"], 27_700);
    assert_eq!(m.summary.fp_elements["elements_fp_double_8_masked"], 1400);
    // 1800 64-byte loads, 800 masked 64-byte stores.
    assert_eq!(
        m.summary.bytes.map(|b| (b.read, b.written)),
        Some((115_200, 51_200))
    );
}

#[test]
fn what_sde_did_not_list_is_one_named_row_and_a_warning() {
    let r = report(MIX, Some(MASK));
    let rest = r.functions.last().unwrap();
    assert_eq!(rest.name, UNLISTED);
    assert_eq!((rest.module.as_str(), rest.address.as_str()), ("", ""));
    // init_arrays: addsd 100, 200 8-byte stores; main: 500 8-byte loads, 20
    // 8-byte stores; _dl_runtime_resolve_xsavec: xsavec/xrstor of 1088 bytes, twice.
    assert_eq!(rest.summary.flop.fp64, Some(100));
    assert_eq!(rest.summary.fp_elements["elements_fp_double_1"], 100);
    assert_eq!(rest.summary.instructions, Some(47_474 - 46_050));
    assert_eq!(
        rest.summary.bytes.map(|b| (b.read, b.written)),
        Some((4000 + 2176, 1600 + 160 + 2176))
    );
    assert_functions_add_up(&r);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(
        w.starts_with("SDE lists 4 functions in the whole-process function report"),
        "{w}"
    );
    assert!(w.contains("they hold 73100 of the 73200 FLOP (99.86%) and 46050 of the 47474 instructions (97.00%)"), "{w}");
    assert!(
        w.contains(&format!("the rest is the row `{UNLISTED}`")),
        "{w}"
    );
}

/// The file as SDE writes it without the whole process's function report
/// (`-global_functions 0`): the per-thread reports only.
fn without_process_report(t: &str) -> String {
    let start = t.find("# EMIT_GLOBAL_TOP_BLOCK_STATS").unwrap();
    let end = t.rfind("# END_PER_FUNCTION_STATS").unwrap();
    let end = end + t[end..].find('\n').unwrap() + 1;
    format!("{}{}", &t[..start], &t[end..])
}

#[test]
fn per_thread_reports_are_summed_per_function() {
    // Thread 0 lists its 7 functions, thread 1 its 3: complete, so no rest row.
    let m = parse_mix(&without_process_report(&text(MIX)), MIX).unwrap();
    assert!(m.function_tables.iter().all(|t| t.tid.is_some()));
    let r = report_from(&m, Some(&mask(MASK))).unwrap();
    assert_eq!(
        flop(&r),
        [
            (DAXPY, 32_000),
            ("masked_update", 27_700),
            ("scale_sse", 12_000),
            ("libm.so.6+0x150a0", 1400),
            ("init_arrays", 100),
            ("main", 0),
            ("_dl_runtime_resolve_xsavec", 0),
        ]
    );
    // The same rows as the process's report for the functions both list.
    let whole = report(MIX, Some(MASK));
    for f in &whole.functions[..4] {
        assert_eq!(row(&r, &f.name).summary, f.summary, "{}", f.name);
    }
    assert_eq!(row(&r, DAXPY).summary.instructions, Some(15_000 + 9000));
    assert_functions_add_up(&r);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn without_a_mask_profile_functions_leave_out_what_the_totals_leave_out() {
    // No profile: masked lanes (5300) and the second FLOP of the AVX-512 FMAs
    // (12800, as masked ones ran) are left out of the totals and so of
    // masked_update, whose FLOP are its unmasked elements, 1200 x 8.
    let r = report(MIX, None);
    assert_eq!(r.summary.flop.total, 73_200 - 5300 - 12_800);
    assert_eq!(row(&r, "masked_update").summary.flop.total, 9600);
    assert_eq!(row(&r, DAXPY).summary.flop.total, 32_000);
    // Every table adds up, in the totals and in each row.
    crate::common::assert_one_truth(&r.summary);
    r.functions
        .iter()
        .for_each(|f| crate::common::assert_one_truth(&f.summary));
    assert_functions_add_up(&r);
    let w = r.warnings.join("\n");
    assert!(w.contains("1400 masked FP instructions ran"), "{w}");
    assert!(w.contains("SDE lists 4 functions"), "{w}");
}

#[test]
fn masked_lanes_a_profile_cannot_place_are_said_and_no_rest_row_is_made() {
    // Thread 0's masked vaddpd moved out of masked_update's [0x401c40, 0x401d9a):
    // its details then count 900 masked fp64 x8 executions, the mix 1400.
    let moved = text(MASK).replacen("0x0000000000401c6c", "0x0000000000401e00", 1);
    let r = report_from(
        &parse_mix(&text(MIX), MIX).unwrap(),
        Some(&parse_mask_profile(&moved, MASK).unwrap()),
    )
    .unwrap();
    // Its masked lanes (5300) are left out; FMA lanes come from the FMA details.
    assert_eq!(row(&r, "masked_update").summary.flop.total, 27_700 - 5300);
    assert!(r.functions.iter().all(|f| f.name != UNLISTED));
    assert_eq!(r.summary.flop.total, 73_200, "the totals do not change");
    let w = r.warnings.join("\n");
    assert!(
        w.contains("masked_update: the mix counts masked FP instructions 1400 fp64 x8, the profile's details at [0x401c40, 0x401d9a) 900 fp64 x8"),
        "{w}"
    );
    assert!(
        w.contains("`functions` does not add up to the totals"),
        "{w}"
    );
}

#[test]
fn sections_from_another_run_are_flagged_not_patched() {
    // The process report's daxpy claims more elements than the whole run.
    let t = text(MIX);
    let at = t.find("#GLOBAL FUNCTION TOTALS").unwrap();
    let tail = t[at..].replacen(
        "*elements_fp_double_4                                            4000",
        "*elements_fp_double_4                                            9000",
        1,
    );
    let r = report_from(
        &parse_mix(&format!("{}{tail}", &t[..at]), MIX).unwrap(),
        Some(&mask(MASK)),
    )
    .unwrap();
    assert!(r.functions.iter().all(|f| f.name != UNLISTED));
    let w = r.warnings.join("\n");
    assert!(
        w.contains(
            "the per-function sections add up to more than the global section (FLOP 93100 vs 73200"
        ),
        "{w}"
    );
    assert!(w.contains("elements_fp_double_4 9000 vs 4000"), "{w}");
}

#[test]
fn a_file_without_per_function_sections_says_how_to_get_them() {
    let t = [
        "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
        "*elements_fp_double_4   10",
        "*mem-read-32            10",
        "*total                  30",
        "# END_GLOBAL_DYNAMIC_STATS",
    ]
    .join("\n");
    let r = report_from(&parse_mix(&t, "m").unwrap(), None).unwrap();
    assert!(r.functions.is_empty());
    assert_eq!(r.summary.flop.total, 40);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(
        w.starts_with("no per-function sections (`EMIT_PER_FUNCTION_STATS`): `functions` is empty"),
        "{w}"
    );
    assert!(w.contains("-global_functions"), "{w}");
}

#[test]
fn every_fixture_s_functions_add_up_to_its_totals() {
    for (mix, mask) in [(MIX, None), (MIX, Some(MASK))] {
        assert_functions_add_up(&report(mix, mask));
    }
    // These list every function they ran: nothing to warn about.
    for (mix, mask) in [
        ("hsw-iform.txt", None),
        ("skx-avx512-iform.txt", None),
        ("skx-avx512-iform.txt", Some("skx-avx512-mask.xml")),
        ("ranks/sde-mix-out.1001.txt", None),
        ("ranks/sde-mix-out.1002.txt", None),
    ] {
        let r = report(mix, mask);
        assert_functions_add_up(&r);
        assert!(
            r.functions.iter().all(|f| f.name != UNLISTED)
                && r.warnings.iter().all(|w| !w.contains("function")),
            "{mix}: {:?}",
            r.warnings
        );
    }
    // hsw-iform.txt: kernel holds every FLOP (fma.rs), main and the lazy binder none.
    let r = report("hsw-iform.txt", None);
    assert_eq!(
        flop(&r),
        [
            ("kernel", 89_905),
            ("main", 0),
            ("_dl_runtime_resolve_xsave", 0)
        ]
    );
    assert_eq!(
        row(&r, "_dl_runtime_resolve_xsave").module,
        "/lib64/ld-linux-x86-64.so.2"
    );
    assert_eq!(
        row(&r, "_dl_runtime_resolve_xsave")
            .summary
            .bytes
            .map(|b| b.read),
        Some(20 * 8 + 3 * 512 + 2 * 832)
    );
}

#[test]
fn function_rows_keep_the_json_contract() {
    let r = report(MIX, Some(MASK));
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let f = &v["functions"][0];
    assert_eq!(f["name"], DAXPY);
    assert_eq!(f["module"], EXE);
    assert_eq!(f["address"], "0x401b40");
    assert_eq!(f["flop"]["total"], 32_000);
    assert_eq!(f["bytes"]["read"], 256_000);
    assert_eq!(f["instructions"], 24_000);
    for null in ["file", "line", "time_s", "samples", "gflops", "inclusive"] {
        assert!(f[null].is_null(), "{null}: {}", f[null]);
    }
    assert!(f["arithmetic_intensity"]["l1"].is_number());
    assert_eq!(v["functions"][4]["name"], UNLISTED);
    assert_eq!(Report::from_json(&r.to_json()).unwrap(), r);
}
