//! The one contract every counting engine meets.

use crate::report::Report;

/// An error an engine reports: its message names the problem and the fix.
pub type EngineError = Box<dyn std::error::Error + Send + Sync>;

/// Runs a command and returns the one [`Report`] shape.
pub trait Engine {
    /// `emulate`, `perf`, ... (the report's `engine`).
    fn name(&self) -> &'static str;
    /// True when the engine runs the program at native speed, so that its
    /// wall time gives FLOP/s and no separate timed run is needed.
    fn runs_natively(&self) -> bool;
    /// Whether the engine can count `argv` at all, asked before anything
    /// runs (the program must not run for nothing); Ok by default.
    fn check(&self, _argv: &[String]) -> Result<(), EngineError> {
        Ok(())
    }
    /// Runs `argv` and counts it. Warnings that a user must see (a program
    /// stopped by an instruction the engine cannot run, ...) go in
    /// `Report::warnings`.
    fn count(&self, argv: &[String]) -> Result<Report, EngineError>;
}
