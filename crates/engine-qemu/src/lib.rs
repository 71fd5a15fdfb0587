//! The emulate engine: a QEMU TCG plugin that counts FLOP and bytes exactly,
//! and the host side that runs `qemu-x86_64` with it.
//!
//! - [`plugin`]: the `cdylib` QEMU loads (`qemu_plugin_install`); classifies
//!   each instruction once at translation with `flopscope-isa` and counts
//!   per block and per vCPU at run time.
//! - [`layout`]: the counter file both sides share.
//! - [`host`]: [`host::run::run`] runs a program and returns the
//!   [`flopscope_model::Report`]; [`host::counters::CounterFile`] reads counts.
//!
//! ```no_run
//! use flopscope_engine_qemu::host::run::{run, QemuOptions};
//! let opts = QemuOptions { qemu: None, plugin: "libflopscope_engine_qemu.so".into(), work_dir: std::env::temp_dir(), progress: false, ssc_marks: None, exec_shim: None };
//! let out = run(&["./triad".to_string()], &opts).unwrap();
//! println!("{} FLOP", out.report.summary.flop.total);
//! ```

pub mod host;
pub mod layout;
pub mod plugin;
