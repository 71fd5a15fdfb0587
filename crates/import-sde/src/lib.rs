//! Intel SDE outputs to a flopscope [`Report`] (engine `"sde-import"`).
//!
//! Reads the instruction mix (`sde -omix FILE`, with or without `-iform`, any
//! number of threads) and the dynamic mask profile (`sde -odyn_mask_profile
//! FILE`), and counts FLOP and bytes the way Intel's "Calculating FLOP using
//! Intel SDE" and NERSC's arithmetic-intensity method do (shared/seeds/000 and
//! 003); [`summary`] has the arithmetic.
//!
//! - [`import_files`]: paths in, report out. Mix files and mask profiles are
//!   told apart by content, and paired per process ([`pair_files`]); several
//!   mix files (one per MPI rank, as `sde -i` writes them) give one report with
//!   the sum at the top and one nested report per file in `processes`, by the
//!   model's merge ([`merge_sources`]; [`import_sources`] gives the labelled
//!   per-file reports to a caller that wants the merge's labels and imbalance).
//! - [`parse_mix`] / [`parse_mask_profile`]: text in, [`MixFile`] /
//!   [`MaskProfile`] out; [`report_from`] makes the report of one process.
//! - [`SdeError`]: every failure names the file, and for bad input the line
//!   and what SDE writes there.
//!
//! What the report holds:
//! - `flop`: total, `fp64`, `fp32` (and `fp16` / `bf16` when SDE printed such
//!   counters); `x87` is absent: SDE's elements counters do not count x87.
//!   FLOP that the files cannot prove (masked lanes without a mask profile,
//!   FMA widths an opcode histogram does not tell) is left out and a warning
//!   says how much at most.
//! - `fp_instructions`: one row per (precision, width, lanes, operation,
//!   masked), covering every counted FLOP; `flop_by_op` (every category,
//!   `other` for what the instruction names do not tell, compares included)
//!   and `flop_by_width` are their sums, so that every table adds up to
//!   `flop.total` ([`summary`] has the arithmetic and the cross-checks).
//! - `fp_elements`: the `*elements_fp_*` counters as printed, `_masked` ones too.
//! - `bytes` and `mem_accesses`: from `*mem-read-<size>` / `*mem-write-<size>`.
//! - `instructions`: `*total`; `threads`: one row per thread section.
//! - `functions`: one row per function of SDE's per-function histograms
//!   (`EMIT_PER_FUNCTION_STATS`, written by `-mix` / `-omix` by default): the
//!   whole process's report when the file has one (`-global_functions`),
//!   else the per-thread reports summed per function. Each row has the counts
//!   above, by the same arithmetic and knowing what the totals know; masked
//!   lanes come from the mask profile's per-instruction details, placed by
//!   address and used only where they match the function's
//!   `*elements_fp_*_masked` counts. `name` and `module` (the image path) as
//!   SDE prints them (code without a symbol: `<image file>+0x<offset>`),
//!   `address` the start; source lines, inclusive counts and times are null.
//!   SDE lists only its top functions by instructions: the rest of the totals
//!   is one more row, last, named [`UNLISTED`], and a warning gives the
//!   listed functions' share of the FLOP and instructions. A file without
//!   per-function sections gets an empty `functions` and a warning saying how
//!   to get them. Details in [`functions`].
//!
//! ```
//! use flopscope_import_sde::{parse_mix, report_from, UNLISTED};
//! let text = [
//!     "# EMIT_PER_FUNCTION_STATS FOR TID 0  OS-TID 4242 EMIT# 1",
//!     "#",
//!     "# $dynamic-counts-for-function: triad  IMG: /home/u/a.out at [0x401a20, 0x401c00)  99.5%",
//!     "#",
//!     "# TID 0",
//!     "*elements_fp_double_4                         90",
//!     "VFMADD231PD_YMMqq_YMMqq_YMMqq                 90",
//!     "*mem-read-32                                 180",
//!     "*mem-write-32                                 90",
//!     "*total                                       360",
//!     "# END_PER_FUNCTION_STATS",
//!     "# EMIT_GLOBAL_DYNAMIC_STATS   EMIT# 1",
//!     "#",
//!     "# $global-dynamic-counts",
//!     "#",
//!     "# iform                                    count",
//!     "#",
//!     "*elements_fp_double_4                        100",
//!     "VFMADD231PD_YMMqq_YMMqq_YMMqq                100",
//!     "*mem-read-32                                 200",
//!     "*mem-write-32                                100",
//!     "*mem-read                                    200",
//!     "*total                                       400",
//!     "# END_GLOBAL_DYNAMIC_STATS",
//! ]
//! .join("\n");
//! let mix = parse_mix(&text, "sde-mix-out.txt").unwrap();
//! let report = report_from(&mix, None).unwrap();
//! // 100 vfmadd231pd ymm: 4 lanes x 2 FLOP.
//! assert_eq!(report.summary.flop.total, 800);
//! assert_eq!(report.summary.flop_by_op["fma"], 800);
//! // 200 x 32 bytes read, 100 x 32 written; `*mem-read` counts operands, not bytes.
//! assert_eq!(report.summary.bytes.map(|b| (b.read, b.written)), Some((6400, 3200)));
//! assert_eq!(report.engine, "sde-import");
//! // SDE listed `triad` (90 of the FMAs); the rest is a row of its own.
//! let f: Vec<_> = report.functions.iter().map(|f| (f.name.as_str(), f.summary.flop.total)).collect();
//! assert_eq!(f, [("triad", 720), (UNLISTED, 80)]);
//! assert_eq!(report.functions[0].module, "/home/u/a.out");
//! ```

mod build;
mod error;
mod files;
pub mod functions;
pub mod iform;
mod mask;
mod merge;
mod mix;
pub mod summary;

pub use build::{report_from, ENGINE};
pub use error::SdeError;
pub use files::{file_kind, import_files, import_runs, import_sources, pair_files, FileKind, Run};
pub use flopscope_model::Report;
pub use functions::UNLISTED;
pub use mask::{
    parse_mask_profile, row_precision, FmaDetail, FpDetail, MaskProfile, MaskThread, SummaryRow,
};
pub use merge::merge_sources;
pub use mix::{
    parse_mix, Counter, FunctionHistogram, FunctionTable, Histogram, Image, MixFile,
    ThreadHistogram,
};
