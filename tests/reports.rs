//! Merge, diff and the SDE-mix export on reports of real runs: the counts
//! of `flopscope count` on kernels with closed forms, combined exactly.

use crate::support::engines::markers_include;
use crate::support::{self, count_ok};
use flopscope_model::merge::{merge, Source};
use flopscope_model::sde_mix::{parse_sde_totals, sde_mix, sde_mix_of};
use flopscope_model::{diff, Report};
use std::path::PathBuf;

const N: u64 = 1000;
const REPS: u64 = 10;

/// tests/kernels/two_regions.c built with `flags` and the marker header.
pub fn two_regions(flags: &[&str]) -> PathBuf {
    let include = markers_include();
    support::build(
        "two_regions.c",
        &support::flags_with(flags, &["-I", &include]),
    )
}

/// A real run's report, as the model reads it.
fn run(flags: &[&str], n: u64) -> Report {
    let r = count_ok(&two_regions(flags), &[n.to_string(), REPS.to_string()], &[]);
    serde_json::from_value(r.0).expect("the report parses as the model's Report")
}

fn region<'a>(r: &'a Report, name: &str) -> &'a flopscope_model::Region {
    r.regions
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no region {name}: {:?}",
                r.regions.iter().map(|g| &g.name).collect::<Vec<_>>()
            )
        })
}

#[test]
fn merged_ranks_add_up_exactly() {
    let sizes = [N, 2 * N, 4 * N];
    let reports: Vec<Report> = sizes.iter().map(|n| run(support::AVX2_FMA, *n)).collect();
    for (r, n) in reports.iter().zip(sizes) {
        assert_eq!(region(r, "axpy").summary.flop.total, 2 * n * REPS);
        assert_eq!(region(r, "scale").summary.flop.total, n * REPS);
    }
    let sources = reports
        .iter()
        .enumerate()
        .map(|(i, r)| Source {
            label: format!("rank{i}.json"),
            report: r.clone(),
        })
        .collect();
    let m = merge(sources).unwrap();
    let total: u64 = sizes.iter().map(|n| 3 * n * REPS).sum();
    assert_eq!(m.report.summary.flop.total, total);
    assert_eq!(m.report.summary.flop.fp64, Some(total));
    let sum = |f: &dyn Fn(&Report) -> u64| reports.iter().map(f).sum::<u64>();
    let b = m.report.summary.bytes.unwrap();
    assert_eq!(b.read, sum(&|r| r.summary.bytes.unwrap().read));
    assert_eq!(b.written, sum(&|r| r.summary.bytes.unwrap().written));
    assert_eq!(
        m.report.summary.instructions,
        Some(sum(&|r| r.summary.instructions.unwrap()))
    );
    assert_eq!(
        region(&m.report, "axpy").summary.flop.total,
        2 * 7 * N * REPS
    );
    assert_eq!(region(&m.report, "axpy").entries, 3);
    assert_eq!(m.report.processes.len(), 3);
    // FLOP per rank 3nR: 1 : 2 : 4, so max / mean = 4 / (7/3).
    assert_eq!(m.imbalance.flop.max_source, "rank2.json");
    assert!((m.imbalance.flop.ratio().unwrap() - 12.0 / 7.0).abs() < 1e-12);
    assert!(
        m.report
            .warnings
            .iter()
            .any(|w| w.starts_with("load imbalance: rank2.json")),
        "{:?}",
        m.report.warnings
    );
}

#[test]
fn diff_shows_the_flop_moving_from_scalar_to_vector() {
    let scalar = run(support::SSE2, N);
    let vector = run(support::AVX2_FMA, N);
    let d = diff::diff(&scalar, &vector, "sse2.json", "avx2.json");
    let get = |scope: &str, q: &str| {
        d.counts
            .iter()
            .find(|c| c.scope == scope && c.quantity == q)
            .cloned()
    };
    // The same FLOP, exactly, in every scope.
    for scope in ["total", "axpy", "scale"] {
        assert_eq!(get(scope, "FLOP").unwrap().delta(), Some(0), "{scope}");
    }
    // axpy: mul + add at SSE2 become FMA with AVX2+FMA.
    let fma = get("axpy", "FLOP fma").unwrap();
    assert_eq!((fma.a, fma.b), (Some(0), Some(2 * N * REPS)));
    assert_eq!(get("axpy", "FLOP mul").unwrap().b, Some(0));
    // However GCC vectorised it, the FLOP by width add up to the same total.
    let widths: u64 = d
        .counts
        .iter()
        .filter(|c| c.scope == "axpy" && c.quantity.starts_with("FLOP fp64 "))
        .filter_map(|c| c.b)
        .sum();
    assert_eq!(widths, 2 * N * REPS);
    let table = d.table(false);
    assert!(
        table.contains("axpy") && table.contains("FLOP fma"),
        "{table}"
    );
}

#[test]
fn sde_mix_of_real_runs_gives_the_same_totals() {
    for flags in [support::SSE2, support::AVX, support::AVX2_FMA] {
        let r = run(flags, N);
        let t = parse_sde_totals(&sde_mix(&r));
        let f = &r.summary.flop;
        assert_eq!(
            t.flop(),
            u128::from(f.total - f.x87.unwrap_or(0)),
            "{flags:?}"
        );
        assert_eq!(t.flop_double, u128::from(f.fp64.unwrap()), "{flags:?}");
        let b = r.summary.bytes.unwrap();
        assert_eq!(
            (t.bytes_read, t.bytes_written),
            (u128::from(b.read), u128::from(b.written)),
            "{flags:?}"
        );
        let axpy = region(&r, "axpy");
        let t = parse_sde_totals(&sde_mix_of(&axpy.summary, &[]));
        assert_eq!(t.flop(), u128::from(2 * N * REPS), "{flags:?}");
    }
}
