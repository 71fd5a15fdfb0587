//! Rust regions for flopscope's integration tests (tests/regions.rs): a
//! triad region through [`flopscope_markers::region`], a scale region through
//! the [`flopscope_markers::Region`] guard, and unmarked work around them.
//!
//! ```text
//! usage: regions N REPS K
//! ```
//!
//! Closed form (fp64; Rust never contracts a multiply and an add into an FMA):
//! - region "triad": entries = REPS, each a[i] = b[i] + s c[i] over N
//!   elements: flop = 2 N REPS (add = mul = N REPS);
//! - region "scale": entries = 1, x[i] *= s over K elements: flop = K (mul);
//! - unmarked: the same scale before and after: 2 K (mul);
//! - total = 2 N REPS + 3 K.
//!
//! Values are bit patterns (`f64::from_bits`) passed through `black_box`, and
//! every kernel's inputs and outputs go through `black_box`, so the compiler
//! can neither fold the arithmetic nor move it out of its region.

use flopscope_markers::{region, Region};
use std::hint::black_box;

#[inline(never)]
fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

#[inline(never)]
fn scale(x: &mut [f64], s: f64) {
    for x in x.iter_mut() {
        *x *= s;
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| panic!("{a:?} is not a count: usage: regions N REPS K"))
        })
        .collect();
    let [n, reps, k] = args[..] else {
        panic!("usage: regions N REPS K")
    };
    // About 0.49, as the C programs' memset(0x3f) patterns.
    let v = f64::from_bits(black_box(0x3f3f_3f3f_3f3f_3f3f));
    let s = black_box(v);
    let (mut a, b, c, mut x) = (vec![v; n], vec![v; n], vec![v; n], vec![v; k]);

    scale(black_box(&mut x), black_box(s));
    for _ in 0..reps {
        region("triad", || {
            triad(
                black_box(&mut a),
                black_box(&b),
                black_box(&c),
                black_box(s),
            )
        });
    }
    {
        let _r = Region::begin("scale");
        scale(black_box(&mut x), black_box(s));
    }
    scale(black_box(&mut x), black_box(s));
    black_box((&a, &x));
}
