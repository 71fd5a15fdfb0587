//! One module per subcommand.

pub mod count;
pub mod events;
pub mod import;
pub mod markers;
pub mod report;
pub mod roofline;
pub mod time;

/// The peak `count` reports against: the machine crate's theoretical peak.
pub fn peak_ref() -> Option<flopscope_model::PeakRef> {
    None
}
