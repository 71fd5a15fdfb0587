//! flopscope-isa tests, one binary.

// Helpers: assemble one instruction with iced's CodeAssembler and decode it.
mod asm;
// Every floating-point iced Code is classified or declared not a FLOP.
mod completeness;
// Exact FLOP, lanes, precision and masks per instruction family.
mod flop;
// Every Code built generically, checked against iced's op-code metadata.
mod sweep;
// Bytes read and written, and the dynamic-traffic markers.
mod memory;
