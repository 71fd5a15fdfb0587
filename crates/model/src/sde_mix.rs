//! A report as an Intel SDE instruction mix (`sde -iform 1 -omix FILE`): the
//! `EMIT_GLOBAL_DYNAMIC_STATS` section that scripts written for SDE read, so
//! that they give flopscope's totals.
//!
//! The scripts' arithmetic (NERSC's `parse-sde.sh`, shared/seeds/003; Intel's
//! "Calculating FLOP using Intel SDE", shared/seeds/000), which
//! [`parse_sde_totals`] re-implements:
//! - FLOP of a precision = sum over n of `*elements_fp_<single|double>_<n>` x n,
//!   plus, for every FMA iform line, its count x its lanes (the elements
//!   counters count an FMA once; this adds its second FLOP per lane);
//! - bytes = sum over sizes of `*mem-read-<size>` x size and
//!   `*mem-write-<size>` x size.
//!
//! What is written, per precision:
//! - every instruction row whose FLOP is its lanes (FMA: twice its lanes) per
//!   execution goes in as SDE itself counts it: its executions under
//!   `*elements_fp_<word>_<lanes>`, and an FMA also under the VEX (EVEX for
//!   512-bit) iform of its precision and width, `VFMADD231PD_YMMqq_YMMqq_YMMqq`,
//!   whose lanes x count is exactly the FMA's second FLOP;
//! - the rows SDE's counters cannot express (AVX-512 rows with an opmask,
//!   whose FLOP counts active lanes only; dot products, whose FLOP follows
//!   the imm8) go in as their FLOP under the one-element counter
//!   `*elements_fp_<word>_1`, and a comment line says how much;
//! - when a report's instruction rows do not itemize its FLOP (hardware
//!   counters, an SDE import), its `fp_elements` counters and FMA rows are
//!   written and the rest of the precision's FLOP, if any, goes under the
//!   one-element counter as above.
//!
//! x87 is left out, as SDE leaves it out of its element counters; fp16 and
//! bf16 are written (`half`, `bf16`) but the NERSC arithmetic reads only
//! single and double. Comment lines say so whenever such FLOP exists. Comment
//! lines never name a counter, so that a script that greps for counter names
//! anywhere on a line reads only the counter rows.
//!
//! Bytes: the report's access-size histograms as `*mem-read-<size>` /
//! `*mem-write-<size>`; bytes the histogram does not hold (an engine that
//! counts bytes without sizes) go under size 1, with a comment.

use crate::report::{Report, Summary};
use crate::vocab::{OpClass, Precision};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Lane counts the scripts know (`*elements_fp_<word>_<n>`).
const SDE_LANES: [u32; 5] = [1, 2, 4, 8, 16];

/// The FMA iform SDE prints for an FMA of `precision` computing `lanes`
/// elements of a `width_bits` register, or `None` for a shape it has no
/// iform for. Scalar forms compute one lane whatever the register.
pub fn fma_iform(precision: Precision, width_bits: u32, lanes: u32) -> Option<&'static str> {
    use Precision::*;
    Some(match (precision, lanes, width_bits) {
        (Fp64, 1, _) => "VFMADD231SD_XMMdq_XMMq_XMMq",
        (Fp64, 2, 128) => "VFMADD231PD_XMMdq_XMMdq_XMMdq",
        (Fp64, 4, 256) => "VFMADD231PD_YMMqq_YMMqq_YMMqq",
        (Fp64, 8, 512) => "VFMADD231PD_ZMMf64_MASKmskw_ZMMf64_ZMMf64_AVX512",
        (Fp32, 1, _) => "VFMADD231SS_XMMdq_XMMd_XMMd",
        (Fp32, 4, 128) => "VFMADD231PS_XMMdq_XMMdq_XMMdq",
        (Fp32, 8, 256) => "VFMADD231PS_YMMqq_YMMqq_YMMqq",
        (Fp32, 16, 512) => "VFMADD231PS_ZMMf32_MASKmskw_ZMMf32_ZMMf32_AVX512",
        (Fp16, 1, _) => "VFMADD231SH_XMMf16_MASKmskw_XMMf16_XMMf16_AVX512",
        (Fp16, 8, 128) => "VFMADD231PH_XMMf16_MASKmskw_XMMf16_XMMf16_AVX512",
        (Fp16, 16, 256) => "VFMADD231PH_YMMf16_MASKmskw_YMMf16_YMMf16_AVX512",
        (Fp16, 32, 512) => "VFMADD231PH_ZMMf16_MASKmskw_ZMMf16_ZMMf16_AVX512",
        _ => return None,
    })
}

