//! Human and spreadsheet renderings of a [`Report`]: the table the CLI prints
//! and a CSV of the same numbers.

use crate::report::{MemAccesses, Region, Report, Summary};
use crate::vocab::Precision;
use std::collections::BTreeMap;
use std::fmt::Write;

/// `name` with each absolute path in it shortened to its file name: a
/// JIT's perf map names code after its source, `JS:*run
/// /home/u/app/solver.js:27:13` reads `JS:*run solver.js:27:13`.
pub fn without_dirs(name: &str) -> String {
    let short: Vec<&str> = name
        .split(' ')
        .map(|t| match t.strip_prefix('/') {
            Some(path) => path.rsplit('/').next().unwrap_or(t),
            None => t,
        })
        .collect();
    short.join(" ")
}

/// A name in a table column `width` characters wide: [`without_dirs`], then
/// cut to the width with `~` where it is longer.
pub fn fit(name: &str, width: usize) -> String {
    let short = without_dirs(name);
    if short.chars().count() <= width {
        short
    } else {
        let keep: String = short.chars().take(width - 1).collect();
        format!("{keep}~")
    }
}

/// 1234567 -> "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn width_label(precision: Precision, lanes: u32, width_bits: u32) -> String {
    if lanes == 1 && precision != Precision::Bf16 {
        "scalar".into()
    } else {
        format!("{width_bits}-bit")
    }
}

/// FLOP by (precision, width label), from the instruction rows.
fn flop_by_width(s: &Summary) -> BTreeMap<(Precision, u32, String), (u64, u64)> {
    let mut m = BTreeMap::new();
    for r in &s.fp_instructions {
        let width = if r.lanes == 1 { 0 } else { r.width_bits };
        let e = m
            .entry((
                r.precision,
                width,
                width_label(r.precision, r.lanes, r.width_bits),
            ))
            .or_insert((0, 0));
        e.0 += r.count;
        e.1 += r.flop;
    }
    m
}

