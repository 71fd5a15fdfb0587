//! One module per subcommand.

pub mod bench;
pub mod count;
pub mod events;
pub mod flame;
pub mod import;
pub mod markers;
pub mod peak;
pub mod report;
pub mod roofline;
pub mod time;