/// The counter rows of one precision.
#[derive(Default)]
struct PrecisionLines {
    /// lanes -> executions (`*elements_fp_<word>_<lanes>`).
    elements: BTreeMap<u32, u64>,
    /// FMA iform -> executions.
    fma: BTreeMap<&'static str, u64>,
    /// FLOP written as one-element counts because SDE's counters cannot
    /// express them.
    equivalent_flop: u64,
    /// FLOP of the precision that the counters cannot reach (the report's
    /// counters already exceed its FLOP): the export will not add up.
    shortfall: Option<String>,
}

impl PrecisionLines {
    fn flop(&self) -> u128 {
        let e: u128 = self
            .elements
            .iter()
            .map(|(n, c)| u128::from(*n) * u128::from(*c))
            .sum();
        let f: u128 = self
            .fma
            .iter()
            .map(|(name, c)| u128::from(iform_lanes(name).unwrap_or(0)) * u128::from(*c))
            .sum();
        e + f
    }
}

fn lines_of(s: &Summary, p: Precision) -> PrecisionLines {
    let mut out = PrecisionLines::default();
    let rows: Vec<_> = s
        .fp_instructions
        .iter()
        .filter(|r| r.precision == p)
        .collect();
    let itemized: u64 = rows.iter().map(|r| r.flop).sum();
    let target = s.flop.get(p).unwrap_or(itemized);
    if itemized == target {
        for r in rows {
            let per_lane = if r.op == OpClass::Fma { 2 } else { 1 };
            let iform = if r.op == OpClass::Fma {
                fma_iform(p, r.width_bits, r.lanes)
            } else {
                None
            };
            let expressible = !r.masked
                && SDE_LANES.contains(&r.lanes)
                && (r.op != OpClass::Fma || iform.is_some())
                && u128::from(r.count) * u128::from(r.lanes) * per_lane == u128::from(r.flop);
            if expressible {
                *out.elements.entry(r.lanes).or_default() += r.count;
                if let Some(name) = iform {
                    *out.fma.entry(name).or_default() += r.count;
                }
            } else {
                *out.elements.entry(1).or_default() += r.flop;
                out.equivalent_flop += r.flop;
            }
        }
        return out;
    }
    // The rows do not itemize the FLOP: start from the element counters.
    let Some(word) = p.sde_word() else { return out };
    let prefix = format!("elements_fp_{word}_");
    for (key, n) in &s.fp_elements {
        if let Some(lanes) = key
            .strip_prefix(&prefix)
            .and_then(|l| l.parse::<u32>().ok())
        {
            *out.elements.entry(lanes).or_default() += n;
        }
    }
    for r in rows.iter().filter(|r| r.op == OpClass::Fma && !r.masked) {
        if let Some(name) = fma_iform(p, r.width_bits, r.lanes) {
            *out.fma.entry(name).or_default() += r.count;
        }
    }
    let written = out.flop();
    match u128::from(target).checked_sub(written) {
        Some(rest) => {
            let rest = rest as u64; // rest <= target, a u64
            if rest > 0 {
                *out.elements.entry(1).or_default() += rest;
                out.equivalent_flop += rest;
            }
        }
        None => {
            out.shortfall = Some(format!(
                "{}: the report's element counters give {written} FLOP, more than its {target}: the totals will not match",
                p.key()
            ));
        }
    }
    out
}

/// Lanes of an FMA iform name as the scripts read it: scalar (SD/SS/SH) = 1,
/// packed = register bits of the first operand / element bits.
pub fn iform_lanes(name: &str) -> Option<u32> {
    let (iclass, operands) = name.split_once('_')?;
    if !iclass.starts_with("VF") || !iclass.contains("M") {
        return None;
    }
    let kind = iclass.get(iclass.len().checked_sub(2)?..)?;
    let (element_bits, scalar) = match kind {
        "PD" => (64, false),
        "PS" => (32, false),
        "PH" => (16, false),
        "SD" | "SS" | "SH" => (0, true),
        _ => return None,
    };
    if scalar {
        return Some(1);
    }
    let register = operands.split('_').next()?;
    let bits = match register.get(..3)? {
        "XMM" => 128,
        "YMM" => 256,
        "ZMM" => 512,
        _ => return None,
    };
    Some(bits / element_bits)
}

fn counter(out: &mut String, name: &str, count: u64) {
    let _ = writeln!(out, "{name:<56} {count:>20}");
}

