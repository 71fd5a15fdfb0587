//! The Rust markers' region counts under the perf engine, tested with a
//! software event (tests/perf_regions.rs): region "touch pages" writes one
//! byte to each of N fresh pages, so it takes at least N page faults;
//! region "empty" does nothing and is entered twice, once nested in itself.
//!
//! ```text
//! usage: perf_pages N
//! ```

use flopscope_markers::{region, Region};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    // Large zeroed allocations are fresh anonymous pages, not yet faulted in,
    // but for the first one (the allocator's header): pages 1..=N are touched.
    let mut buf = vec![0u8; (n + 1) * page];
    region("touch pages", || {
        for i in 0..n {
            // SAFETY: (i + 1) * page is inside `buf`.
            unsafe { std::ptr::write_volatile(buf.as_mut_ptr().add((i + 1) * page), 1) };
        }
    });
    {
        let _outer = Region::begin("empty");
        let _inner = Region::begin("empty");
    }
    println!("{}", std::hint::black_box(&buf)[page]);
}
