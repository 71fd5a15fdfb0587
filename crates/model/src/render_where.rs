//! The "Top functions" and "Top loops" tables of the text report.

use crate::attribution::ANONYMOUS_MODULE;
use crate::render::{duration, fit, share, thousands};
use crate::report::{Report, Summary};
use std::fmt::Write;

/// Percent of the report's peak that `gflops` reaches, for the precision
/// that dominates `s`'s FLOP.
fn percent_of_peak(r: &Report, s: &Summary, gflops: Option<f64>) -> Option<f64> {
    let (g, p) = (gflops?, r.peak.as_ref()?);
    let peak = if s.flop.fp32.unwrap_or(0) > s.flop.fp64.unwrap_or(0) {
        p.gflops_fp32
    } else {
        p.gflops_fp64
    };
    (peak > 0.0).then(|| 100.0 * g / peak)
}

fn num(x: Option<f64>, digits: usize) -> String {
    x.map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

fn time_cell(t: Option<f64>, total: Option<f64>, samples: Option<u64>) -> String {
    match (t, samples) {
        (Some(t), Some(n)) => {
            let pct = total
                .filter(|x| *x > 0.0)
                .map(|x| format!(" {:.1}%", 100.0 * t / x))
                .unwrap_or_default();
            format!("{}{pct} ({n})", duration(t))
        }
        _ => "-".into(),
    }
}

/// Short module name: the file name of its path.
fn short(module: &str) -> &str {
    module.rsplit('/').next().unwrap_or(module)
}

/// The tables, `top` rows each (nothing when the report attributes nothing).
pub fn top_tables(r: &Report, top: usize) -> String {
    let mut out = String::new();
    let total = r.summary.flop.total;
    let sampled: Option<f64> = {
        let t: f64 = r.functions.iter().filter_map(|f| f.time_s).sum();
        (t > 0.0).then_some(t)
    };
    if !r.functions.is_empty() && top > 0 {
        let _ = writeln!(
            out,
            "\nTop functions (of {}){:>w$} {:>7} {:>9} {:>8} {:>7} time (samples)",
            r.functions.len(),
            "FLOP",
            "share",
            "GFLOP/s",
            "FLOP/B",
            "%peak",
            w = 44usize.saturating_sub(format!("{}", r.functions.len()).len()),
        );
        // Functions with FLOP; all of them by instructions when none has any.
        let any_flop = r.functions.iter().any(|f| f.summary.flop.total > 0);
        let shown = r
            .functions
            .iter()
            .filter(|f| !any_flop || f.summary.flop.total > 0);
        for f in shown.take(top) {
            // `[anonymous]`, `[vdso]`: bracketed already.
            let module = short(&f.module);
            let name = if module.starts_with('[') {
                format!("{} {module}", f.name)
            } else {
                format!("{} [{module}]", f.name)
            };
            let _ = writeln!(
                out,
                "  {:<40} {:>18} {:>7} {:>9} {:>8} {:>7} {}",
                fit(&name, 40),
                thousands(f.summary.flop.total),
                share(f.summary.flop.total, total),
                num(f.gflops, 3),
                num(f.arithmetic_intensity.l1, 3),
                num(percent_of_peak(r, &f.summary, f.gflops), 1),
                time_cell(f.time_s, sampled, f.samples),
            );
        }
        let unnamed: u64 = r
            .functions
            .iter()
            // Generated code no perf map names: a row a page, named by it.
            .filter(|f| f.module == ANONYMOUS_MODULE && f.name.starts_with(ANONYMOUS_MODULE))
            .map(|f| f.summary.flop.total)
            .sum();
        if unnamed > 0 {
            let _ = writeln!(
                out,
                "  ({} of the FLOP in generated code without names, a row a page: a JIT names its code in /tmp/perf-PID.map when asked, e.g. node --perf-basic-prof, erl +JPperf map, and flopscope reads it)",
                share(unnamed, total),
            );
        }
    }
    let mut loops: Vec<(usize, &crate::LoopRow)> = r.loops.iter().enumerate().collect();
    loops.retain(|(_, l)| l.summary.flop.total > 0);
    loops.sort_by_key(|(_, l)| std::cmp::Reverse(l.summary.flop.total));
    if !loops.is_empty() && top > 0 {
        let _ = writeln!(
            out,
            "\nTop loops (with FLOP: {})                 {:>12} {:>9} {:>18} {:>7} {:>9} {:>8} {:>9} time (samples)",
            loops.len(),
            "iterations",
            "trip",
            "FLOP",
            "share",
            "FLOP/it",
            "FLOP/B",
            "GFLOP/s",
        );
        for (i, l) in loops.into_iter().take(top) {
            let at = match (&l.file, l.line) {
                (Some(f), Some(n)) => format!("{}:{n}", short(f)),
                _ => l.header.clone(),
            };
            let nest = l.parent.map(|p| format!(" in #{p}")).unwrap_or_default();
            let name = format!("#{i} {} {at}{nest}", l.function);
            let trip = (l.entries > 0).then(|| l.iterations as f64 / l.entries as f64);
            let _ = writeln!(
                out,
                "  {:<40} {:>12} {:>9} {:>18} {:>7} {:>9} {:>8} {:>9} {}",
                fit(&name, 40),
                thousands(l.iterations),
                num(trip, 1),
                thousands(l.summary.flop.total),
                share(l.summary.flop.total, total),
                num(l.flop_per_iteration, 1),
                num(l.arithmetic_intensity.l1, 3),
                num(l.gflops, 3),
                time_cell(l.time_s, sampled, l.samples),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::FunctionRow;

    #[test]
    fn generated_code_reads_as_its_jit_names_it() {
        let mut r = Report::new("native", vec!["node".into()]);
        for (name, module, flop) in [
            ("JS:*run /home/u/app/solver.js:27:13", "[anonymous]", 30),
            ("Builtins_Add", "/usr/bin/node", 10),
        ] {
            let mut f = FunctionRow {
                name: name.into(),
                module: module.into(),
                ..Default::default()
            };
            f.summary.flop.total = flop;
            r.summary.flop.total += flop;
            r.functions.push(f);
        }
        let text = top_tables(&r, 5);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| l[2..42].trim_end())
            .collect();
        assert_eq!(
            rows,
            ["JS:*run solver.js:27:13 [anonymous]", "Builtins_Add [node]"],
            "{text}"
        );
        assert!(!text.contains("without names"), "{text}");
        // Code no perf map names: its share, and how to name it.
        r.functions[0].name = "[anonymous]+0x7f3a2c000".into();
        let text = top_tables(&r, 5);
        assert!(
            text.contains("  (75.0% of the FLOP in generated code without names,"),
            "{text}"
        );
    }
}
