//! One module per subcommand.

pub mod count;
