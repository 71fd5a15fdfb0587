//! Which points a chart shows ([`PointSet`]), and the dots of where the
//! work is: one per loop or per function of a report (Intel Advisor's
//! per-loop roofline), for the rows holding at least a share of the FLOP.
//!
//! A dot sits at the row's arithmetic intensity (L1) and GFLOP/s. GFLOP/s
//! needs the row's time (from the sampled native run): rows without one
//! cannot be placed, and when none of the chosen rows has a time the chart
//! falls back to the whole program and its regions, with a note saying how
//! to get time ([`Plot::notes`]). A dot's area is proportional to its time,
//! or to its FLOP when some dot has no time; loops are coloured by their
//! function, functions by their module.
//!
//! Loops are placed by their own counts, nested loops included (as their
//! time is), but a loop is drawn only when its own body (`self_counts`,
//! without its nested loops) holds the share: an outer loop whose work is
//! all in an inner one would otherwise sit on top of it.

use crate::points::{dominant, points_of, precisions, PointData};
use crate::Input;
use flopscope_model::{Report, Summary};
use std::collections::HashMap;

/// The points of a chart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PointSet {
    /// Loops when a report has loops doing floating-point work, else regions.
    #[default]
    Auto,
    /// One dot per loop (`loops[]`).
    Loops,
    /// One dot per function (`functions[]`).
    Functions,
    /// The whole program and each region.
    Regions,
    /// The whole program only.
    Total,
}

/// Rows holding at least this share of a report's FLOP get a dot (1%).
pub const DEFAULT_MIN_SHARE: f64 = 0.01;

/// The points to draw, and what the chart must say about them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plot {
    pub points: Vec<PointData>,
    /// Why the chart shows something else than asked (a note on the chart,
    /// and a warning for the command line).
    pub notes: Vec<String>,
}

/// A loop or function row, as a candidate dot.
struct Row<'a> {
    label: String,
    /// What colours it: the loop's function, the function's module.
    group: String,
    summary: &'a Summary,
    /// The FLOP compared with the threshold.
    own_flop: u64,
    time_s: Option<f64>,
    gflops: Option<f64>,
}

/// A file path's last component.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `s`, its absolute paths shortened to file names (a JIT's names carry
/// their source's path), cut to `max` characters with an ellipsis.
pub fn shorten(s: &str, max: usize) -> String {
    let s = flopscope_model::render::without_dirs(s);
    if s.chars().count() <= max {
        s
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// A loop's name: `function file:line`; without a source file (generated
/// code, a binary without line tables) `function (loop #i)`, `i` its
/// index in the report, as the text tables number loops.
pub fn loop_label(function: &str, file: Option<&str>, line: Option<u32>, i: usize) -> String {
    match (file, line) {
        (Some(f), Some(l)) => format!("{} {}:{l}", shorten(function, 40), file_name(f)),
        (Some(f), None) => format!("{} {}", shorten(function, 40), file_name(f)),
        _ => format!("{} (loop #{i})", shorten(function, 40)),
    }
}

fn rate(flop: u64, time: Option<f64>) -> Option<f64> {
    time.filter(|t| *t > 0.0).map(|t| flop as f64 / t / 1e9)
}

fn loop_rows(r: &Report) -> Vec<Row<'_>> {
    r.loops
        .iter()
        .enumerate()
        .map(|(i, l)| Row {
            label: loop_label(&l.function, l.file.as_deref(), l.line, i),
            group: format!("{}\u{0}{}", l.module, l.function),
            summary: &l.summary,
            own_flop: l.self_counts.flop.total,
            time_s: l.time_s,
            gflops: l.gflops.or_else(|| rate(l.summary.flop.total, l.time_s)),
        })
        .collect()
}

fn function_rows(r: &Report) -> Vec<Row<'_>> {
    r.functions
        .iter()
        .map(|f| Row {
            label: shorten(&f.name, 48),
            group: f.module.clone(),
            summary: &f.summary,
            own_flop: f.summary.flop.total,
            time_s: f.time_s,
            gflops: f.gflops.or_else(|| rate(f.summary.flop.total, f.time_s)),
        })
        .collect()
}

