//! Peak kernels: 12 independent register-resident chains per loop trip, no
//! memory traffic. 12 chains cover 2 pipes x 6 cycles of latency (FMA
//! latency is 4 to 5 cycles on the cores of the table), so the pipes never
//! wait. Written in `asm!` so that the loop is exactly the declared
//! instructions at every optimisation level (the accuracy test counts a
//! debug build). Accumulators start at zero (integer xor, not a FLOP); their
//! values never matter and can never become denormal.

use std::arch::asm;

/// Twelve `op acc_i, src14, src15` for accumulators 0..11 of register class `r`.
macro_rules! chains12 {
    ($op:literal, $r:literal) => {
        concat!(
            $op, " ", $r, "0, ", $r, "14, ", $r, "15\n", $op, " ", $r, "1, ", $r, "14, ", $r,
            "15\n", $op, " ", $r, "2, ", $r, "14, ", $r, "15\n", $op, " ", $r, "3, ", $r, "14, ",
            $r, "15\n", $op, " ", $r, "4, ", $r, "14, ", $r, "15\n", $op, " ", $r, "5, ", $r,
            "14, ", $r, "15\n", $op, " ", $r, "6, ", $r, "14, ", $r, "15\n", $op, " ", $r, "7, ",
            $r, "14, ", $r, "15\n", $op, " ", $r, "8, ", $r, "14, ", $r, "15\n", $op, " ", $r,
            "9, ", $r, "14, ", $r, "15\n", $op, " ", $r, "10, ", $r, "14, ", $r, "15\n", $op, " ",
            $r, "11, ", $r, "14, ", $r, "15\n",
        )
    };
}

/// Six add chains (registers 0..5, adding register 14) and six multiply
/// chains (6..11, multiplying by 15), in the two-operand legacy SSE form.
macro_rules! addmul12_legacy {
    ($add:literal, $mul:literal) => {
        concat!(
            $add,
            " xmm0, xmm14\n",
            $add,
            " xmm1, xmm14\n",
            $add,
            " xmm2, xmm14\n",
            $add,
            " xmm3, xmm14\n",
            $add,
            " xmm4, xmm14\n",
            $add,
            " xmm5, xmm14\n",
            $mul,
            " xmm6, xmm15\n",
            $mul,
            " xmm7, xmm15\n",
            $mul,
            " xmm8, xmm15\n",
            $mul,
            " xmm9, xmm15\n",
            $mul,
            " xmm10, xmm15\n",
            $mul,
            " xmm11, xmm15\n",
        )
    };
}

/// The same in three-operand VEX form on ymm registers.
macro_rules! addmul12_vex {
    ($add:literal, $mul:literal) => {
        concat!(
            $add,
            " ymm0, ymm0, ymm14\n",
            $add,
            " ymm1, ymm1, ymm14\n",
            $add,
            " ymm2, ymm2, ymm14\n",
            $add,
            " ymm3, ymm3, ymm14\n",
            $add,
            " ymm4, ymm4, ymm14\n",
            $add,
            " ymm5, ymm5, ymm14\n",
            $mul,
            " ymm6, ymm6, ymm15\n",
            $mul,
            " ymm7, ymm7, ymm15\n",
            $mul,
            " ymm8, ymm8, ymm15\n",
            $mul,
            " ymm9, ymm9, ymm15\n",
            $mul,
            " ymm10, ymm10, ymm15\n",
            $mul,
            " ymm11, ymm11, ymm15\n",
        )
    };
}

/// Zeroes registers 0..11, 14 and 15 with integer xor: VEX form (which also
/// clears the upper ymm/zmm bits) or legacy SSE2 form.
macro_rules! zero_vex {
    () => {
        "vpxor xmm0, xmm0, xmm0\nvpxor xmm1, xmm1, xmm1\nvpxor xmm2, xmm2, xmm2\nvpxor xmm3, xmm3, xmm3\n\
vpxor xmm4, xmm4, xmm4\nvpxor xmm5, xmm5, xmm5\nvpxor xmm6, xmm6, xmm6\nvpxor xmm7, xmm7, xmm7\n\
vpxor xmm8, xmm8, xmm8\nvpxor xmm9, xmm9, xmm9\nvpxor xmm10, xmm10, xmm10\nvpxor xmm11, xmm11, xmm11\n\
vpxor xmm14, xmm14, xmm14\nvpxor xmm15, xmm15, xmm15"
    };
}

