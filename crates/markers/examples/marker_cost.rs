//! Cost of a Rust marker pair in a program run without flopscope, for
//! benchmarks/marker-cost.sh.
//!
//! ```text
//! usage: marker_cost N MODE   (MODE: bare | guard | closure)
//! ```
//!
//! Runs N iterations of an empty body (`black_box(i)`): bare, inside a
//! [`Region`] guard, or inside [`region`]; prints the loop's wall time in
//! nanoseconds. Run with FLOPSCOPE_REGION_TIMES=FILE, the markers also time
//! the region, as in flopscope's native timed run.

use flopscope_markers::{region, Region};
use std::hint::black_box;
use std::time::Instant;

#[inline(never)]
fn bare(n: u64) {
    for i in 0..n {
        black_box(i);
    }
}

#[inline(never)]
fn guard(n: u64) {
    for i in 0..n {
        let _r = Region::begin("pair");
        black_box(i);
    }
}

#[inline(never)]
fn closure(n: u64) {
    for i in 0..n {
        region("pair", || black_box(i));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [n, mode] = &args[..] else {
        panic!("usage: marker_cost N bare|guard|closure")
    };
    let n: u64 = n.parse().expect("N is a count");
    let f = match mode.as_str() {
        "bare" => bare,
        "guard" => guard,
        "closure" => closure,
        other => panic!("unknown mode {other:?}: bare, guard or closure"),
    };
    let start = Instant::now();
    f(black_box(n));
    println!("{}", start.elapsed().as_nanos());
}
