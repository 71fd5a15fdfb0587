//! [`MachineProfile`]: the machine's measured ceilings, saved by
//! `flopscope bench --save machine.json` and read by `count --machine`.

use crate::detect::Machine;
use crate::error::MachineError;
use crate::isa::Isa;
use crate::peak::Peak;
use flopscope_model::{
    BandwidthCeiling as ModelBandwidth, Ceilings, ComputeCeiling, PeakRef, Precision,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const PROFILE_SCHEMA: &str = "flopscope.machine/1";

/// Minimum, median and maximum of repeated measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `samples` (NaNs ignored); all zero when there are none.
    pub fn of(samples: &[f64]) -> Spread {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            min: v[0],
            median,
            max: v[n - 1],
        }
    }

    /// Each figure mapped through `f` (which must be increasing).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Spread {
        Spread {
            min: f(self.min),
            median: f(self.median),
            max: f(self.max),
        }
    }
}

/// A measured FLOP ceiling: one peak kernel on `threads` pinned threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlopsMeasurement {
    pub kernel: String,
    pub isa: Isa,
    pub precision: Precision,
    pub threads: u32,
    pub gflops: Spread,
    /// Median against the theoretical peak of the same ISA, precision and core count.
    pub percent_of_theoretical: Option<f64>,
}

/// A measured bandwidth: one STREAM kernel at one working-set size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthMeasurement {
    /// `copy`, `scale`, `add` or `triad`.
    pub kernel: String,
    pub isa: Isa,
    /// `L1`, `L2`, `L3` or `DRAM`: the level the working set fits in.
    pub level: String,
    /// All arrays of all threads together.
    pub working_set_bytes: u64,
    pub threads: u32,
    pub nontemporal: bool,
    /// GB/s (1e9 bytes), counting the bytes the kernel reads and writes
    /// (see `bytes_convention`).
    pub gbs: Spread,
}

/// A measured GEMM rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GemmMeasurement {
    pub precision: Precision,
    pub n: u32,
    pub threads: u32,
    /// GFLOP/s = 2 n^3 / t.
    pub gflops: Spread,
    /// The library and version that ran it.
    pub library: String,
    pub percent_of_theoretical: Option<f64>,
    /// Median against the measured FMA peak of the same precision and threads.
    pub percent_of_measured_peak: Option<f64>,
}

/// Register width of an ISA's instructions for precision `p` (the element
/// width for scalar), as the roofline labels compute roofs.
pub fn width_bits(isa: Isa, p: Precision) -> u32 {
    match isa {
        Isa::Scalar => p.element_bits(),
        _ => isa.vector_bits(),
    }
}

