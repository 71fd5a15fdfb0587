//! How fast `Symbolizer::locate` is on one binary.
//!
//! ```sh
//! cargo run --release -p flopscope-symbols --example locate_speed -- BINARY [ADDRESSES] [RUNS]
//! ```
//!
//! Maps BINARY's executable segment at a PIE-like base as the kernel would,
//! spreads ADDRESSES (default 50,000) distinct addresses evenly over it, and
//! times a fresh `Symbolizer` over them RUNS times (default 3): the first
//! call (which loads the module), all calls, and all calls again (cached).

use std::path::PathBuf;
use std::time::Instant;

use flopscope_symbols::{Mapping, Symbolizer};
use object::{Object, ObjectSegment, SegmentFlags};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .expect("usage: locate_speed BINARY [ADDRESSES] [RUNS]"),
    );
    let count: u64 = args.next().map_or(50_000, |a| a.parse().unwrap());
    let runs: usize = args.next().map_or(3, |a| a.parse().unwrap());

    let bytes = std::fs::read(&path).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let text = file
        .segments()
        .find(|s| matches!(s.flags(), SegmentFlags::Elf { p_flags, .. } if p_flags.0 & 1 != 0))
        .expect("an executable PT_LOAD segment");
    let (offset, size) = text.file_range();
    let base = 0x5555_5555_4000;
    let map = Mapping {
        start: base + (text.address() & !0xfff),
        end: base + text.address() + size,
        file_offset: offset & !0xfff,
        executable: true,
        path: path.clone(),
    };
    let first = base + text.address();
    let stride = (size / count).max(1);
    let addresses: Vec<u64> = (0..count.min(size)).map(|i| first + i * stride).collect();
    drop(file);

    println!(
        "{}: {:.1} MB, executable segment {:.1} MB, {} addresses, stride {stride} bytes",
        path.display(),
        bytes.len() as f64 / 1e6,
        size as f64 / 1e6,
        addresses.len()
    );
    let (mut loads, mut totals, mut again) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut symbolizer = Symbolizer::new();
        let start = Instant::now();
        symbolizer.locate(&map, addresses[0]);
        loads.push(start.elapsed().as_secs_f64());
        let (mut named, mut with_frames) = (0, 0);
        for &addr in &addresses {
            let location = symbolizer.locate(&map, addr);
            named += usize::from(!location.symbol.name.contains("+0x"));
            with_frames += usize::from(!location.frames.is_empty());
        }
        totals.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        for &addr in &addresses {
            symbolizer.locate(&map, addr);
        }
        again.push(start.elapsed().as_secs_f64());
        println!("  named by a symbol: {named}, with source frames: {with_frames}");
    }
    let show = |what: &str, mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        println!(
            "{what:<34} min {:.3} s  median {:.3} s  max {:.3} s",
            v[0],
            v[v.len() / 2],
            v[v.len() - 1]
        );
    };
    show("load (first call)", loads);
    show("load + all addresses", totals);
    show("all addresses again (cached)", again);
}
