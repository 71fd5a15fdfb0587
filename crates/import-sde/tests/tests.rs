//! flopscope-import-sde against fixtures written to SDE's documented format.

mod common; // fixture paths and loaders
mod errors; // truncated, empty and foreign input: an error naming file and line, never a panic
mod exporter; // what the model's SDE-mix exporter writes reads back to the same totals
mod fma; // FMA of every family, width and precision; the known mistakes of public parsers
mod functions; // per-function sections to `functions`: exact rows, masked lanes, what SDE did not list
mod iclass; // `-mix` without `-iform`: opcode names carry no vector width
mod json; // the report's JSON contract keys
mod masked; // AVX-512 masked FLOP from the dynamic mask profile, and without one
mod memory; // bytes from every `*mem-read-<size>` / `*mem-write-<size>`, never operand counts
mod ranks; // one file per MPI rank: one report, per-file rows, NERSC's published totals
mod robustness; // random and mutated input never panics
mod threads; // per-thread sections and their sum
mod variants; // real SDE structures (9.24 OpenMP, 8.63 global-only, Pin mix-mt v2), hand totals, cross-checks