/// Everything `flopscope bench` measured, with the machine it ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineProfile {
    pub schema: String,
    pub tool_version: String,
    /// Seconds since the Unix epoch.
    pub created_unix_s: u64,
    /// The flopscope command line that measured it.
    pub command: Vec<String>,
    pub machine: Machine,
    pub theoretical: Peak,
    #[serde(default)]
    pub flops: Vec<FlopsMeasurement>,
    #[serde(default)]
    pub bandwidth: Vec<BandwidthMeasurement>,
    /// How `bandwidth` counts bytes.
    #[serde(default)]
    pub bytes_convention: String,
    #[serde(default)]
    pub gemm: Vec<GemmMeasurement>,
    /// How the measurements were taken (build, repetitions, pinning).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl MachineProfile {
    /// An empty profile of `machine` and its theoretical peak.
    pub fn new(machine: Machine, theoretical: Peak, command: Vec<String>) -> MachineProfile {
        let created_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        MachineProfile {
            schema: PROFILE_SCHEMA.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            created_unix_s,
            command,
            machine,
            theoretical,
            flops: Vec::new(),
            bandwidth: Vec::new(),
            bytes_convention: String::new(),
            gemm: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The highest median GFLOP/s measured for `p` on the most threads.
    pub fn best_flops(&self, p: Precision) -> Option<&FlopsMeasurement> {
        let most = self
            .flops
            .iter()
            .filter(|f| f.precision == p)
            .map(|f| f.threads)
            .max()?;
        self.flops
            .iter()
            .filter(|f| f.precision == p && f.threads == most)
            .max_by(|a, b| a.gflops.median.total_cmp(&b.gflops.median))
    }

    /// The best median bandwidth measured at `level` (`L1` ... `DRAM`) by any kernel.
    pub fn bandwidth_gbs(&self, level: &str) -> Option<&BandwidthMeasurement> {
        self.bandwidth
            .iter()
            .filter(|b| b.level == level)
            .max_by(|a, b| a.gbs.median.total_cmp(&b.gbs.median))
    }

    /// The peak a `count` report refers to: the measured all-core FMA peak
    /// (median) where the profile has it, else its theoretical peak.
    pub fn peak_ref(&self) -> PeakRef {
        let (d, s) = (
            self.best_flops(Precision::Fp64),
            self.best_flops(Precision::Fp32),
        );
        if d.is_none() && s.is_none() {
            let mut r = crate::peak::peak_ref(&self.theoretical);
            r.assumptions
                .push("the machine profile has no measured FLOP ceiling: theoretical peak".into());
            return r;
        }
        let line = |c: &FlopsMeasurement| {
            format!(
                "measured {} peak: {} kernel {} on {} pinned threads, median {:.1} GFLOP/s (min {:.1}, max {:.1})",
                c.precision.key(),
                c.isa.label(),
                c.kernel,
                c.threads,
                c.gflops.median,
                c.gflops.min,
                c.gflops.max
            )
        };
        let mut assumptions: Vec<String> = [d, s].into_iter().flatten().map(line).collect();
        assumptions.push(format!(
            "from the machine profile of {} ({}), flopscope {}",
            self.machine.model_name,
            self.machine.signature(),
            self.tool_version
        ));
        PeakRef {
            gflops_fp64: d.map_or(0.0, |c| c.gflops.median),
            gflops_fp32: s.map_or(0.0, |c| c.gflops.median),
            source: "measured".into(),
            assumptions,
        }
    }

    /// The roofs a roofline draws: the best measured all-core GFLOP/s of
    /// each ISA and precision (medians), the theoretical ones beside them,
    /// and the best measured bandwidth of each level.
    pub fn ceilings(&self) -> Ceilings {
        let mut c = crate::peak::ceilings(&self.theoretical);
        c.source = format!(
            "machine profile ({}), measured with flopscope {}",
            PROFILE_SCHEMA, self.tool_version
        );
        c.machine = format!("{}: {}", self.machine.model_name, c.machine);
        let most = self.flops.iter().map(|f| f.threads).max().unwrap_or(0);
        let mut measured: Vec<ComputeCeiling> = Vec::new();
        for f in self.flops.iter().filter(|f| f.threads == most) {
            let name = format!("{} {}, measured", f.precision.key(), f.isa.label());
            match measured.iter_mut().find(|m| m.name == name) {
                Some(m) => m.gflops = m.gflops.max(f.gflops.median),
                None => measured.push(ComputeCeiling {
                    name,
                    precision: f.precision.key().into(),
                    width_bits: width_bits(f.isa, f.precision),
                    gflops: f.gflops.median,
                    measured: true,
                }),
            }
        }
        measured.extend(c.compute);
        c.compute = measured;
        for level in ["L1", "L2", "L3", "DRAM"] {
            if let Some(b) = self.bandwidth_gbs(level) {
                c.bandwidth.push(ModelBandwidth {
                    level: level.into(),
                    gbytes_per_s: b.gbs.median,
                    measured: true,
                });
            }
        }
        c
    }

    pub fn to_json(&self) -> String {
        let mut s =
            serde_json::to_string_pretty(self).expect("a machine profile always serializes");
        s.push('\n');
        s
    }

    /// Reads a profile written by [`MachineProfile::save`].
    pub fn load(path: &Path) -> Result<MachineProfile, MachineError> {
        let text = std::fs::read_to_string(path).map_err(|source| MachineError::ReadProfile {
            path: path.into(),
            source,
        })?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| MachineError::ParseProfile {
                path: path.into(),
                source,
            })?;
        let found = v
            .get("schema")
            .and_then(|s| s.as_str())
            .unwrap_or("")
            .to_string();
        if found != PROFILE_SCHEMA {
            return Err(MachineError::ProfileSchema {
                path: path.into(),
                found,
                expected: PROFILE_SCHEMA,
            });
        }
        serde_json::from_value(v).map_err(|source| MachineError::ParseProfile {
            path: path.into(),
            source,
        })
    }

    /// Writes the profile atomically.
    pub fn save(&self, path: &Path) -> Result<(), MachineError> {
        Ok(flopscope_model::write_atomic(
            path,
            self.to_json().as_bytes(),
        )?)
    }
}
