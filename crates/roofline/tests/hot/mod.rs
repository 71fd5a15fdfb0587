//! A report with functions, loops and lines (tests/data/solver.c): a
//! 512^3 blocked dgemm (three nested loops), a triad, a norm whose loop
//! holds an inlined `sq` (so its loop cannot stand over its lines
//! exactly), two stencils (one under 1% of the FLOP) and libm's exp
//! without line information. Timed, or not.

#![allow(dead_code)]

use flopscope_model::{
    ByteTotals, FlopTotals, FunctionRow, Intensity, LineRow, LoopRow, Report, Seconds, Summary,
};

pub const SOURCE: &str = "tests/data/solver.c";
pub const APP: &str = "/opt/solver/bin/solver";
pub const LIBM: &str = "/usr/lib/x86_64-linux-gnu/libm.so.6";
const N: u64 = 512;
const M: u64 = 10_000_000;

fn summary(flop: u64, read: u64, written: u64, instructions: u64) -> Summary {
    Summary {
        flop: FlopTotals {
            total: flop,
            fp64: Some(flop),
            fp32: Some(0),
            ..Default::default()
        },
        bytes: Some(ByteTotals { read, written }),
        instructions: Some(instructions),
        ..Default::default()
    }
}

fn add(a: &Summary, b: &Summary) -> Summary {
    let (x, y) = (a.bytes.unwrap_or_default(), b.bytes.unwrap_or_default());
    summary(
        a.flop.total + b.flop.total,
        x.read + y.read,
        x.written + y.written,
        a.instructions.unwrap_or(0) + b.instructions.unwrap_or(0),
    )
}

fn line(function: &str, module: &str, line: Option<u32>, s: Summary) -> LineRow {
    LineRow {
        file: line.map(|_| SOURCE.to_string()),
        line,
        module: module.into(),
        function: function.into(),
        summary: s,
    }
}

fn lines() -> Vec<LineRow> {
    let n3 = N * N * N;
    vec![
        line("dgemm_block", APP, Some(10), summary(0, 0, 0, 2 * N)),
        line("dgemm_block", APP, Some(11), summary(0, 0, 0, 2 * N * N)),
        line(
            "dgemm_block",
            APP,
            Some(12),
            summary(0, 8 * N * N, 0, N * N),
        ),
        line(
            "dgemm_block",
            APP,
            Some(14),
            summary(2 * n3, 16 * n3, 8 * n3, 4 * n3),
        ),
        line("dgemm_block", APP, Some(18), summary(0, 16, 0, 4)),
        line("stream_triad", APP, Some(21), summary(0, 0, 0, 2 * M)),
        line(
            "stream_triad",
            APP,
            Some(22),
            summary(2 * M, 16 * M, 8 * M, 4 * M),
        ),
        line("norm", APP, Some(28), summary(0, 0, 0, 2 * M)),
        line("norm", APP, Some(29), summary(M, 8 * M, 0, 2 * M)),
        line("norm", APP, Some(31), summary(1, 0, 0, 3)),
        line("sq", APP, Some(6), summary(M, 0, 0, M)),
        line("smooth", APP, Some(35), summary(0, 0, 0, 2 * M / 10)),
        line(
            "smooth",
            APP,
            Some(36),
            summary(5 * M / 10, 24 * M / 10, 8 * M / 10, 8 * M / 10),
        ),
        line("relax", APP, Some(41), summary(0, 0, 0, 2 * M / 10)),
        line(
            "relax",
            APP,
            Some(42),
            summary(2 * M / 10, 16 * M / 10, 8 * M / 10, 5 * M / 10),
        ),
        line("main", APP, Some(47), summary(0, 40, 16, 12)),
        line(
            "__exp_fma",
            LIBM,
            None,
            summary(4_000_000, 1_000_000, 0, 3_000_000),
        ),
    ]
}

fn gflops(flop: u64, t: Option<f64>) -> Option<f64> {
    t.map(|t| flop as f64 / t / 1e9)
}

/// Seconds per function and loop of the timed report.
fn time_of(name: &str) -> f64 {
    match name {
        "dgemm_block" => 0.06,
        "stream_triad" => 0.02,
        "norm" => 0.006,
        "sq" => 0.004,
        "smooth" => 0.004,
        "relax" => 0.002,
        "__exp_fma" => 0.003,
        _ => 0.0001,
    }
}

