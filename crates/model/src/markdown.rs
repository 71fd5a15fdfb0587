//! A report as Markdown tables (for a wiki, a pull request, a notebook):
//! the run, FLOP by precision and width, the regions, and for a merge the
//! per-source rows and the load imbalance.

use crate::merge::Merged;
use crate::render::{duration, share, thousands};
use crate::report::{ExitStatus, Report, Summary, WidthRow};
use std::fmt::Write;

/// Escapes text for a Markdown table cell.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// GFLOP/s with three significant digits however small.
pub fn rate(g: f64) -> String {
    if g == 0.0 || g >= 0.001 {
        format!("{g:.3}")
    } else {
        format!("{g:.3e}")
    }
}

fn mean(m: f64) -> String {
    format!(
        "{}.{}",
        thousands(m.trunc() as u64),
        ((m.fract() * 10.0).round() as u64).min(9)
    )
}

fn status(s: &ExitStatus) -> String {
    match s {
        ExitStatus::Code(c) => format!("exit {c}"),
        ExitStatus::Signal(n) => format!("killed by {n}"),
        ExitStatus::Unknown => "unknown".into(),
    }
}

fn mix_table(out: &mut String, s: &Summary) {
    let rows = s.width_mix();
    if rows.is_empty() {
        return;
    }
    out.push_str("\n| precision | width | instructions | FLOP | share of FLOP |\n| --- | --- | ---: | ---: | ---: |\n");
    for WidthRow {
        precision: p,
        label,
        count,
        flop,
    } in rows
    {
        let share = share(flop, s.flop.total);
        let _ = writeln!(
            out,
            "| {} | {label} | {} | {} | {share} |",
            p.key(),
            thousands(count),
            thousands(flop)
        );
    }
}

/// The Markdown of one report.
pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# flopscope report: `{}`\n",
        r.command.join(" ").replace('`', "'")
    );
    let _ = writeln!(
        out,
        "- engine: {}, flopscope {}\n- {}, {}",
        escape(&r.engine),
        escape(&r.tool_version),
        status(&r.exit_status),
        if r.complete {
            "complete counts"
        } else {
            "**PARTIAL counts**"
        }
    );
    let _ = writeln!(
        out,
        "- native time: {}, {}",
        opt(r.native_time_s, duration),
        opt(r.gflops, |g| format!("{} GFLOP/s", rate(g)))
    );
    if let (Some(pct), Some(p)) = (r.percent_of_peak(), &r.peak) {
        let _ = writeln!(
            out,
            "- {pct:.2}% of the {} peak ({:.1} GFLOP/s fp64, {:.1} fp32)",
            escape(&p.source),
            p.gflops_fp64,
            p.gflops_fp32
        );
    }
    let s = &r.summary;
    out.push_str("\n| FLOP (FMA = 2) | fp64 | fp32 | fp16 | bf16 | x87 | bytes read | bytes written | AI(L1) | AI(DRAM) |\n");
    out.push_str("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    let b = s.bytes;
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        thousands(s.flop.total),
        opt(s.flop.fp64, thousands),
        opt(s.flop.fp32, thousands),
        opt(s.flop.fp16, thousands),
        opt(s.flop.bf16, thousands),
        opt(s.flop.x87, thousands),
        opt(b.map(|b| b.read), thousands),
        opt(b.map(|b| b.written), thousands),
        opt(s.intensity_l1(), |a| format!("{a:.4}")),
        opt(r.arithmetic_intensity.dram, |a| format!("{a:.4}")),
    );
    mix_table(&mut out, s);
    if !r.regions.is_empty() {
        out.push_str("\n## Regions\n\n| region | entries | FLOP | bytes read | bytes written | AI(L1) | time | GFLOP/s |\n");
        out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        let mut row = |name: &str, entries: String, s: &Summary, t: Option<f64>, g: Option<f64>| {
            let b = s.bytes;
            let _ = writeln!(
                out,
                "| {} | {entries} | {} | {} | {} | {} | {} | {} |",
                escape(name),
                thousands(s.flop.total),
                opt(b.map(|b| b.read), thousands),
                opt(b.map(|b| b.written), thousands),
                opt(s.intensity_l1(), |a| format!("{a:.4}")),
                opt(t, duration),
                opt(g, rate),
            );
        };
        for reg in &r.regions {
            row(
                &reg.name,
                thousands(reg.entries),
                &reg.summary,
                reg.native_time_s,
                reg.gflops,
            );
        }
        if let Some(u) = &r.unmarked {
            row("(unmarked)", "-".into(), u, None, None);
        }
    }
    if r.threads.len() > 1 {
        out.push_str("\n## Threads\n\n| thread | FLOP |\n| ---: | ---: |\n");
        for t in &r.threads {
            let _ = writeln!(out, "| {} | {} |", t.tid, thousands(t.summary.flop.total));
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in &r.warnings {
            let _ = writeln!(out, "- {}", escape(w));
        }
    }
    out
}

