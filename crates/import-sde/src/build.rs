//! One process (a mix file and, optionally, its mask profile) to a `Report`.

use crate::error::SdeError;
use crate::functions::functions;
use crate::mask::MaskProfile;
use crate::mix::MixFile;
use crate::summary::{summarize, MaskInput};
use flopscope_model::{Report, ThreadRow};

/// The `engine` of every report this crate writes.
pub const ENGINE: &str = "sde-import";

/// Builds the report of one process: totals from the global histogram, one
/// thread row per `EMIT_DYNAMIC_STATS FOR TID` histogram, one function row
/// per function of the per-function histograms ([`crate::functions`]).
/// Warnings about the mix are as they are (the importer prefixes them with
/// the mix file's name); those about the mask profile name it.
pub fn report_from(mix: &MixFile, mask: Option<&MaskProfile>) -> Result<Report, SdeError> {
    let mut report = Report::new(ENGINE, Vec::new());
    let mut warnings: Vec<String> = mix.notes.clone();
    if let Some(m) = mask {
        warnings.extend(m.notes.iter().map(|n| format!("{}: {n}", m.name)));
    }

    let all = match mask {
        Some(m) => MaskInput::Present(m.threads.iter().collect()),
        None => MaskInput::Absent,
    };
    let global = summarize(&mix.global, &all, &mix.name)?;
    warnings.extend(global.notes.iter().cloned());
    report.summary = global.summary;

    for t in &mix.threads {
        let input = match mask {
            Some(m) => MaskInput::Present(m.threads.iter().filter(|mt| mt.tid == t.tid).collect()),
            None => MaskInput::Absent,
        };
        // Per-thread notes repeat the global ones thread by thread: keep the global ones only.
        let s = summarize(&t.histogram, &input, &mix.name)?;
        report.threads.push(ThreadRow {
            tid: t.tid,
            summary: s.summary,
        });
    }

    if let Some(m) = mask {
        for mt in m
            .threads
            .iter()
            .filter(|mt| !mix.threads.iter().any(|t| t.tid == mt.tid))
        {
            if !mix.threads.is_empty() {
                warnings.push(format!(
                    "{}: thread {} (line {}) has no `EMIT_DYNAMIC_STATS` section in {}: the files may not be from the same run",
                    m.name, mt.tid, mt.line, mix.name
                ));
            }
        }
    }
    if let Some(w) = threads_disagree(&report) {
        warnings.push(w);
    }
    let f = functions(mix, mask, &report.summary)?;
    report.functions = f.rows;
    warnings.extend(f.warnings);

    report.warnings = warnings;
    report.complete = true;
    report.refresh_derived();
    Ok(report)
}

/// SDE's global histogram is the sum of its thread histograms; say so when
/// the numbers read say otherwise (a file assembled from different runs).
fn threads_disagree(report: &Report) -> Option<String> {
    if report.threads.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&ThreadRow) -> u128| report.threads.iter().map(f).sum::<u128>();
    let s = &report.summary;
    let checks: [(&str, u128, u128); 4] = [
        (
            "instructions",
            u128::from(s.instructions.unwrap_or(0)),
            sum(&|t| u128::from(t.summary.instructions.unwrap_or(0))),
        ),
        (
            "FLOP",
            u128::from(s.flop.total),
            sum(&|t| u128::from(t.summary.flop.total)),
        ),
        (
            "bytes read",
            u128::from(s.bytes.map_or(0, |b| b.read)),
            sum(&|t| u128::from(t.summary.bytes.map_or(0, |b| b.read))),
        ),
        (
            "bytes written",
            u128::from(s.bytes.map_or(0, |b| b.written)),
            sum(&|t| u128::from(t.summary.bytes.map_or(0, |b| b.written))),
        ),
    ];
    let off: Vec<String> = checks
        .iter()
        .filter(|(_, global, threads)| global != threads)
        .map(|(what, global, threads)| format!("{what} {global} (global) vs {threads} (threads)"))
        .collect();
    (!off.is_empty()).then(|| {
        format!(
            "the global section differs from the sum of the thread sections: {}; the report's totals are the global ones",
            off.join(", ")
        )
    })
}
