//! Integration tests of the benchmark crate, one module per concern.

// Declarations and implementations match one to one; the data file parses.
mod spec;
// Each kernel computes what it should natively (values, bounds) and the runners time it.
mod native;
// Working-set sizes, cache levels and the default sweep.
mod sizes;
// The accuracy test: each scalar/SSE/AVX kernel counted by the emulate engine matches its declaration exactly.
mod emulate;
