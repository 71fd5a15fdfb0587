//! What translating costs, outside a counted run: translates the first
//! block of every function named on stdin (resolved with dlsym in this
//! process, normally libc's exports) and prints the time of the first block
//! (decoder tables included) and the mean of the others.
//!
//!   nm -D --defined-only /lib/x86_64-linux-gnu/libc.so.6 | awk '{print $3}' |
//!     cargo run --release --example translate_cost -p flopscope-native-runtime
//!
//! benchmarks/translate-cost.sh runs it against a named baseline.

use flopscope_native_runtime::{alloc::RuntimeAlloc, stats, translator};
use std::io::BufRead;

#[global_allocator]
static ALLOC: RuntimeAlloc = RuntimeAlloc;

fn main() {
    let mut addrs = Vec::new();
    for name in std::io::stdin().lock().lines().map_while(Result::ok) {
        let Ok(c) = std::ffi::CString::new(name.trim().split('@').next().unwrap_or("")) else {
            continue;
        };
        // SAFETY: dlsym of a NUL-terminated name in the global scope.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) } as u64;
        if p != 0 {
            addrs.push(p);
        }
    }
    // Exported data (environ, stdin's FILE...) lies in writable pages: not
    // code, and code there is watched through the thread state a counted
    // run sets up, which this process has not.
    let code = executable_ranges();
    addrs.retain(|a| code.iter().any(|(lo, hi)| (*lo..*hi).contains(a)));
    addrs.sort_unstable();
    addrs.dedup();
    if addrs.is_empty() {
        eprintln!(
            "no function on stdin resolves in this process: pipe names, one per line (see --help)"
        );
        std::process::exit(2);
    }
    translator::init().expect("the translator starts");
    let t0 = stats::now();
    let mut first = 0;
    let mut ok = 0u64;
    for (i, &pc) in addrs.iter().enumerate() {
        if translator::lookup_or_translate(pc).is_ok() {
            ok += 1;
        }
        if i == 0 {
            first = stats::now() - t0;
        }
    }
    let all = stats::now() - t0;
    let others = (all - first) as f64 / (addrs.len().max(2) - 1) as f64;
    println!(
        "{} functions, {ok} blocks translated; first {:.3} ms, the others {:.0} ns each",
        addrs.len(),
        first as f64 / 1e6,
        others
    );
}

/// The executable, non-writable mappings of this process.
fn executable_ranges() -> Vec<(u64, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            if !perms.contains('x') || perms.contains('w') {
                return None;
            }
            let (lo, hi) = range.split_once('-')?;
            Some((
                u64::from_str_radix(lo, 16).ok()?,
                u64::from_str_radix(hi, 16).ok()?,
            ))
        })
        .collect()
}
