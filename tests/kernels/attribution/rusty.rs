// Rust for attribution: functions under their demangled paths.
//
//   usage: rusty N REPS           build: rustc -C opt-level=2 -g
//
// Per repetition: rusty::dot, 2N FLOP (a multiply and an add per element);
// rusty::Scaler::apply, N FLOP (a multiply per element).
use std::hint::black_box;

#[inline(never)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

struct Scaler(f64);

impl Scaler {
    #[inline(never)]
    fn apply(&self, x: &mut [f64]) {
        for v in x.iter_mut() {
            *v *= self.0;
        }
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let (n, reps) = (args[0], args[1]);
    let a = vec![0.5f64; n];
    let mut b = vec![0.25f64; n];
    let s = Scaler(0.75);
    let mut acc = 0.0;
    for _ in 0..reps {
        acc += dot(black_box(&a), black_box(&b));
        s.apply(black_box(&mut b));
    }
    println!("rusty: n={n} reps={reps} {}", acc > 0.0);
}
