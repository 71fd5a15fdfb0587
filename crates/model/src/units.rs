//! Newtypes for the quantities flopscope reports.

use serde::{Deserialize, Serialize};
use std::ops::{Add, AddAssign};

/// A number of floating-point operations (FMA = 2).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Flop(pub u64);

/// A number of bytes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// Wall-clock seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

macro_rules! additive {
    ($t:ty) => {
        impl Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                Self(self.0 + o.0)
            }
        }
        impl AddAssign for $t {
            fn add_assign(&mut self, o: $t) {
                self.0 += o.0;
            }
        }
    };
}
additive!(Flop);
additive!(Bytes);
additive!(Seconds);

/// GFLOP/s from a FLOP count and a wall time; `None` for a zero or negative time.
pub fn gflops(flop: Flop, time: Seconds) -> Option<f64> {
    (time.0 > 0.0).then(|| flop.0 as f64 / time.0 / 1e9)
}

/// FLOP per byte; `None` when no bytes moved.
pub fn intensity(flop: Flop, bytes: Bytes) -> Option<f64> {
    (bytes.0 > 0).then(|| flop.0 as f64 / bytes.0 as f64)
}
