#[inline(never)]
pub fn compute(v: &[f64]) -> f64 { // LINE:compute_decl
    v.iter().map(|x| x * x).sum() // LINE:compute_body
}

fn main() {
    println!("main={:p}", main as fn() as *const ());
    println!("compute={:p}", compute as fn(&[f64]) -> f64 as *const ());
    print!("{}", std::fs::read_to_string("/proc/self/maps").unwrap());
    let v: Vec<f64> = (0..1000).map(f64::from).collect();
    std::process::exit(if compute(std::hint::black_box(&v)) > 0.0 { 0 } else { 1 });
}
