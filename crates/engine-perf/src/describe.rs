//! The text of `flopscope events`: a set's events, encodings, formulas and caveats.

use crate::eventset::{event_sets, Event, EventSet, Scope};
use flopscope_model::Precision;
use std::fmt::Write;

fn event_line(out: &mut String, e: &Event) {
    let _ = write!(out, "  {:<44} {:<32}", e.name, e.config_text());
    if let Some(raw) = e.raw {
        let _ = write!(out, " raw {raw:#06x}");
    }
    let _ = write!(out, "  pmu {}", e.pmu.join(" | "));
    if let Some(s) = &e.sysfs {
        let _ = write!(out, "  (kernel name {s})");
    }
    if let Some(s) = e.scale {
        let _ = write!(out, "  x{} bytes", s);
    }
    if e.optional {
        out.push_str("  (0 if the PMU is absent)");
    }
    if let Some(n) = &e.note {
        let _ = write!(out, "  [{n}]");
    }
    out.push('\n');
}

fn scope_text(s: Scope) -> &'static str {
    match s {
        Scope::Thread => "per thread, inherited by the program's threads and children",
        Scope::Socket => "system-wide, on each CPU of the PMU's cpumask (one per socket)",
    }
}

/// The full description of one set.
pub fn describe(set: &EventSet) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}: {}", set.name, set.title);
    if !set.aliases.is_empty() {
        let _ = writeln!(o, "  also named: {}", set.aliases.join(", "));
    }
    for c in &set.cpus {
        let models: Vec<String> = c
            .models
            .iter()
            .map(|(a, b)| {
                if a == b {
                    format!("{a:#x}")
                } else {
                    format!("{a:#x}-{b:#x}")
                }
            })
            .collect();
        let _ = writeln!(
            o,
            "  CPUs: {} family {:#x} model {}",
            c.vendor,
            c.family,
            models.join(", ")
        );
    }
    let _ = writeln!(o, "  data: events/{}", set.file);
    if let Some(why) = &set.no_flop {
        let _ = writeln!(
            o,
            "\nNo FLOP events: {why}. Use the emulate engine on these CPUs."
        );
        return o;
    }
    let _ = writeln!(
        o,
        "\nEvents ({}; user space only):",
        scope_text(Scope::Thread)
    );
    for e in &set.events {
        event_line(&mut o, e);
    }
    let _ = writeln!(o, "\nFLOP (FMA = 2):");
    for f in &set.flop {
        let _ = writeln!(o, "  {f}");
    }
    for p in Precision::ALL {
        let prefix = format!("{}.", p.key());
        let parts: Vec<&str> = set
            .flop
            .iter()
            .filter(|f| f.key.starts_with(&prefix))
            .map(|f| f.key.as_str())
            .collect();
        if !parts.is_empty() && !set.flop.iter().any(|f| f.key == p.key()) {
            let _ = writeln!(o, "  {} = {}", p.key(), parts.join(" + "));
        }
    }
    if !set.flop.iter().any(|f| f.key == "total") {
        let precs: Vec<&str> = Precision::ALL
            .iter()
            .map(|p| p.key())
            .filter(|k| {
                set.flop
                    .iter()
                    .any(|f| f.key == *k || f.key.starts_with(&format!("{k}.")))
            })
            .collect();
        let _ = writeln!(o, "  total = {}", precs.join(" + "));
    }
    let absent: Vec<&str> = Precision::ALL
        .iter()
        .map(|p| p.key())
        .filter(|k| {
            !set.flop
                .iter()
                .any(|f| f.key == *k || f.key.starts_with(&format!("{k}.")))
        })
        .collect();
    let _ = writeln!(
        o,
        "  absent (the events cannot tell): {}",
        absent.join(", ")
    );
    if !set.info.is_empty() {
        let _ = writeln!(o, "\nOther counts:");
        for f in &set.info {
            let _ = writeln!(o, "  {f}");
        }
    }
    for c in &set.checks {
        let _ = writeln!(o, "\nCheck: when {} > 0, warn: {}", c.expr, c.warning);
    }
    if !set.constants.is_empty() {
        let _ = writeln!(
            o,
            "\nConstants (the running machine's value is used where it can be read):"
        );
        for (k, v) in &set.constants {
            let _ = writeln!(o, "  {k} = {}", *v);
        }
    }
    if set.dram.is_empty() {
        let _ = writeln!(o, "\nDRAM bytes: no source for these CPUs");
    } else {
        let _ = writeln!(o, "\nDRAM bytes (the first source whose PMU the machine has; the kernel's named event and scale are preferred):");
        for d in &set.dram {
            let _ = writeln!(
                o,
                "  {}: {} [pmu {}; {}]",
                d.name,
                d.title,
                d.pmu.join(" | "),
                scope_text(d.scope)
            );
            for e in &d.events {
                o.push_str("  ");
                event_line(&mut o, e);
            }
            for f in &d.formulas {
                let _ = writeln!(o, "    {f}");
            }
            for c in &d.caveats {
                let _ = writeln!(o, "    caveat: {c}");
            }
            for v in &d.verify {
                let _ = writeln!(o, "    unverified: {v}");
            }
        }
    }
    if !set.caveats.is_empty() {
        let _ = writeln!(o, "\nCaveats (copied into the report's warnings):");
        for c in &set.caveats {
            let _ = writeln!(o, "  - {c}");
        }
    }
    if !set.verify.is_empty() {
        let _ = writeln!(o, "\nUnverified (open questions, also in warnings):");
        for v in &set.verify {
            let _ = writeln!(o, "  - {v}");
        }
    }
    o
}

/// One line per set: name, title, aliases (`flopscope events --list`).
pub fn list_sets() -> String {
    let mut o = String::new();
    for s in event_sets() {
        let _ = write!(o, "{:<12} {}", s.name, s.title);
        if !s.aliases.is_empty() {
            let _ = write!(o, " (also: {})", s.aliases.join(", "));
        }
        o.push('\n');
    }
    o
}

/// What `set` would open on this machine (PMU types, configs, CPUs), or why nothing
/// can be opened: the tail of `flopscope events` without `--arch`.
pub fn describe_on_machine(set: &EventSet, sysfs_root: &std::path::Path) -> String {
    let mut o = format!("\nOn this machine (sysfs {}):\n", sysfs_root.display());
    if let Err(e) = crate::probe::check_pmu(sysfs_root) {
        let _ = writeln!(o, "  {e}");
        return o;
    }
    let plan = match crate::plan::plan(set, sysfs_root, true) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(o, "  {e}");
            return o;
        }
    };
    for s in &plan.opens {
        let cpu = if s.cpu < 0 {
            String::new()
        } else {
            format!(" cpu {}", s.cpu)
        };
        let _ = writeln!(
            o,
            "  {:<44} pmu {} type {} {}{cpu} ({})",
            s.event, s.pmu, s.type_, s.raw, s.origin
        );
    }
    for a in &plan.absent {
        let _ = writeln!(o, "  {a}: its PMU is absent here, counts 0");
    }
    for n in &plan.notes {
        let _ = writeln!(o, "  {n}");
    }
    o
}
