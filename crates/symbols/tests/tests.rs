//! Real programs, compiled here by gcc, g++, gfortran and rustc, located
//! exactly: names, starts and sizes from `nm`, instructions from `objdump`,
//! lines from markers in the sources.

mod bad; // unreadable, non-ELF and corrupt modules
mod c; // C: names, sizes, lines, inlined frames, declarations, OpenMP, PIE and non-PIE
mod cpp; // C++: demangled template and virtual methods, declarations
mod dwz; // debug info shared through a dwz common file
mod fortran; // gfortran module procedures
mod rust; // rustc's legacy and v0 mangling
mod shared; // a shared library at its load base, stripped and not
mod stripped; // stripped executables: FDE names, .gnu_debuglink and build-id debug files
mod util; // compiling, running and inspecting the test programs