/// The dots of one report's loops or functions, largest first, each with
/// its colour key; notes when there are none to place.
fn dots(
    r: &Report,
    source: Option<&str>,
    loops: bool,
    min_share: f64,
    notes: &mut Vec<String>,
) -> Option<Vec<(PointData, String)>> {
    let what = if loops { "loop" } else { "function" };
    let prefix = source.map(|s| format!("{s}: ")).unwrap_or_default();
    let total = r.summary.flop.total;
    let mut rows: Vec<Row> = if loops {
        loop_rows(r)
    } else {
        function_rows(r)
    };
    rows.retain(|w| {
        w.summary.flop.total > 0
            && total > 0
            && w.own_flop as f64 >= min_share * total as f64
            && w.own_flop > 0
    });
    rows.sort_by(|a, b| {
        b.summary
            .flop
            .total
            .cmp(&a.summary.flop.total)
            .then_with(|| a.label.cmp(&b.label))
    });
    let pct = format!("{}%", 100.0 * min_share);
    if rows.is_empty() {
        notes.push(format!(
            "{prefix}no {what} holds {pct} of the FLOP or more: showing the whole program and its regions."
        ));
        return None;
    }
    if rows.iter().all(|w| w.gflops.is_none()) {
        let n = rows.len();
        let held = if n == 1 {
            format!("1 {what} holds")
        } else {
            format!("{n} {what}s hold")
        };
        // Sampled and still untimed: the run was over before its samples
        // could time anything.
        let how = match &r.sampling {
            Some(s) if s.samples < 10 => format!(
                "the counted run took {} samples of {} ms, too few to time them: count a longer run, or add --runs N to `flopscope count`",
                s.samples,
                s.interval_s * 1e3
            ),
            _ => "time them: count under the native engine, or add --runs N to `flopscope count`".into(),
        };
        notes.push(format!(
            "{prefix}{held} {pct} of the FLOP or more, but the report has no time per {what}, so no GFLOP/s: \
             they cannot be placed on the performance axis; {how}. Showing the whole program instead."
        ));
        return None;
    }
    let timed = rows.iter().all(|w| w.time_s.is_some_and(|t| t > 0.0));
    let weight = |w: &Row| {
        if timed {
            w.time_s.unwrap_or(0.0)
        } else {
            w.summary.flop.total as f64
        }
    };
    let max = rows.iter().map(weight).fold(0.0, f64::max);
    let label = |l: &str| match source {
        Some(s) => format!("{s}: {l}"),
        None => l.to_string(),
    };
    Some(
        rows.iter()
            .map(|w| {
                (
                    PointData {
                        label: label(&w.label),
                        whole_program: false,
                        flop: w.summary.flop.total,
                        gflops: w.gflops,
                        ai_l1: w.summary.intensity_l1(),
                        ai_dram: None,
                        precision: dominant(w.summary),
                        precisions: precisions(w.summary),
                        area: Some(if max > 0.0 { weight(w) / max } else { 1.0 }),
                        color_group: None,
                    },
                    format!("{prefix}\u{0}{}", w.group),
                )
            })
            .collect(),
    )
}