/// Access-size histogram rows of one direction, with the bytes it misses.
fn access_rows(
    hist: Option<&BTreeMap<String, u64>>,
    bytes: Option<u64>,
) -> (BTreeMap<u64, u64>, Option<String>) {
    let mut rows: BTreeMap<u64, u64> = BTreeMap::new();
    for (size, n) in hist.into_iter().flatten() {
        if let Ok(size) = size.parse::<u64>() {
            *rows.entry(size).or_default() += n;
        }
    }
    let in_hist: u128 = rows
        .iter()
        .map(|(s, n)| u128::from(*s) * u128::from(*n))
        .sum();
    let Some(bytes) = bytes else {
        return (rows, None);
    };
    match u128::from(bytes).checked_sub(in_hist) {
        Some(0) => (rows, None),
        Some(rest) => {
            *rows.entry(1).or_default() += rest as u64;
            (rows, Some(format!("{rest} bytes the report counts without an access size are written as 1-byte accesses")))
        }
        None => (rows, Some(format!("the access sizes add up to {in_hist} bytes, more than the report's {bytes}: the totals will not match"))),
    }
}

/// The mix text of a whole report (its top-level counts; regions and
/// processes are already in them).
pub fn sde_mix(r: &Report) -> String {
    let header = vec![
        format!("command: {}", r.command.join(" ")),
        format!(
            "engine: {}{}",
            r.engine,
            if r.complete {
                ""
            } else {
                " (PARTIAL counts: the program did not run to its end)"
            }
        ),
    ];
    sde_mix_of(&r.summary, &header)
}

/// The mix text of one summary (a whole report or one region), with
/// `header` lines written as comments first.
pub fn sde_mix_of(s: &Summary, header: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# flopscope {}: an instruction mix in Intel SDE's -omix format, written from a flopscope report", env!("CARGO_PKG_VERSION"));
    for h in header {
        let _ = writeln!(out, "# {}", h.replace('\n', " "));
    }
    let mut notes = Vec::new();
    let mut per = Vec::new();
    for p in [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Fp16,
        Precision::Bf16,
    ] {
        let lines = lines_of(s, p);
        if lines.equivalent_flop > 0 {
            notes.push(format!(
                "{}: {} FLOP of masked AVX-512 or dot-product instructions (or not itemized by instruction) are written as one-element counts",
                p.key(),
                lines.equivalent_flop
            ));
        }
        if let Some(n) = &lines.shortfall {
            notes.push(n.clone());
        }
        per.push((p, lines));
    }
    let flop_of = |p: Precision| {
        per.iter()
            .find(|(q, _)| *q == p)
            .map(|(_, l)| l.flop())
            .unwrap_or(0)
    };
    let _ = writeln!(
        out,
        "# FLOP as SDE scripts count this file (elements x lanes, plus FMA lines x lanes): fp64 {}, fp32 {}",
        flop_of(Precision::Fp64),
        flop_of(Precision::Fp32)
    );
    if let Some(x87) = s.flop.x87.filter(|n| *n > 0) {
        notes.push(format!(
            "x87: {x87} FLOP are left out: SDE's element counters do not count x87 instructions"
        ));
    }
    for p in [Precision::Fp16, Precision::Bf16] {
        if flop_of(p) > 0 {
            notes.push(format!(
                "{}: {} FLOP are written, but NERSC's script sums single and double precision only",
                p.key(),
                flop_of(p)
            ));
        }
    }
    let (reads, read_note) = access_rows(
        s.mem_accesses.as_ref().map(|m| &m.read),
        s.bytes.map(|b| b.read),
    );
    let (writes, write_note) = access_rows(
        s.mem_accesses.as_ref().map(|m| &m.write),
        s.bytes.map(|b| b.written),
    );
    notes.extend(read_note.map(|n| format!("reads: {n}")));
    notes.extend(write_note.map(|n| format!("writes: {n}")));
    if s.bytes.is_none() {
        notes.push("the report has no byte counts: no access rows are written".into());
    }
    for n in &notes {
        let _ = writeln!(out, "# {n}");
    }
    out.push_str("# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1\n#\n# $global-dynamic-counts\n#\n");
    let _ = writeln!(out, "# {:<54} {:>20}\n#", "iform", "count");
    for (p, lines) in &per {
        let Some(word) = p.sde_word() else { continue };
        for (lanes, n) in &lines.elements {
            counter(&mut out, &format!("*elements_fp_{word}_{lanes}"), *n);
        }
    }
    let mut fma: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, lines) in &per {
        for (name, n) in &lines.fma {
            *fma.entry(name).or_default() += n;
        }
    }
    for (name, n) in &fma {
        counter(&mut out, name, *n);
    }
    for (size, n) in &reads {
        counter(&mut out, &format!("*mem-read-{size}"), *n);
    }
    for (size, n) in &writes {
        counter(&mut out, &format!("*mem-write-{size}"), *n);
    }
    if s.bytes.is_some() {
        counter(&mut out, "*mem-read", reads.values().sum());
        counter(&mut out, "*mem-write", writes.values().sum());
    }
    if let Some(total) = s.instructions {
        counter(&mut out, "*total", total);
    }
    out.push_str("# END_GLOBAL_DYNAMIC_STATS\n");
    out
}

