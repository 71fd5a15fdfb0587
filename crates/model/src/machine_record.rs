//! The machine a report was made on, recorded by `flopscope count`, so that
//! its figures are compared with that machine wherever the report is read:
//! a roofline drawn on a login node from a compute node's report shows the
//! compute node's roofs.

use crate::ceilings::Ceilings;
use crate::report::PeakRef;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineRecord {
    /// The machine's identity (CPU and core counts), under which its profile
    /// is kept (`flopscope bench --save`).
    pub identity: String,
    pub host: String,
    /// The CPU's brand string.
    pub cpu: String,
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    /// FP ISA extensions (`/proc/cpuinfo` names).
    pub isa: Vec<String>,
    /// Cache levels, as "L1d 32 KiB x 2".
    pub caches: Vec<String>,
    /// The clock the theoretical peak assumes, and where it comes from.
    pub clock_ghz: f64,
    pub clock_source: String,
    pub hypervisor: bool,
    /// The peak "% of peak" refers to.
    pub peak: PeakRef,
    /// The roofs of this machine (of its saved profile when there is one,
    /// else theoretical).
    pub ceilings: Ceilings,
}