/// The points of `inputs` for `set`, dots of rows holding at least
/// `min_share` (a fraction) of their report's FLOP.
pub fn plot(inputs: &[Input], set: PointSet, min_share: f64) -> Plot {
    let many = inputs.len() > 1;
    let mut notes = Vec::new();
    let mut points = Vec::new();
    let mut groups: HashMap<String, usize> = HashMap::new();
    for i in inputs {
        let r = i.report;
        let source = many.then_some(i.label);
        let set = match set {
            PointSet::Auto if r.loops.iter().any(|l| l.summary.flop.total > 0) => PointSet::Loops,
            PointSet::Auto => PointSet::Regions,
            s => s,
        };
        let dotted = match set {
            PointSet::Loops => dots(r, source, true, min_share, &mut notes),
            PointSet::Functions => dots(r, source, false, min_share, &mut notes),
            _ => None,
        };
        match (set, dotted) {
            (_, Some(d)) => {
                for (mut p, key) in d {
                    let n = groups.len();
                    p.color_group = Some(*groups.entry(key).or_insert(n));
                    points.push(p);
                }
            }
            (PointSet::Total, None) => points.extend(points_of(r, source).into_iter().take(1)),
            (_, None) => points.extend(points_of(r, source)),
        }
    }
    Plot { points, notes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flopscope_model::{ByteTotals, FlopTotals, LoopRow};

    fn summary(flop: u64, bytes: u64) -> Summary {
        Summary {
            flop: FlopTotals {
                total: flop,
                fp64: Some(flop),
                ..Default::default()
            },
            bytes: Some(ByteTotals {
                read: bytes,
                written: 0,
            }),
            ..Default::default()
        }
    }

    fn lp(function: &str, line: u32, flop: u64, own: u64, time: Option<f64>) -> LoopRow {
        LoopRow {
            function: function.into(),
            module: "/bin/app".into(),
            file: Some("/src/app.c".into()),
            line: Some(line),
            summary: summary(flop, flop * 4),
            self_counts: summary(own, own * 4),
            time_s: time,
            ..Default::default()
        }
    }

    fn report(loops: Vec<LoopRow>) -> Report {
        let mut r = Report::new("native", vec!["./app".into()]);
        r.summary = summary(1000, 8000);
        r.loops = loops;
        r
    }

    #[test]
    fn loops_above_the_share_become_dots_sized_by_time() {
        let r = report(vec![
            lp("solve", 10, 600, 0, Some(2.0)),
            lp("solve", 11, 600, 600, Some(2.0)),
            lp("init", 3, 395, 395, Some(0.5)),
            lp("tiny", 7, 5, 5, Some(0.1)),
        ]);
        let p = plot(
            &[Input {
                label: "a.json",
                report: &r,
            }],
            PointSet::Auto,
            DEFAULT_MIN_SHARE,
        );
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let labels: Vec<&str> = p.points.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["solve app.c:11", "init app.c:3"]);
        assert_eq!(p.points[0].area, Some(1.0));
        assert_eq!(p.points[1].area, Some(0.25));
        assert_eq!(p.points[0].gflops, Some(600.0 / 2.0 / 1e9));
        assert_ne!(p.points[0].color_group, p.points[1].color_group);
    }

    #[test]
    fn loops_without_time_fall_back_to_the_whole_program_with_a_note() {
        let r = report(vec![lp("solve", 11, 900, 900, None)]);
        let p = plot(
            &[Input {
                label: "a.json",
                report: &r,
            }],
            PointSet::Loops,
            DEFAULT_MIN_SHARE,
        );
        assert_eq!(p.points.len(), 1);
        assert!(p.points[0].whole_program);
        assert!(p.notes[0].contains("add --runs N"), "{:?}", p.notes);
    }

    #[test]
    fn labels_name_a_jit_s_code_by_its_source_file() {
        assert_eq!(
            loop_label("JS:*run /home/u/app/solver.js:27:13", None, None, 7),
            "JS:*run solver.js:27:13 (loop #7)"
        );
        assert_eq!(shorten("solve_the_whole_system", 6), "solve…");
    }

    #[test]
    fn no_loops_means_regions() {
        let r = report(Vec::new());
        let p = plot(
            &[Input {
                label: "a.json",
                report: &r,
            }],
            PointSet::Auto,
            DEFAULT_MIN_SHARE,
        );
        assert!(p.notes.is_empty());
        assert!(p.points[0].whole_program);
    }
}
