//! The kernel implementations and the registry that ties each to its
//! declaration in `data/kernels.toml`.

pub mod peak;
pub mod stream;

pub use stream::{StreamFn, BLOCK};

/// A kernel's entry point.
#[derive(Clone, Copy)]
pub enum KernelFn {
    /// `iters` trips of the loop body.
    Peak(unsafe fn(u64)),
    /// One sweep over `n` elements.
    Stream(StreamFn),
}

/// Every implementation, by the name it has in `data/kernels.toml`.
pub const IMPLEMENTATIONS: &[(&str, KernelFn)] = {
    use peak as p;
    use stream as s;
    use KernelFn::{Peak as P, Stream as S};
    &[
        ("peak_scalar_fp64", P(p::scalar_fp64)),
        ("peak_scalar_fp32", P(p::scalar_fp32)),
        ("peak_sse_fp64", P(p::sse_fp64)),
        ("peak_sse_fp32", P(p::sse_fp32)),
        ("peak_avx_fp64", P(p::avx_fp64)),
        ("peak_avx_fp32", P(p::avx_fp32)),
        ("peak_avx512_fp64", P(p::avx512_fp64)),
        ("peak_avx512_fp32", P(p::avx512_fp32)),
        ("peak_avx512_fp16", P(p::avx512_fp16)),
        ("peak_avx512_bf16", P(p::avx512_bf16)),
        ("peak_addmul_scalar_fp64", P(p::addmul_scalar_fp64)),
        ("peak_addmul_scalar_fp32", P(p::addmul_scalar_fp32)),
        ("peak_addmul_sse_fp64", P(p::addmul_sse_fp64)),
        ("peak_addmul_sse_fp32", P(p::addmul_sse_fp32)),
        ("peak_addmul_avx_fp64", P(p::addmul_avx_fp64)),
        ("peak_addmul_avx_fp32", P(p::addmul_avx_fp32)),
        ("copy_scalar", S(s::copy_scalar)),
        ("scale_scalar", S(s::scale_scalar)),
        ("add_scalar", S(s::add_scalar)),
        ("triad_scalar", S(s::triad_scalar)),
        ("copy_sse", S(s::copy_sse)),
        ("scale_sse", S(s::scale_sse)),
        ("add_sse", S(s::add_sse)),
        ("triad_sse", S(s::triad_sse)),
        ("copy_sse_nt", S(s::copy_sse_nt)),
        ("scale_sse_nt", S(s::scale_sse_nt)),
        ("add_sse_nt", S(s::add_sse_nt)),
        ("triad_sse_nt", S(s::triad_sse_nt)),
        ("copy_avx", S(s::copy_avx)),
        ("scale_avx", S(s::scale_avx)),
        ("add_avx", S(s::add_avx)),
        ("triad_avx", S(s::triad_avx)),
        ("copy_avx_nt", S(s::copy_avx_nt)),
        ("scale_avx_nt", S(s::scale_avx_nt)),
        ("add_avx_nt", S(s::add_avx_nt)),
        ("triad_avx_nt", S(s::triad_avx_nt)),
        ("copy_avx512", S(s::copy_avx512)),
        ("scale_avx512", S(s::scale_avx512)),
        ("add_avx512", S(s::add_avx512)),
        ("triad_avx512", S(s::triad_avx512)),
        ("copy_avx512_nt", S(s::copy_avx512_nt)),
        ("scale_avx512_nt", S(s::scale_avx512_nt)),
        ("add_avx512_nt", S(s::add_avx512_nt)),
        ("triad_avx512_nt", S(s::triad_avx512_nt)),
    ]
};

/// The implementation of the kernel named `name`.
pub fn implementation(name: &str) -> Option<KernelFn> {
    IMPLEMENTATIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}
