//! `flopscope-bench-kernel KERNEL N`: runs one benchmark kernel for N
//! iterations (loop trips of a peak kernel, elements of a STREAM kernel, a
//! multiple of 32 up to 65536) and nothing else, so that counting it shows
//! exactly the kernel's FLOP and bytes. The accuracy test runs it under
//! `flopscope count`.
//!
//! Start-up must not depend on N and must be the same from run to run, so
//! that it cancels between two values of N: the arrays always have 65536
//! elements, and the program neither parses `data/kernels.toml` (its parser
//! hashes with random seeds) nor prints. The caller checks that the CPU has
//! the kernel's ISA (the kernel's `requires`).

use flopscope_bench::buffer::Buffer;
use flopscope_bench::kernels::{implementation, KernelFn, BLOCK};
use std::process::ExitCode;

const CAPACITY: usize = 1 << 16;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(name), Some(n)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: flopscope-bench-kernel KERNEL N   (KERNEL from data/kernels.toml)");
        return ExitCode::from(2);
    };
    let Some(kernel) = implementation(name) else {
        eprintln!("flopscope-bench-kernel: no kernel named {name:?}");
        return ExitCode::from(2);
    };
    match kernel {
        // SAFETY: the caller checked that the CPU has the kernel's ISA.
        KernelFn::Peak(f) => unsafe { f(n) },
        KernelFn::Stream(f) => {
            let n = n as usize;
            if !n.is_multiple_of(BLOCK) || n > CAPACITY {
                eprintln!(
                    "flopscope-bench-kernel: N must be a multiple of {BLOCK} up to {CAPACITY}"
                );
                return ExitCode::from(2);
            }
            let mut a = Buffer::new(CAPACITY, 0, 4.0);
            let b = Buffer::new(CAPACITY, 5, 1.0);
            let c = Buffer::new(CAPACITY, 10, 2.0);
            // SAFETY: the arrays hold CAPACITY >= n aligned elements; the caller checked the ISA.
            unsafe { f(a.as_mut_ptr(), b.as_ptr(), c.as_ptr(), n) };
            std::hint::black_box(&a);
        }
    }
    ExitCode::SUCCESS
}