/// What NERSC's `parse-sde.sh` arithmetic gives for a mix text: FLOP of
/// single and double precision, bytes read and written, from the last
/// `EMIT_GLOBAL_DYNAMIC_STATS` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdeTotals {
    pub flop_single: u128,
    pub flop_double: u128,
    pub bytes_read: u128,
    pub bytes_written: u128,
}

impl SdeTotals {
    pub fn flop(&self) -> u128 {
        self.flop_single + self.flop_double
    }
}

/// Reads a mix text the way SDE scripts do (see the module docs): a
/// re-implementation to check an export against, independent of the writer.
pub fn parse_sde_totals(text: &str) -> SdeTotals {
    let mut sections: Vec<Vec<(&str, u128)>> = Vec::new();
    let mut open: Option<Vec<(&str, u128)>> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            if line.contains("EMIT_GLOBAL_DYNAMIC_STATS") {
                open = Some(Vec::new());
            } else if line.contains("END_GLOBAL_DYNAMIC_STATS") {
                sections.extend(open.take());
            }
            continue;
        }
        let mut words = line.split_whitespace();
        if let (Some(name), Some(count), Some(rows)) = (words.next(), words.next(), open.as_mut()) {
            if let Ok(n) = count.parse::<u128>() {
                rows.push((name, n));
            }
        }
    }
    let mut t = SdeTotals::default();
    for (name, n) in sections.pop().unwrap_or_default() {
        let elements = |word: &str| {
            name.strip_prefix("*elements_fp_")
                .and_then(|r| r.strip_prefix(word))
                .and_then(|r| r.strip_prefix('_'))
                .and_then(|lanes| lanes.parse::<u128>().ok())
                .filter(|l| SDE_LANES.contains(&(*l as u32)))
        };
        if let Some(l) = elements("single") {
            t.flop_single += l * n;
        } else if let Some(l) = elements("double") {
            t.flop_double += l * n;
        } else if let Some(size) = name
            .strip_prefix("*mem-read-")
            .and_then(|s| s.parse::<u128>().ok())
        {
            t.bytes_read += size * n;
        } else if let Some(size) = name
            .strip_prefix("*mem-write-")
            .and_then(|s| s.parse::<u128>().ok())
        {
            t.bytes_written += size * n;
        } else if name.starts_with("VF") {
            let lanes = u128::from(iform_lanes(name).unwrap_or(0));
            let iclass = name.split('_').next().unwrap_or("");
            if iclass.ends_with("PD") || iclass.ends_with("SD") {
                t.flop_double += lanes * n;
            } else if iclass.ends_with("PS") || iclass.ends_with("SS") {
                t.flop_single += lanes * n;
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{Counts, FpKey};
    use crate::vocab::FlopOp;

    #[allow(clippy::too_many_arguments)] // one argument per column of an SDE row
    fn add(
        c: &mut Counts,
        p: Precision,
        width_bits: u32,
        lanes: u32,
        op: OpClass,
        masked: bool,
        count: u64,
        flop: u64,
        booked: FlopOp,
    ) {
        let key = FpKey {
            precision: p,
            width_bits,
            lanes,
            op,
            masked,
        };
        c.add_fp(key, count, flop, booked);
    }

    /// Every kind of row: plain, FMA at every width, masked AVX-512 (active
    /// lanes only), a dot product whose imm8 selects fewer lanes, x87.
    fn mixed() -> Report {
        let mut c = Counts {
            instructions: 123_456,
            ..Default::default()
        };
        use OpClass::*;
        use Precision::*;
        add(&mut c, Fp64, 256, 4, Fma, false, 1000, 8000, FlopOp::Fma);
        add(&mut c, Fp64, 128, 2, Fma, false, 7, 28, FlopOp::Fma);
        add(&mut c, Fp64, 64, 1, Fma, false, 5, 10, FlopOp::Fma);
        add(&mut c, Fp64, 512, 8, Fma, false, 3, 48, FlopOp::Fma);
        add(&mut c, Fp64, 64, 1, Add, false, 11, 11, FlopOp::Add);
        add(&mut c, Fp64, 128, 2, HAdd, false, 4, 8, FlopOp::Add);
        add(&mut c, Fp64, 512, 8, Fma, true, 9, 2 * 37, FlopOp::Fma);
        add(&mut c, Fp32, 128, 4, Mul, false, 13, 52, FlopOp::Mul);
        add(&mut c, Fp32, 256, 8, Fma, false, 17, 272, FlopOp::Fma);
        add(&mut c, Fp32, 32, 1, Fma, false, 2, 4, FlopOp::Fma);
        add(&mut c, Fp32, 128, 4, Fma, false, 6, 48, FlopOp::Fma);
        add(&mut c, Fp32, 512, 16, Fma, false, 1, 32, FlopOp::Fma);
        add(&mut c, Fp32, 512, 16, Add, true, 3, 19, FlopOp::Add);
        // DPPS with imm8 0x31: 2 multiplies + 1 add per execution, not 4.
        add(&mut c, Fp32, 128, 4, Dot, false, 10, 30, FlopOp::Mul);
        add(&mut c, X87, 80, 1, Add, false, 21, 21, FlopOp::Add);
        c.mem_read.insert(8, 1234);
        c.mem_read.insert(32, 2000);
        c.mem_read.insert(512, 2);
        c.mem_write.insert(16, 77);
        c.mem_write.insert(1, 3);
        let mut r = Report::new("emulate", vec!["./mixed".into(), "10".into()]);
        r.summary = Summary::from_counts(&c);
        r.complete = true;
        r
    }

    #[test]
    fn the_scripts_arithmetic_gives_the_reports_totals() {
        let r = mixed();
        let text = sde_mix(&r);
        let t = parse_sde_totals(&text);
        let f = &r.summary.flop;
        assert_eq!(t.flop_double, u128::from(f.fp64.unwrap()), "{text}");
        assert_eq!(t.flop_single, u128::from(f.fp32.unwrap()), "{text}");
        assert_eq!(t.flop(), u128::from(f.total - f.x87.unwrap()), "{text}");
        let b = r.summary.bytes.unwrap();
        assert_eq!(
            (t.bytes_read, t.bytes_written),
            (u128::from(b.read), u128::from(b.written)),
            "{text}"
        );
        assert!(text.contains("# x87: 21 FLOP are left out"), "{text}");
        assert!(text.contains("VFMADD231PD_YMMqq_YMMqq_YMMqq"), "{text}");
    }

    #[test]
    fn comment_lines_never_name_a_counter() {
        let text = sde_mix(&mixed());
        for line in text.lines().filter(|l| l.starts_with('#')) {
            for word in ["elements_fp", "mem-read", "mem-write", "VFM", "*total"] {
                assert!(!line.contains(word), "comment names {word}: {line}");
            }
        }
    }

    #[test]
    fn reports_without_rows_fall_back_to_the_element_counters() {
        let mut r = mixed();
        // As an SDE import has them: elements counters and FMA rows only.
        r.summary
            .fp_instructions
            .retain(|row| row.op == OpClass::Fma && !row.masked);
        r.summary.mem_accesses = None;
        let t = parse_sde_totals(&sde_mix(&r));
        assert_eq!(t.flop_double, u128::from(r.summary.flop.fp64.unwrap()));
        assert_eq!(t.flop_single, u128::from(r.summary.flop.fp32.unwrap()));
        assert_eq!(t.bytes_read, u128::from(r.summary.bytes.unwrap().read));
    }

    #[test]
    fn iform_lanes_follow_the_register_and_type() {
        assert_eq!(iform_lanes("VFMADD231PD_YMMqq_YMMqq_YMMqq"), Some(4));
        assert_eq!(iform_lanes("VFMADD213SD_XMMdq_XMMq_MEMq"), Some(1));
        assert_eq!(
            iform_lanes("VFMADD132PS_ZMMf32_MASKmskw_ZMMf32_MEMf32_AVX512"),
            Some(16)
        );
        assert_eq!(iform_lanes("VADDPD_YMMqq_YMMqq_YMMqq"), None);
        for p in [Precision::Fp64, Precision::Fp32] {
            for (w, l) in [
                (p.element_bits(), 1),
                (128, 128 / p.element_bits()),
                (256, 256 / p.element_bits()),
                (512, 512 / p.element_bits()),
            ] {
                assert_eq!(
                    iform_lanes(fma_iform(p, w, l).unwrap()),
                    Some(l),
                    "{p:?} {w}"
                );
            }
        }
    }

    #[test]
    fn export_is_stable() {
        insta::assert_snapshot!(sde_mix(&mixed()).replace(env!("CARGO_PKG_VERSION"), "VERSION"));
    }
}
