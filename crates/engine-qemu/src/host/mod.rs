//! The CLI side: counter files, the program to run, the QEMU process.

pub mod counters;
pub mod program;
pub mod run;
