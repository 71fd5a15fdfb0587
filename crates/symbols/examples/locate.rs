//! Locates runtime addresses of a process, as flopscope's engines do.
//!
//! ```sh
//! cargo run -p flopscope-symbols --example locate -- /proc/PID/maps 0x7f1e2a2181a0 ...
//! ```
//!
//! The maps may be a saved copy; the files they name must still be there.

use flopscope_symbols::{parse_maps, Symbolizer};

fn main() {
    let mut args = std::env::args().skip(1);
    let maps = args.next().expect("usage: locate MAPS ADDRESS...");
    let maps = parse_maps(&std::fs::read_to_string(&maps).expect("readable maps file"));
    let mut symbolizer = Symbolizer::new();
    for arg in args {
        let addr = u64::from_str_radix(arg.trim_start_matches("0x"), 16).expect("hex address");
        let Some(map) = maps.iter().find(|m| m.contains(addr)) else {
            println!("{addr:#x}: in no executable file mapping");
            continue;
        };
        let location = symbolizer.locate(map, addr);
        let symbol = &location.symbol;
        println!(
            "{addr:#x}: {} + {:#x} in {}",
            symbol.name,
            addr - symbol.start,
            symbol.module.display()
        );
        for frame in &location.frames {
            println!(
                "    {} at {}:{}  (declared at {}:{})",
                frame.function.as_deref().unwrap_or("??"),
                frame.file.as_deref().unwrap_or("??"),
                frame.line.unwrap_or(0),
                frame.decl_file.as_deref().unwrap_or("??"),
                frame.decl_line.unwrap_or(0),
            );
        }
    }
}