/// The per-source rows and the load imbalance of a merge, as Markdown.
pub fn sources(m: &Merged) -> String {
    let mut out = String::from("\n## Sources\n\n| source | FLOP | share | bytes read | bytes written | time | GFLOP/s | status |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    let total = m.report.summary.flop.total;
    for (label, p) in m.labels.iter().zip(&m.report.processes) {
        let b = p.summary.bytes;
        let share = share(p.summary.flop.total, total);
        let _ = writeln!(
            out,
            "| {} | {} | {share} | {} | {} | {} | {} | {}{} |",
            escape(label),
            thousands(p.summary.flop.total),
            opt(b.map(|b| b.read), thousands),
            opt(b.map(|b| b.written), thousands),
            opt(p.native_time_s, duration),
            opt(p.gflops, rate),
            status(&p.exit_status),
            if p.complete { "" } else { ", PARTIAL" },
        );
    }
    let i = &m.imbalance;
    out.push_str("\n| load imbalance | max | mean | min | max / mean |\n| --- | ---: | ---: | ---: | ---: |\n");
    let mut spread = |what: &str, s: &crate::merge::Spread| {
        let _ = writeln!(
            out,
            "| {what} | {} ({}) | {} | {} ({}) | {} |",
            thousands(s.max),
            escape(&s.max_source),
            mean(s.mean),
            thousands(s.min),
            escape(&s.min_source),
            opt(s.ratio(), |r| format!("{r:.3}"))
        );
    };
    spread("FLOP", &i.flop);
    if let Some(b) = &i.bytes {
        spread("bytes", b);
    }
    out
}

/// The Markdown of a merge: the summed report, then the sources.
pub fn merged(m: &Merged) -> String {
    let mut out = markdown(&m.report);
    out.push_str(&sources(m));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{Counts, FpKey, FpTally};
    use crate::merge::{merge, Source};
    use crate::report::Region;
    use crate::units::Seconds;
    use crate::vocab::Precision;
    use crate::vocab::{FlopOp, OpClass};

    fn report(n: u64) -> Report {
        let mut c = Counts {
            instructions: 10 * n,
            ..Default::default()
        };
        c.add_fp(
            FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
            n,
            8 * n,
            FlopOp::Fma,
        );
        let k = FpKey {
            precision: Precision::Fp32,
            width_bits: 32,
            lanes: 1,
            op: OpClass::Add,
            masked: false,
        };
        c.fp_instructions.insert(k, FpTally { count: n, flop: n });
        c.flop.insert((Precision::Fp32, FlopOp::Add), n);
        c.mem_read.insert(32, 3 * n);
        let mut r = Report::new("emulate", vec!["./app".into(), "a|b".into()]);
        r.tool_version = "0.1.0".into();
        r.summary = Summary::from_counts(&c);
        r.exit_status = ExitStatus::Code(0);
        r.complete = true;
        r.regions.push(Region {
            name: "solve_*".into(),
            entries: 2,
            summary: r.summary.clone(),
            native_time_s: Some(0.25),
            gflops: None,
            ..Default::default()
        });
        r.set_native_time(Some(Seconds(0.5)));
        r
    }

    #[test]
    fn cells_are_escaped() {
        assert_eq!(escape("a|b*c_d"), "a\\|b\\*c\\_d");
    }

    #[test]
    fn markdown_of_a_report() {
        insta::assert_snapshot!(markdown(&report(1000)));
    }

    #[test]
    fn markdown_of_a_merge() {
        let m = merge(vec![
            Source {
                label: "rank0.json".into(),
                report: report(1000),
            },
            Source {
                label: "rank1.json".into(),
                report: report(3000),
            },
        ])
        .unwrap();
        insta::assert_snapshot!(merged(&m));
    }
}
