//! The counter file shared by an engine's in-process side (the QEMU plugin,
//! the native engine's runtime) and the CLI.
//!
//! - [`layout`]: the file's layout: header words, slot kinds, banks of
//!   counters per (thread, region state), region and state tables.
//! - [`read`]: [`read::CounterFile`] maps a file and reads its counts.
//! - [`report`]: counts turned into a `flopscope_model::Report`, with child
//!   processes' files merged in: one entry per process (a fork's file and
//!   those of the programs it exec'd put together), with its command line
//!   and how it ended (both recorded in each file's header, [`layout`]).
//! - [`regions`]: region names and states as markers register them.
//! - [`progress`]: waiting for the counted program, with a progress line.
//! - [`orphans`]: the processes it leaves running when it ends.
//! - [`profile`]: the executed code (blocks, their instructions' counts,
//!   their ends) and per-block counters, for attribution.
//! - [`descriptors`]: room for the engines' own files in a program that
//!   lowered its limit on open files.

pub mod code_view;
pub mod descriptors;
pub mod layout;
pub mod orphans;
pub mod profile;
pub mod progress;
pub mod read;
pub mod regions;
pub mod report;