fn summary_lines(out: &mut String, s: &Summary) {
    let f = &s.flop;
    let _ = writeln!(out, "FLOP  {:>20}   (FMA = 2)", thousands(f.total));
    for p in Precision::ALL {
        if let Some(n) = f.get(p).filter(|n| *n > 0) {
            let _ = writeln!(out, "  {:<6}{:>18}", p.key(), thousands(n));
        }
    }
    let rows = flop_by_width(s);
    if !rows.is_empty() {
        let _ = writeln!(
            out,
            "\nBy precision and width   {:>16} {:>20}",
            "instructions", "FLOP"
        );
        for ((p, _, label), (count, flop)) in rows {
            let _ = writeln!(
                out,
                "  {:<6} {:<16} {:>16} {:>20}",
                p.key(),
                label,
                thousands(count),
                thousands(flop)
            );
        }
    }
    let ops: Vec<String> = s
        .flop_by_op
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {}", thousands(*n)))
        .collect();
    if !ops.is_empty() {
        let _ = writeln!(out, "\nBy operation: {}", ops.join(", "));
    }
    if let Some(i) = s.instructions {
        let _ = writeln!(out, "\nInstructions  {:>20}", thousands(i));
    }
    if let Some(b) = s.bytes {
        let _ = writeln!(out, "Bytes read    {:>20}", thousands(b.read));
        let _ = writeln!(out, "Bytes written {:>20}", thousands(b.written));
    }
    if let Some(m) = &s.mem_accesses {
        let hist = |h: &BTreeMap<String, u64>| {
            MemAccesses::by_size(h)
                .iter()
                .map(|(size, n)| format!("{size}B x {}", thousands(*n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !m.read.is_empty() {
            let _ = writeln!(out, "  reads:  {}", hist(&m.read));
        }
        if !m.write.is_empty() {
            let _ = writeln!(out, "  writes: {}", hist(&m.write));
        }
    }
}

/// `part` as a percentage of `total` with one decimal ("12.5%"), or "-"
/// when the total is zero.
pub fn share(part: u64, total: u64) -> String {
    if total > 0 {
        format!("{:.1}%", 100.0 * part as f64 / total as f64)
    } else {
        "-".into()
    }
}

/// A report of `flopscope time`: times, and "-" where nothing was counted.
fn timing_only(r: &Report) -> String {
    let mut out = format!(
        "flopscope: {}  [timing only, {}]\n\nFLOP, bytes: - (not counted: merge with the `flopscope count` report of the same run)\n",
        r.command.join(" "),
        status_text(&r.exit_status)
    );
    let t = r.native_time_s.map(duration).unwrap_or_else(|| "-".into());
    let _ = writeln!(out, "Time {t} (one uninstrumented run), GFLOP/s -");
    for reg in &r.regions {
        let t = reg
            .native_time_s
            .map(duration)
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "  region {:<24} entries {:>8}  time {t}",
            reg.name, reg.entries
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "\nwarning: {w}");
    }
    out
}

/// Why a report has no time.
fn no_time_reason(r: &Report) -> &'static str {
    if r.engine == "emulate" {
        "the emulate engine's run is far slower than the program's own; time it with --runs N (N uninstrumented runs after the counted one)"
    } else if r.mpi.is_some() {
        "an MPI rank runs once; time the job with `flopscope time` and merge the reports"
    } else {
        "nothing was timed"
    }
}

/// Seconds with a unit that keeps three significant digits visible.
pub fn duration(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        s => format!("{:.3} us", s * 1e6),
    }
}

fn region_line(r: &Region) -> String {
    let b = r.summary.bytes.unwrap_or_default();
    format!(
        "  {:<24} {:>8} {:>18} {:>16} {:>16} {:>10} {:>10}",
        r.name,
        thousands(r.entries),
        thousands(r.summary.flop.total),
        thousands(b.read),
        thousands(b.written),
        r.native_time_s.map(duration).unwrap_or_else(|| "-".into()),
        r.gflops
            .map(|g| format!("{g:.3}"))
            .unwrap_or_else(|| "-".into()),
    )
}

/// How a process ended, in a few words.
fn status_text(s: &crate::report::ExitStatus) -> String {
    match s {
        crate::report::ExitStatus::Code(c) => format!("exit {c}"),
        crate::report::ExitStatus::Signal(s) => format!("killed by {s}"),
        crate::report::ExitStatus::Unknown => "exit unknown".into(),
    }
}

fn pid_text(pid: Option<u64>) -> String {
    pid.map_or_else(|| "-".into(), |p| p.to_string())
}

/// The pids of the processes whose work region `name` holds: the children
/// that marked it, and the first process if the job's region holds more
/// than theirs (the job's regions are every process's, summed by name).
fn region_processes(r: &Report, name: &str) -> Vec<String> {
    let Some(job) = r.regions.iter().find(|g| g.name == name) else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    let (mut entries, mut flop) = (0u64, 0u64);
    for p in &r.processes {
        if let Some(g) = p.regions.iter().find(|g| g.name == name) {
            entries += g.entries;
            flop += g.summary.flop.total;
            pids.push(pid_text(p.pid));
        }
    }
    if job.entries > entries || job.summary.flop.total > flop {
        pids.insert(0, pid_text(r.pid));
    }
    pids
}

/// The job's processes, one row each: the first (its own counts are the
/// job's less its children's), then every child, with pid, how it ended,
/// FLOP, bytes and command.
fn processes_table(out: &mut String, r: &Report) {
    if r.processes.is_empty() {
        return;
    }
    let bytes = |s: &Summary| s.bytes.map(|b| b.total().0);
    let cell = |n: Option<u64>| n.map(thousands).unwrap_or_else(|| "-".into());
    let _ = writeln!(
        out,
        "\nProcesses {:>8}  {:<18} {:>18} {:>16}  command",
        "pid", "ended", "FLOP", "bytes"
    );
    let children_flop: u64 = r.processes.iter().map(|p| p.summary.flop.total).sum();
    let children_bytes: Option<u64> = r.processes.iter().map(|p| bytes(&p.summary)).sum();
    let mut row = |pid: Option<u64>, status: &crate::report::ExitStatus, flop, b, cmd: String| {
        let _ = writeln!(
            out,
            "  {:>16}  {:<18} {:>18} {:>16}  {cmd}",
            pid_text(pid),
            status_text(status),
            thousands(flop),
            cell(b)
        );
    };
    row(
        r.pid,
        &r.exit_status,
        r.summary.flop.total.saturating_sub(children_flop),
        bytes(&r.summary)
            .zip(children_bytes)
            .map(|(t, c)| t.saturating_sub(c)),
        r.command.join(" "),
    );
    for p in &r.processes {
        let command = match p.fork_of {
            Some(parent) => format!("fork of {} (pid {parent})", p.command.join(" ")),
            None => p.command.join(" "),
        };
        row(
            p.pid,
            &p.exit_status,
            p.summary.flop.total,
            bytes(&p.summary),
            command,
        );
    }
}

/// The table `flopscope count` prints, with the ten top functions and loops.
pub fn table(r: &Report) -> String {
    table_top(r, 10)
}

/// [`table`] with `top` rows of functions and loops.
pub fn table_top(r: &Report, top: usize) -> String {
    if r.engine == crate::times::TIME_ENGINE {
        return timing_only(r);
    }
    let mut out = String::new();
    let status = status_text(&r.exit_status);
    let _ = writeln!(
        out,
        "flopscope: {}  [engine {}, {status}, {}]\n",
        r.command.join(" "),
        r.engine,
        if r.complete {
            "complete"
        } else {
            "PARTIAL counts"
        }
    );
    if !r.regions.is_empty() {
        let _ = writeln!(
            out,
            "Regions                    {:>8} {:>18} {:>16} {:>16} {:>10} {:>10}",
            "entries", "FLOP", "bytes read", "bytes written", "time", "GFLOP/s"
        );
        for reg in &r.regions {
            let _ = write!(out, "{}", region_line(reg));
            if let Some((lo, hi)) = r.timing.as_ref().and_then(|t| t.region_spread(&reg.name)) {
                let _ = write!(out, "  [{}-{}]", duration(lo), duration(hi));
            }
            let pids = region_processes(r, &reg.name);
            if !r.processes.is_empty() && !pids.is_empty() {
                let s = if pids.len() > 1 { "es" } else { "" };
                let _ = write!(out, "  (process{s} {})", pids.join(", "));
            }
            out.push('\n');
        }
        if let Some(u) = &r.unmarked {
            let rest = Region {
                name: "(unmarked)".into(),
                summary: u.clone(),
                ..Default::default()
            };
            let _ = writeln!(
                out,
                "{}",
                region_line(&rest).replacen("       0 ", "       - ", 1)
            );
        }
        out.push('\n');
    }
    summary_lines(&mut out, &r.summary);
    let ai = r.arithmetic_intensity;
    if ai.l1.is_some() || ai.dram.is_some() {
        let f = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "Arithmetic intensity: {} FLOP/byte (L1), {} (DRAM)",
            f(ai.l1),
            f(ai.dram)
        );
    }
    match (r.native_time_s, r.gflops) {
        (Some(t), Some(g)) => {
            match &r.timing {
                Some(timing) => {
                    let _ = write!(
                        out,
                        "\nTime {t:.6} s ({}), {g:.3} GFLOP/s",
                        timing.describe()
                    );
                }
                None => {
                    let _ = write!(out, "\nNative time {t:.6} s, {g:.3} GFLOP/s");
                }
            }
            if let (Some(pct), Some(p)) = (r.percent_of_peak(), &r.peak) {
                let _ = write!(
                    out,
                    " = {pct:.2}% of the {} peak ({:.1} GFLOP/s fp64, {:.1} fp32)",
                    p.source, p.gflops_fp64, p.gflops_fp32
                );
            }
            out.push('\n');
        }
        _ => out.push_str(&format!("\nNo time, so no FLOP/s: {}\n", no_time_reason(r))),
    }
    let timed_apart = r
        .timing
        .as_ref()
        .is_none_or(|t| t.source != crate::timing::TimeSource::CountedRun);
    if let Some(e) = r.engine_time_s.filter(|_| timed_apart) {
        let _ = write!(out, "Counted in {e:.6} s under the {} engine", r.engine);
        if let Some(n) = r.native_time_s.filter(|n| *n > 0.0) {
            let _ = write!(out, " ({:.2}x the uninstrumented run)", e / n);
        }
        out.push('\n');
    }
    out.push_str(&crate::render_where::top_tables(r, top));
    if r.threads.len() > 1 {
        let _ = writeln!(out, "\nThreads: {}", r.threads.len());
        for t in &r.threads {
            let _ = writeln!(
                out,
                "  thread {:<4} FLOP {:>18}",
                t.tid,
                thousands(t.summary.flop.total)
            );
        }
    }
    processes_table(&mut out, r);
    for w in &r.warnings {
        let _ = writeln!(out, "\nwarning: {w}");
    }
    out
}

