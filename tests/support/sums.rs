//! The attribution invariant: over `functions[]`, and over `lines[]`, the
//! counts sum to the report's totals exactly (every process's report, and
//! the job's). Checked on every report the tests read.

use serde_json::Value;
use std::collections::BTreeMap;

/// The keys whose counts must sum (numbers, or maps of numbers).
const KEYS: [&str; 6] = [
    "flop",
    "flop_by_op",
    "fp_elements",
    "bytes",
    "mem_accesses",
    "instructions",
];

/// Flattens a count value into path -> number.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, u64>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&format!("{prefix}.{k}"), x, out);
            }
        }
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                *out.entry(prefix.to_string()).or_default() += n;
            }
        }
        _ => {}
    }
}

fn totals(v: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for k in KEYS {
        flatten(k, &v[k], &mut out);
    }
    out.retain(|_, n| *n != 0);
    out
}

/// Every difference between the totals and the sums over `functions` and
/// `lines`, in `report` and its child processes; empty when the report
/// attributes nothing.
pub fn mismatches(report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let whole = totals(report);
    for list in ["functions", "lines"] {
        let Some(rows) = report[list].as_array().filter(|r| !r.is_empty()) else {
            continue;
        };
        let mut sum = BTreeMap::new();
        for r in rows {
            for (k, n) in totals(r) {
                *sum.entry(k).or_default() += n;
            }
        }
        if sum != whole {
            let keys: std::collections::BTreeSet<&String> =
                sum.keys().chain(whole.keys()).collect();
            for k in keys {
                let (s, w) = (
                    sum.get(k).copied().unwrap_or(0),
                    whole.get(k).copied().unwrap_or(0),
                );
                if s != w {
                    out.push(format!("{list}: {k}: sum {s}, total {w}"));
                }
            }
        }
    }
    for child in report["processes"].as_array().into_iter().flatten() {
        out.extend(
            mismatches(child)
                .into_iter()
                .map(|m| format!("child process: {m}")),
        );
    }
    out
}
