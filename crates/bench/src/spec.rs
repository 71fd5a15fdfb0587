//! The kernel declarations (`data/kernels.toml`): what one iteration of each
//! kernel does. The one source of the FLOP and bytes the benchmarks divide by.

use crate::kernels::{self, KernelFn};
use flopscope_machine::Isa;
use flopscope_model::Precision;
use serde::Deserialize;
use std::sync::OnceLock;

const KERNELS_TOML: &str = include_str!("../data/kernels.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Peak,
    Stream,
}

/// The four STREAM operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamOp {
    Copy,
    Scale,
    Add,
    Triad,
}

impl StreamOp {
    pub const ALL: [StreamOp; 4] = [
        StreamOp::Copy,
        StreamOp::Scale,
        StreamOp::Add,
        StreamOp::Triad,
    ];

    pub fn key(self) -> &'static str {
        match self {
            StreamOp::Copy => "copy",
            StreamOp::Scale => "scale",
            StreamOp::Add => "add",
            StreamOp::Triad => "triad",
        }
    }

    /// Arrays the operation touches (a and b, plus c for add and triad).
    pub fn arrays(self) -> usize {
        match self {
            StreamOp::Copy | StreamOp::Scale => 2,
            StreamOp::Add | StreamOp::Triad => 3,
        }
    }

    pub fn from_key(s: &str) -> Option<StreamOp> {
        StreamOp::ALL.into_iter().find(|o| o.key() == s)
    }
}

/// One kernel's declaration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    pub name: String,
    pub kind: Kind,
    #[serde(default)]
    pub op: Option<StreamOp>,
    pub isa: Isa,
    pub precision: Precision,
    #[serde(default)]
    pub nontemporal: bool,
    /// CPU flags (`/proc/cpuinfo` names) the instructions need.
    pub requires: Vec<String>,
    /// FLOP per iteration (a loop trip for peak kernels, an element for STREAM).
    pub flop: u64,
    /// Bytes read plus written per iteration.
    pub bytes: u64,
    pub instructions: String,
}

impl KernelSpec {
    /// Whether this CPU can run it (every required flag is present).
    pub fn runs_on(&self, flags: &[String]) -> bool {
        self.requires.iter().all(|r| flags.iter().any(|f| f == r))
    }

    /// Whether the peak kernel uses FMA (the `addmul` kernels do not).
    pub fn is_fma_peak(&self) -> bool {
        self.kind == Kind::Peak && !self.name.starts_with("peak_addmul_")
    }

    pub fn implementation(&self) -> KernelFn {
        kernels::implementation(&self.name)
            .expect("every declared kernel has an implementation (checked by cargo test)")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    kernel: Vec<KernelSpec>,
}

/// Parses declarations in the format of `data/kernels.toml`.
pub fn parse(text: &str) -> Result<Vec<KernelSpec>, String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
    for k in &f.kernel {
        if (k.kind == Kind::Stream) != k.op.is_some() {
            return Err(format!(
                "{}: `op` is required for stream kernels and only for them",
                k.name
            ));
        }
    }
    Ok(f.kernel)
}

/// Every declared kernel, from the embedded `data/kernels.toml`.
pub fn all() -> &'static [KernelSpec] {
    static ALL: OnceLock<Vec<KernelSpec>> = OnceLock::new();
    ALL.get_or_init(|| {
        parse(KERNELS_TOML)
            .expect("data/kernels.toml is checked by `cargo test -p flopscope-bench`")
    })
}

/// The declaration of `name`.
pub fn named(name: &str) -> Option<&'static KernelSpec> {
    all().iter().find(|k| k.name == name)
}

/// The STREAM kernel for `op` at `isa`, with or without non-temporal stores.
pub fn stream(op: StreamOp, isa: Isa, nontemporal: bool) -> Option<&'static KernelSpec> {
    all()
        .iter()
        .find(|k| k.op == Some(op) && k.isa == isa && k.nontemporal == nontemporal)
}
