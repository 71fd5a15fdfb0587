//! The CLI side: counter files, the program to run, the QEMU process.

pub use flopscope_counter_file::read as counters;
pub mod cpu;
pub mod program;
pub mod run;