fn sum_lines(ls: &[LineRow], keep: impl Fn(&LineRow) -> bool) -> Summary {
    ls.iter()
        .filter(|l| keep(l))
        .fold(summary(0, 0, 0, 0), |a, l| add(&a, &l.summary))
}

/// One loop row; `body` is its lines' range in its function.
fn lp(
    ls: &[LineRow],
    function: &str,
    at: u32,
    body: std::ops::RangeInclusive<u32>,
    parent: Option<usize>,
    (iterations, entries): (u64, u64),
    time: Option<f64>,
) -> LoopRow {
    let s = sum_lines(ls, |l| {
        l.function == function && l.line.is_some_and(|n| body.contains(&n))
    });
    LoopRow {
        function: function.into(),
        module: APP.into(),
        file: Some(SOURCE.into()),
        line: Some(at),
        header: format!("0x40{at:04}"),
        parent,
        entries,
        iterations,
        flop_per_iteration: Some(s.flop.total as f64 / iterations as f64),
        bytes_per_iteration: None,
        self_counts: s.clone(),
        arithmetic_intensity: Intensity {
            l1: s.intensity_l1(),
            dram: None,
        },
        gflops: gflops(s.flop.total, time),
        samples: time.map(|t| (t * 10_000.0).round() as u64),
        time_s: time,
        summary: s,
    }
}

/// The report; `timed`: with time per function and loop (as from the
/// sampled native run), else without (as from `count --no-native`).
pub fn report(timed: bool) -> Report {
    let ls = lines();
    let t = |x: f64| timed.then_some(x);
    let mut loops = vec![
        lp(&ls, "dgemm_block", 10, 10..=17, None, (N, 1), t(0.06)),
        lp(
            &ls,
            "dgemm_block",
            11,
            11..=16,
            Some(0),
            (N * N, N),
            t(0.0598),
        ),
        lp(
            &ls,
            "dgemm_block",
            13,
            13..=15,
            Some(1),
            (N * N * N, N * N),
            t(0.059),
        ),
        lp(&ls, "stream_triad", 21, 21..=23, None, (M, 1), t(0.02)),
        lp(&ls, "norm", 28, 28..=30, None, (M, 1), t(0.0098)),
        lp(&ls, "smooth", 35, 35..=37, None, (M / 10, 1), t(0.004)),
        lp(&ls, "relax", 41, 41..=43, None, (M / 10, 1), t(0.002)),
    ];
    // Self counts: without the nested loops.
    loops[0].self_counts = summary(0, 0, 0, 2 * N);
    loops[1].self_counts = summary(0, 8 * N * N, 0, 3 * N * N);
    // The norm loop holds the inlined sq's multiplies.
    let sq = ls
        .iter()
        .find(|l| l.function == "sq")
        .unwrap()
        .summary
        .clone();
    loops[4].summary = add(&loops[4].summary, &sq);
    loops[4].self_counts = loops[4].summary.clone();
    loops[4].gflops = gflops(loops[4].summary.flop.total, t(0.0098));
    let mut functions: Vec<FunctionRow> = Vec::new();
    for l in &ls {
        if functions
            .iter()
            .any(|f| f.name == l.function && f.module == l.module)
        {
            continue;
        }
        let s = sum_lines(&ls, |x| x.function == l.function && x.module == l.module);
        let time = t(time_of(&l.function));
        functions.push(FunctionRow {
            name: l.function.clone(),
            module: l.module.clone(),
            address: "0x401000".into(),
            file: l.file.clone(),
            line: l.line,
            inlined_into: if l.function == "sq" {
                vec!["norm".into()]
            } else {
                Vec::new()
            },
            arithmetic_intensity: Intensity {
                l1: s.intensity_l1(),
                dram: None,
            },
            gflops: gflops(s.flop.total, time),
            samples: time.map(|t| (t * 10_000.0).round() as u64),
            time_s: time,
            inclusive: None,
            summary: s,
        });
    }
    functions.sort_by_key(|f| std::cmp::Reverse(f.summary.flop.total));
    let mut r = Report::new("native", vec!["./solver".into(), "512".into()]);
    r.tool_version = "0.1.0".into();
    r.complete = true;
    r.summary = sum_lines(&ls, |_| true);
    r.functions = functions;
    r.loops = loops;
    r.lines = ls;
    r.set_native_time(t(0.1).map(Seconds));
    r
}
