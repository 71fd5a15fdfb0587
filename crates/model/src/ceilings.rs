//! The machine's ceilings, as a roofline needs them: compute peaks and
//! bandwidths. Machine profiles (`flopscope bench --save`) and the
//! theoretical peak model both produce [`Ceilings`].

use serde::{Deserialize, Serialize};

/// A compute roof: a peak FLOP rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComputeCeiling {
    /// Label such as "fp64 AVX-512 FMA" or "fp64 scalar".
    pub name: String,
    /// `fp64`, `fp32`, `fp16`, `bf16`.
    pub precision: String,
    /// Vector width in bits (64 or 32 for scalar).
    pub width_bits: u32,
    pub gflops: f64,
    /// Measured by a benchmark (true) or computed from the data sheet (false).
    pub measured: bool,
}

/// A bandwidth roof of one memory level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthCeiling {
    /// `L1`, `L2`, `L3` or `DRAM`.
    pub level: String,
    pub gbytes_per_s: f64,
    pub measured: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ceilings {
    /// Where the figures come from (machine profile path, or "theoretical").
    pub source: String,
    /// CPU model and anything else worth printing beside the chart.
    #[serde(default)]
    pub machine: String,
    pub compute: Vec<ComputeCeiling>,
    pub bandwidth: Vec<BandwidthCeiling>,
}

impl Ceilings {
    /// The highest compute roof of a precision, measured ones first.
    pub fn best_compute(&self, precision: &str) -> Option<&ComputeCeiling> {
        let of = |measured: bool| {
            self.compute
                .iter()
                .filter(|c| c.precision == precision && c.measured == measured)
                .max_by(|a, b| a.gflops.total_cmp(&b.gflops))
        };
        of(true).or_else(|| of(false))
    }

    /// Attainable GFLOP/s at intensity `ai` (FLOP/byte) under one compute and
    /// one bandwidth roof: min(peak, ai x bandwidth).
    pub fn attainable(peak_gflops: f64, bandwidth_gbs: f64, ai: f64) -> f64 {
        peak_gflops.min(ai * bandwidth_gbs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(precision: &str, gflops: f64, measured: bool) -> ComputeCeiling {
        ComputeCeiling {
            name: format!("{precision} {gflops}"),
            precision: precision.into(),
            width_bits: 512,
            gflops,
            measured,
        }
    }

    #[test]
    fn measured_roofs_win_over_theoretical_ones() {
        let ceil = Ceilings {
            compute: vec![
                c("fp64", 100.0, false),
                c("fp64", 80.0, true),
                c("fp32", 200.0, false),
            ],
            ..Default::default()
        };
        assert_eq!(ceil.best_compute("fp64").unwrap().gflops, 80.0);
        assert_eq!(ceil.best_compute("fp32").unwrap().gflops, 200.0);
        assert!(ceil.best_compute("bf16").is_none());
    }

    #[test]
    fn attainable_is_the_lower_roof() {
        assert_eq!(Ceilings::attainable(100.0, 50.0, 0.5), 25.0);
        assert_eq!(Ceilings::attainable(100.0, 50.0, 4.0), 100.0);
    }
}
