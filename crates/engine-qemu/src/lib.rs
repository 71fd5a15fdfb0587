//! The emulate engine: a QEMU TCG plugin that counts FLOP and bytes exactly,
//! and the host side that runs `qemu-x86_64` with it.
//!
//! - [`plugin`]: the `cdylib` QEMU loads (`qemu_plugin_install`); classifies
//!   each instruction once at translation with `flopscope-isa` and counts
//!   per block, per vCPU and per region state at run time; recognises region
//!   markers and SSC marks; moves a forked child to a counter file of its own.
//! - [`layout`]: the counter file both sides share.
//! - [`host`]: [`host::run::QemuEngine`] (the `flopscope_model::Engine` of
//!   `count`) runs a program and returns its [`flopscope_model::Report`];
//!   [`host::counters::CounterFile`] reads counts.
//! - `shim/exec_shim.c`: the preload library that relaunches exec'd programs
//!   under QEMU and the plugin (built and embedded by the CLI).
//!
//! ```no_run
//! use flopscope_engine_qemu::host::run::{QemuEngine, QemuOptions};
//! use flopscope_model::Engine;
//! let options = QemuOptions {
//!     qemu: None,
//!     plugin: "libflopscope_engine_qemu.so".into(),
//!     work_dir: std::env::temp_dir(),
//!     progress: false,
//!     linger: std::time::Duration::from_secs(5),
//!     ssc_marks: None,
//!     ssc_once: false,
//!     exec_shim: None,
//!     likwid_markers: None,
//! };
//! let report = QemuEngine { options }.count(&["./triad".to_string()]).unwrap();
//! println!("{} FLOP", report.summary.flop.total);
//! ```

pub mod host;
pub use flopscope_counter_file::layout;
pub mod plugin;
