//! Text output of `flopscope peak` and `flopscope bench`.

use crate::detect::Machine;
use crate::freq::Frequencies;
use crate::peak::Peak;
use crate::profile::{
    BandwidthMeasurement, FlopsMeasurement, GemmMeasurement, MachineProfile, Spread,
};
use std::fmt::Write;

/// `32 KiB`, `1 MiB`, `1.5 GiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Left-aligned columns separated by two spaces.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn freq_summary(f: &Frequencies) -> String {
    let show = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.0} MHz"));
    format!(
        "cpufreq max {}, CPUID max {}, /proc/cpuinfo {}, measured {}",
        show(f.sysfs_max_mhz),
        show(f.cpuid_max_mhz),
        show(f.cpuinfo_mhz),
        show(f.measured_mhz)
    )
}

/// The machine description shared by `peak` and `bench`.
pub fn machine_text(m: &Machine) -> String {
    columns(&machine_rows(m))
}

fn machine_rows(m: &Machine) -> Vec<Vec<String>> {
    let caches: Vec<String> = m
        .caches
        .iter()
        .map(|c| {
            format!(
                "{} {} x{}",
                c.name(),
                human_bytes(c.size_bytes),
                c.instances
            )
        })
        .collect();
    let rows = vec![
        vec![
            "CPU".into(),
            format!(
                "{} ({} {}){}",
                m.model_name,
                m.vendor_id,
                m.signature(),
                if m.hypervisor {
                    ", under a hypervisor"
                } else {
                    ""
                }
            ),
        ],
        vec![
            "Topology".into(),
            format!(
                "{} socket(s), {} cores, {} hardware threads",
                m.sockets, m.cores, m.threads
            ),
        ],
        vec!["ISA".into(), m.flags.join(" ")],
        vec![
            "Caches".into(),
            if caches.is_empty() {
                "unknown".into()
            } else {
                caches.join(", ")
            },
        ],
        vec!["Clock".into(), freq_summary(&m.freq)],
    ];
    rows
}

/// `flopscope peak`.
pub fn peak_text(m: &Machine, p: &Peak) -> String {
    let mut head = machine_rows(m);
    if let Some(u) = &p.uarch {
        head.push(vec![
            "uarch".into(),
            format!("{}: {}", u.name, u.units_description()),
        ]);
    }
    let mut out = columns(&head);
    out.push('\n');
    let mut rows = vec![vec![
        "ISA".into(),
        "precision".into(),
        "FLOP/cycle/core".into(),
        "GFLOP/s/core".into(),
        format!("GFLOP/s ({} cores @ {:.2} GHz)", p.cores, p.freq_ghz),
    ]];
    for r in &p.rows {
        rows.push(vec![
            r.isa.label().into(),
            r.precision.key().into(),
            r.flop_per_cycle.to_string(),
            format!("{:.1}", r.gflops_per_core),
            format!("{:.1}", r.gflops_machine),
        ]);
    }
    out.push_str(&columns(&rows));
    out.push_str("\nAssumed:\n");
    for a in &p.assumptions {
        let _ = writeln!(out, "  - {a}");
    }
    if let Some(u) = p.uarch.as_ref().filter(|u| !u.notes.is_empty()) {
        let _ = writeln!(out, "Notes on {}:", u.name);
        for n in &u.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

fn spread(s: &Spread, decimals: usize) -> [String; 3] {
    [
        format!("{:.*}", decimals, s.median),
        format!("{:.*}", decimals, s.min),
        format!("{:.*}", decimals, s.max),
    ]
}

fn percent(p: Option<f64>) -> String {
    p.map_or("-".into(), |v| format!("{v:.0}%"))
}

pub fn flops_table(rows: &[FlopsMeasurement]) -> String {
    let mut t = vec![[
        "kernel",
        "ISA",
        "precision",
        "threads",
        "GFLOP/s median",
        "min",
        "max",
        "of theoretical",
    ]
    .map(String::from)
    .to_vec()];
    for r in rows {
        let [med, min, max] = spread(&r.gflops, 1);
        t.push(vec![
            r.kernel.clone(),
            r.isa.label().into(),
            r.precision.key().into(),
            r.threads.to_string(),
            med,
            min,
            max,
            percent(r.percent_of_theoretical),
        ]);
    }
    columns(&t)
}

pub fn bandwidth_table(rows: &[BandwidthMeasurement]) -> String {
    let mut t = vec![[
        "kernel",
        "stores",
        "working set",
        "level",
        "threads",
        "GB/s median",
        "min",
        "max",
    ]
    .map(String::from)
    .to_vec()];
    for r in rows {
        let [med, min, max] = spread(&r.gbs, 1);
        t.push(vec![
            format!("{} {}", r.kernel, r.isa.key()),
            if r.nontemporal {
                "non-temporal".into()
            } else {
                "regular".into()
            },
            human_bytes(r.working_set_bytes),
            r.level.clone(),
            r.threads.to_string(),
            med,
            min,
            max,
        ]);
    }
    columns(&t)
}

pub fn gemm_table(rows: &[GemmMeasurement]) -> String {
    let mut t = vec![[
        "GEMM",
        "n",
        "threads",
        "GFLOP/s median",
        "min",
        "max",
        "of theoretical",
        "of measured FMA peak",
    ]
    .map(String::from)
    .to_vec()];
    for r in rows {
        let [med, min, max] = spread(&r.gflops, 1);
        t.push(vec![
            format!(
                "{}gemm",
                if r.precision == flopscope_model::Precision::Fp64 {
                    "d"
                } else {
                    "s"
                }
            ),
            r.n.to_string(),
            r.threads.to_string(),
            med,
            min,
            max,
            percent(r.percent_of_theoretical),
            percent(r.percent_of_measured_peak),
        ]);
    }
    columns(&t)
}

/// `flopscope bench`: the machine, then each kind of ceiling measured.
pub fn profile_text(p: &MachineProfile) -> String {
    let mut out = machine_text(&p.machine);
    if !p.flops.is_empty() {
        out.push_str("\nFLOP ceilings (register-resident FMA chains)\n");
        out.push_str(&flops_table(&p.flops));
    }
    if !p.bandwidth.is_empty() {
        out.push_str("\nBandwidth (STREAM kernels)\n");
        out.push_str(&bandwidth_table(&p.bandwidth));
        if !p.bytes_convention.is_empty() {
            let _ = writeln!(out, "Bytes: {}", p.bytes_convention);
        }
    }
    if !p.gemm.is_empty() {
        out.push_str("\nGEMM (GFLOP/s = 2 n^3 / t)\n");
        out.push_str(&gemm_table(&p.gemm));
    }
    if !p.notes.is_empty() {
        out.push_str("\nHow it was measured:\n");
        for n in &p.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(32 * 1024), "32 KiB");
        assert_eq!(human_bytes(1536 * 1024 * 1024), "1.5 GiB");
        assert_eq!(human_bytes(100), "100 B");
        assert_eq!(human_bytes((1 << 30) - 4096), "1.0 GiB");
    }

    #[test]
    fn columns_align() {
        let t = columns(&[
            vec!["a".into(), "bb".into(), "c".into()],
            vec!["aaa".into(), "b".into(), "c".into()],
        ]);
        assert_eq!(t, "a    bb  c\naaa  b   c\n");
    }
}