macro_rules! zero_legacy {
    () => {
        "pxor xmm0, xmm0\npxor xmm1, xmm1\npxor xmm2, xmm2\npxor xmm3, xmm3\npxor xmm4, xmm4\npxor xmm5, xmm5\n\
pxor xmm6, xmm6\npxor xmm7, xmm7\npxor xmm8, xmm8\npxor xmm9, xmm9\npxor xmm10, xmm10\npxor xmm11, xmm11\n\
pxor xmm14, xmm14\npxor xmm15, xmm15"
    };
}

/// A peak kernel: `iters` trips of `body`, registers zeroed first.
macro_rules! peak {
    ($(#[$doc:meta])* $name:ident, $features:literal, [$($zero:tt)*], [$($body:tt)*]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU must have the instructions (see `requires` in `data/kernels.toml`).
        #[target_feature(enable = $features)]
        pub unsafe fn $name(iters: u64) {
            if iters == 0 {
                return;
            }
            // SAFETY: register-only arithmetic in a counted loop; every vector
            // register is caller-saved in the C ABI.
            unsafe {
                asm!(
                    $($zero)*,
                    "2:",
                    $($body)*,
                    "dec rcx",
                    "jnz 2b",
                    inout("rcx") iters => _,
                    clobber_abi("C"),
                    options(nomem, nostack),
                );
            }
        }
    };
}

peak!(
    scalar_fp64,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231sd", "xmm")]
);
peak!(
    scalar_fp32,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231ss", "xmm")]
);
peak!(
    sse_fp64,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231pd", "xmm")]
);
peak!(
    sse_fp32,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231ps", "xmm")]
);
peak!(
    avx_fp64,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231pd", "ymm")]
);
peak!(
    avx_fp32,
    "avx,fma",
    [zero_vex!()],
    [chains12!("vfmadd231ps", "ymm")]
);
peak!(
    avx512_fp64,
    "avx512f",
    [zero_vex!()],
    [chains12!("vfmadd231pd", "zmm")]
);
peak!(
    avx512_fp32,
    "avx512f",
    [zero_vex!()],
    [chains12!("vfmadd231ps", "zmm")]
);
peak!(
    /// AVX512_FP16 FMA (the assembler takes the mnemonic with AVX-512F enabled;
    /// the caller checks `avx512_fp16`).
    avx512_fp16, "avx512f", [zero_vex!()], [chains12!("vfmadd231ph", "zmm")]
);
peak!(
    avx512_bf16,
    "avx512f,avx512bf16",
    [zero_vex!()],
    [chains12!("vdpbf16ps", "zmm")]
);
peak!(
    addmul_scalar_fp64,
    "sse2",
    [zero_legacy!()],
    [addmul12_legacy!("addsd", "mulsd")]
);
peak!(
    addmul_scalar_fp32,
    "sse2",
    [zero_legacy!()],
    [addmul12_legacy!("addss", "mulss")]
);
peak!(
    addmul_sse_fp64,
    "sse2",
    [zero_legacy!()],
    [addmul12_legacy!("addpd", "mulpd")]
);
peak!(
    addmul_sse_fp32,
    "sse2",
    [zero_legacy!()],
    [addmul12_legacy!("addps", "mulps")]
);
peak!(
    addmul_avx_fp64,
    "avx",
    [zero_vex!()],
    [addmul12_vex!("vaddpd", "vmulpd")]
);
peak!(
    addmul_avx_fp32,
    "avx",
    [zero_vex!()],
    [addmul12_vex!("vaddps", "vmulps")]
);