/// The report as one CSV table (columns stable; empty cells for unknowns).
/// `kind` says what a row is: `mix` rows give one kind of floating-point
/// instruction of a scope (precision, width, lanes, op, masked; executions
/// in `instructions`, and their FLOP); `totals` rows give a scope's FLOP,
/// bytes, instructions and time. Scopes: `total`, `region:NAME`,
/// `thread:N`, `process:N COMMAND`, `function:NAME [MODULE]`,
/// `loop:FUNCTION FILE:LINE`.
pub fn csv(r: &Report) -> String {
    let mut out = String::from(
        "kind,scope,precision,width_bits,lanes,op,masked,instructions,flop,bytes_read,bytes_written,time_s,gflops\n",
    );
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let mut totals = |scope: &str, s: &Summary, time: Option<f64>, gflops: Option<f64>| {
        let b = s.bytes;
        let _ = writeln!(
            out,
            "totals,{},,,,,,{},{},{},{},{},{}",
            csv_field(scope),
            s.instructions.map(|n| n.to_string()).unwrap_or_default(),
            s.flop.total,
            b.map(|b| b.read.to_string()).unwrap_or_default(),
            b.map(|b| b.written.to_string()).unwrap_or_default(),
            num(time),
            num(gflops)
        );
        for row in &s.fp_instructions {
            let _ = writeln!(
                out,
                "mix,{},{},{},{},{},{},{},{},,,,",
                csv_field(scope),
                row.precision.key(),
                row.width_bits,
                row.lanes,
                row.op.key(),
                row.masked,
                row.count,
                row.flop
            );
        }
    };
    totals("total", &r.summary, r.native_time_s, r.gflops);
    for reg in &r.regions {
        totals(
            &format!("region:{}", reg.name),
            &reg.summary,
            reg.native_time_s,
            reg.gflops,
        );
    }
    for t in &r.threads {
        totals(&format!("thread:{}", t.tid), &t.summary, None, None);
    }
    for (i, p) in r.processes.iter().enumerate() {
        let scope = format!("process:{i} {}", p.command.join(" "));
        totals(&scope, &p.summary, p.native_time_s, p.gflops);
    }
    for f in &r.functions {
        let module = f.module.rsplit('/').next().unwrap_or(&f.module);
        totals(
            &format!("function:{} [{module}]", f.name),
            &f.summary,
            f.time_s,
            f.gflops,
        );
    }
    for l in &r.loops {
        let at = match (&l.file, l.line) {
            (Some(file), Some(n)) => format!("{}:{n}", file.rsplit('/').next().unwrap_or(file)),
            _ => l.header.clone(),
        };
        totals(
            &format!("loop:{} {at}", l.function),
            &l.summary,
            l.time_s,
            l.gflops,
        );
    }
    out
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{Counts, FpKey};
    use crate::vocab::{FlopOp, OpClass};

    #[test]
    fn names_fit_their_column_with_paths_shortened_to_file_names() {
        assert_eq!(
            fit("JS:*run /home/u/app/solver.js:27:13", 40),
            "JS:*run solver.js:27:13"
        );
        assert_eq!(
            fit("$lists:foldl/3", 40),
            "$lists:foldl/3",
            "an arity is no path"
        );
        assert_eq!(fit("kernel [app]", 40), "kernel [app]");
        assert_eq!(fit("abcdefgh", 5), "abcd~");
        assert_eq!(fit("abcde", 5), "abcde");
    }

    fn report() -> Report {
        let mut c = Counts {
            instructions: 1_234_567,
            ..Default::default()
        };
        c.add_fp(
            FpKey::new(Precision::Fp64, 256, 4, OpClass::Fma),
            1000,
            8000,
            FlopOp::Fma,
        );
        c.mem_read.insert(32, 2000);
        let mut r = Report::new("emulate", vec!["./k".into(), "a,b".into()]);
        r.summary = Summary::from_counts(&c);
        r.exit_status = crate::report::ExitStatus::Code(0);
        r.complete = true;
        r.refresh_derived();
        r
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(2.5), "2.500 s");
        assert_eq!(duration(0.0125), "12.500 ms");
        assert_eq!(duration(11.5e-6), "11.500 us");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn table_shows_the_cost_of_counting() {
        let mut r = report();
        assert!(!table(&r).contains("Counted in"));
        r.engine_time_s = Some(0.3);
        r.set_native_time(Some(crate::units::Seconds(0.2)));
        let t = table(&r);
        assert!(
            t.contains(&format!(
                "Counted in 0.300000 s under the {} engine (1.50x the uninstrumented run)",
                r.engine
            )),
            "{t}"
        );
    }

    #[test]
    fn table_shows_width_rows_bytes_and_intensity() {
        let t = table(&report());
        assert!(
            t.contains("fp64   256-bit                     1,000                8,000"),
            "{t}"
        );
        assert!(t.contains("Bytes read                  64,000"), "{t}");
        assert!(
            t.contains("Arithmetic intensity: 0.1250 FLOP/byte (L1)"),
            "{t}"
        );
        assert!(t.contains("\nNo time, so no FLOP/s: "), "{t}");
    }

    #[test]
    fn a_timing_report_shows_no_counts_and_no_rate() {
        let mut r = Report::new(crate::times::TIME_ENGINE, vec!["./app".into()]);
        r.exit_status = crate::ExitStatus::Code(0);
        r.set_native_time(Some(crate::units::Seconds(0.25)));
        let t = table(&r);
        assert!(t.contains("FLOP, bytes: - (not counted"), "{t}");
        assert!(
            t.contains("Time 250.000 ms (one uninstrumented run), GFLOP/s -"),
            "{t}"
        );
        assert!(!t.contains("FLOP     "), "{t}");
    }

    #[test]
    fn the_time_line_says_which_run_it_is_from() {
        let mut r = report();
        r.engine = "native".into();
        r.engine_time_s = Some(0.5);
        r.set_native_time(Some(crate::units::Seconds(0.5)));
        r.timing = Some(crate::timing::Timing::of_runs(
            crate::timing::TimeSource::CountedRun,
            "native",
            vec![0.5],
            0,
        ));
        let t = table(&r);
        assert!(
            t.contains("\nTime 0.500000 s (from the counted run under the native engine, its overhead included; --runs N times uninstrumented runs), 0.000 GFLOP/s"),
            "{t}"
        );
        // The counted run is the timed one: no second line about it.
        assert!(!t.contains("Counted in"), "{t}");
    }

    #[test]
    fn csv_rows_are_exact_and_quoted() {
        let mut r = report();
        r.functions.push(crate::FunctionRow {
            name: "f(int, double)".into(),
            module: "/lib/libk.so".into(),
            summary: r.summary.clone(),
            time_s: Some(0.5),
            ..Default::default()
        });
        let c = csv(&r);
        assert_eq!(
            c,
            "kind,scope,precision,width_bits,lanes,op,masked,instructions,flop,bytes_read,bytes_written,time_s,gflops\n\
             totals,total,,,,,,1234567,8000,64000,0,,\n\
             mix,total,fp64,256,4,fma,false,1000,8000,,,,\n\
             totals,\"function:f(int, double) [libk.so]\",,,,,,1234567,8000,64000,0,0.5,\n\
             mix,\"function:f(int, double) [libk.so]\",fp64,256,4,fma,false,1000,8000,,,,\n"
        );
    }
}
