//! A flame graph of where the work is, as an SVG a browser opens: frames
//! stacked module → function → loops (outer to inner) → source line, each
//! as wide as its FLOP (or bytes, instructions, time: [`Metric`]), with a
//! `<title>` tooltip of its exact counts and a colour per module.
//!
//! What goes where ([`tree`]):
//! - Lines are the leaves: `lines[]` rows are exclusive and sum to the
//!   totals, and each names its module and function, so a function's frame
//!   is exactly the sum of its lines (the `functions[]` row's counts).
//!   Inlined functions are frames of their own under their module, as in
//!   `functions[]` (their FLOP stay visible, not hidden in their callers).
//! - Loops stand between a function and its lines only where that is
//!   exact. A report gives a loop's first line and its counts, not its last
//!   line, so a loop's lines are found from the counts: the shortest run of
//!   its function's lines from the loop's line on (or from the line after
//!   it, when all of the `for` line's count is outside the loop) whose
//!   counts, in the graph's metric, sum to the loop's. A loop is drawn when
//!   such a run exists, lies inside its parent loop's and apart from its
//!   siblings'; its lines go to the innermost such loop. A loop that no run
//!   reproduces (its counts include inlined code, which is another
//!   function's lines, or a line of it also runs outside it) is left out
//!   with its nested loops, its lines directly under the function, and the
//!   graph says how many were. FLOP nest best: loop control has none.
//! - Time (`--metric time`): lines have no time, so functions are the
//!   leaves, sized by their samples; a loop is drawn when its function's
//!   own lines reproduce its FLOP exactly (as above) and its samples nest
//!   within its parent's and its function's.
//! - Counts no row holds (a report whose rows do not cover its totals)
//!   are one `(not attributed)` frame, so the root is always the total.
//!
//! ```
//! use flopscope_model::Report;
//! use flopscope_roofline::flame::{flame, svg, FlameOptions, Metric};
//! let report = Report::new("native", vec!["./app".into()]);
//! let f = flame(&report, Metric::Flop);
//! assert_eq!(f.root.value, 0);
//! assert!(svg(&f, &FlameOptions::default()).contains("<svg"));
//! ```

mod draw;
pub mod tree;

pub use draw::svg;
pub use tree::{Frame, FrameKind, Totals};

use flopscope_model::Report;

/// What a frame's width measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Metric {
    #[default]
    Flop,
    /// Bytes read and written (core-side, L1).
    Bytes,
    Instructions,
    /// Time from the sampled native run, in samples.
    Time,
}

impl Metric {
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Flop => "FLOP",
            Metric::Bytes => "bytes",
            Metric::Instructions => "instructions",
            Metric::Time => "time",
        }
    }
}

/// A flame graph: its frames and what it could not show.
#[derive(Debug, Clone, PartialEq)]
pub struct Flame {
    pub root: Frame,
    /// The metric the widths are in (FLOP when time was asked for and the
    /// report has none).
    pub metric: Metric,
    pub notes: Vec<String>,
    pub command: String,
}

/// How the SVG looks.
#[derive(Debug, Clone, PartialEq)]
pub struct FlameOptions {
    /// Width in pixels.
    pub width: u32,
    pub title: String,
}

impl Default for FlameOptions {
    fn default() -> Self {
        FlameOptions {
            width: 1200,
            title: "FLOP flame graph".into(),
        }
    }
}

/// The flame graph of `r` in `metric`. Time falls back to FLOP, with a
/// note, when no function of the report has samples.
pub fn flame(r: &Report, metric: Metric) -> Flame {
    let mut notes = Vec::new();
    let timed = r.functions.iter().any(|f| f.samples.unwrap_or(0) > 0);
    let metric = if metric == Metric::Time && !timed {
        notes.push(
            "the report has no time per function: widths are FLOP. \
             Time it: count under the native engine, or add --runs N to `flopscope count`."
                .to_string(),
        );
        Metric::Flop
    } else {
        metric
    };
    let (root, more) = tree::build(r, metric);
    notes.extend(more);
    Flame {
        root,
        metric,
        notes,
        command: r.command.join(" "),
    }
}
