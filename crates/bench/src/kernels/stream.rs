//! STREAM kernels on fp64 arrays: copy a = b, scale a = s*b, add a = b + c,
//! triad a = b + s*c, with s = 3. Each loop trip handles 4 registers' worth
//! of elements; lengths are multiples of [`BLOCK`]. Written in `asm!` so
//! that each element costs exactly the declared loads, stores and FLOP at
//! every optimisation level. Registers: rdi = a, rsi = b, rdx = c,
//! r8 = &s, rax = byte offset, rcx = byte length.

use std::arch::asm;

/// Every kernel's length must be a multiple of this many elements
/// (4 zmm registers of 8 fp64).
pub const BLOCK: usize = 32;

/// The `s` of scale and triad.
pub static SCALAR: f64 = 3.0;

/// The signature of every STREAM kernel: `a`, `b`, `c`, elements.
pub type StreamFn = unsafe fn(*mut f64, *const f64, *const f64, usize);

/// One kernel: body per trip and the bytes it advances.
macro_rules! stream {
    ($name:ident, $features:literal, $step:literal, [$($setup:tt)*], [$($body:tt)*], [$($tail:tt)*]) => {
        /// # Safety
        /// `a`, `b` and `c` must hold `n` elements (the unused ones may
        /// dangle), 64-byte aligned; `n` a multiple of [`BLOCK`]; the CPU
        /// must have the instructions (see `data/kernels.toml`).
        #[target_feature(enable = $features)]
        pub unsafe fn $name(a: *mut f64, b: *const f64, c: *const f64, n: usize) {
            debug_assert!(n % BLOCK == 0, "length {n} is not a multiple of {BLOCK}");
            if n == 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            unsafe {
                asm!(
                    $($setup)*,
                    "xor eax, eax",
                    "2:",
                    $($body)*,
                    concat!("add rax, ", $step),
                    "cmp rax, rcx",
                    "jb 2b",
                    $($tail)*,
                    in("rdi") a,
                    in("rsi") b,
                    in("rdx") c,
                    in("r8") &SCALAR as *const f64,
                    in("rcx") n * 8,
                    out("rax") _,
                    clobber_abi("C"),
                    options(nostack),
                );
            }
        }
    };
}

// ---- scalar SSE2: 4 elements per trip.
macro_rules! scalar4 {
    ($f:ident) => {
        concat!($f!(0), $f!(8), $f!(16), $f!(24))
    };
}
macro_rules! copy_sd {
    ($o:literal) => {
        concat!(
            "movsd xmm0, qword ptr [rsi + rax + ",
            $o,
            "]\nmovsd qword ptr [rdi + rax + ",
            $o,
            "], xmm0\n"
        )
    };
}
macro_rules! scale_sd {
    ($o:literal) => {
        concat!(
            "movsd xmm0, qword ptr [rsi + rax + ",
            $o,
            "]\nmulsd xmm0, xmm15\nmovsd qword ptr [rdi + rax + ",
            $o,
            "], xmm0\n"
        )
    };
}
macro_rules! add_sd {
    ($o:literal) => {
        concat!(
            "movsd xmm0, qword ptr [rsi + rax + ",
            $o,
            "]\naddsd xmm0, qword ptr [rdx + rax + ",
            $o,
            "]\nmovsd qword ptr [rdi + rax + ",
            $o,
            "], xmm0\n"
        )
    };
}
macro_rules! triad_sd {
    ($o:literal) => {
        concat!(
            "movsd xmm0, qword ptr [rdx + rax + ",
            $o,
            "]\nmulsd xmm0, xmm15\naddsd xmm0, qword ptr [rsi + rax + ",
            $o,
            "]\nmovsd qword ptr [rdi + rax + ",
            $o,
            "], xmm0\n"
        )
    };
}
stream!(
    copy_scalar,
    "sse2",
    "32",
    ["nop"],
    [scalar4!(copy_sd)],
    ["nop"]
);
stream!(
    scale_scalar,
    "sse2",
    "32",
    ["movsd xmm15, qword ptr [r8]"],
    [scalar4!(scale_sd)],
    ["nop"]
);
stream!(
    add_scalar,
    "sse2",
    "32",
    ["nop"],
    [scalar4!(add_sd)],
    ["nop"]
);
stream!(
    triad_scalar,
    "sse2",
    "32",
    ["movsd xmm15, qword ptr [r8]"],
    [scalar4!(triad_sd)],
    ["nop"]
);

// ---- vectors: 4 registers per trip; `$w` is the register width in bytes.
macro_rules! vec4 {
    ($f:ident, $st:literal, $r:literal, 16) => {
        concat!(
            $f!($st, $r, "0", 0),
            $f!($st, $r, "1", 16),
            $f!($st, $r, "2", 32),
            $f!($st, $r, "3", 48)
        )
    };
    ($f:ident, $st:literal, $r:literal, 32) => {
        concat!(
            $f!($st, $r, "0", 0),
            $f!($st, $r, "1", 32),
            $f!($st, $r, "2", 64),
            $f!($st, $r, "3", 96)
        )
    };
    ($f:ident, $st:literal, $r:literal, 64) => {
        concat!(
            $f!($st, $r, "0", 0),
            $f!($st, $r, "1", 64),
            $f!($st, $r, "2", 128),
            $f!($st, $r, "3", 192)
        )
    };
}
// Legacy SSE2 (two-operand; memory operands are 16-byte aligned).
macro_rules! copy_pd {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "movupd xmm",
            $i,
            ", [rsi + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], xmm",
            $i,
            "\n"
        )
    };
}
macro_rules! scale_pd {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "movupd xmm",
            $i,
            ", [rsi + rax + ",
            $o,
            "]\nmulpd xmm",
            $i,
            ", xmm15\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], xmm",
            $i,
            "\n"
        )
    };
}
macro_rules! add_pd {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "movupd xmm",
            $i,
            ", [rsi + rax + ",
            $o,
            "]\naddpd xmm",
            $i,
            ", [rdx + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], xmm",
            $i,
            "\n"
        )
    };
}
macro_rules! triad_pd {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "movupd xmm",
            $i,
            ", [rdx + rax + ",
            $o,
            "]\nmulpd xmm",
            $i,
            ", xmm15\naddpd xmm",
            $i,
            ", [rsi + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], xmm",
            $i,
            "\n"
        )
    };
}
stream!(
    copy_sse,
    "sse2",
    "64",
    ["nop"],
    [vec4!(copy_pd, "movupd", "xmm", 16)],
    ["nop"]
);
stream!(
    scale_sse,
    "sse2",
    "64",
    ["movsd xmm15, qword ptr [r8]\nunpcklpd xmm15, xmm15"],
    [vec4!(scale_pd, "movupd", "xmm", 16)],
    ["nop"]
);
stream!(
    add_sse,
    "sse2",
    "64",
    ["nop"],
    [vec4!(add_pd, "movupd", "xmm", 16)],
    ["nop"]
);
stream!(
    triad_sse,
    "sse2",
    "64",
    ["movsd xmm15, qword ptr [r8]\nunpcklpd xmm15, xmm15"],
    [vec4!(triad_pd, "movupd", "xmm", 16)],
    ["nop"]
);
stream!(
    copy_sse_nt,
    "sse2",
    "64",
    ["nop"],
    [vec4!(copy_pd, "movntpd", "xmm", 16)],
    ["sfence"]
);
stream!(
    scale_sse_nt,
    "sse2",
    "64",
    ["movsd xmm15, qword ptr [r8]\nunpcklpd xmm15, xmm15"],
    [vec4!(scale_pd, "movntpd", "xmm", 16)],
    ["sfence"]
);
stream!(
    add_sse_nt,
    "sse2",
    "64",
    ["nop"],
    [vec4!(add_pd, "movntpd", "xmm", 16)],
    ["sfence"]
);
stream!(
    triad_sse_nt,
    "sse2",
    "64",
    ["movsd xmm15, qword ptr [r8]\nunpcklpd xmm15, xmm15"],
    [vec4!(triad_pd, "movntpd", "xmm", 16)],
    ["sfence"]
);

// VEX / EVEX (three-operand), ymm or zmm.
macro_rules! copy_v {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "vmovupd ",
            $r,
            $i,
            ", [rsi + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], ",
            $r,
            $i,
            "\n"
        )
    };
}
macro_rules! scale_v {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "vmulpd ",
            $r,
            $i,
            ", ",
            $r,
            "15, [rsi + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], ",
            $r,
            $i,
            "\n"
        )
    };
}
macro_rules! add_v {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "vmovupd ",
            $r,
            $i,
            ", [rsi + rax + ",
            $o,
            "]\nvaddpd ",
            $r,
            $i,
            ", ",
            $r,
            $i,
            ", [rdx + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], ",
            $r,
            $i,
            "\n"
        )
    };
}
macro_rules! triad_v {
    ($st:literal, $r:literal, $i:literal, $o:literal) => {
        concat!(
            "vmovupd ",
            $r,
            $i,
            ", [rsi + rax + ",
            $o,
            "]\nvfmadd231pd ",
            $r,
            $i,
            ", ",
            $r,
            "15, [rdx + rax + ",
            $o,
            "]\n",
            $st,
            " [rdi + rax + ",
            $o,
            "], ",
            $r,
            $i,
            "\n"
        )
    };
}
stream!(
    copy_avx,
    "avx",
    "128",
    ["nop"],
    [vec4!(copy_v, "vmovupd", "ymm", 32)],
    ["vzeroupper"]
);
stream!(
    scale_avx,
    "avx",
    "128",
    ["vbroadcastsd ymm15, qword ptr [r8]"],
    [vec4!(scale_v, "vmovupd", "ymm", 32)],
    ["vzeroupper"]
);
stream!(
    add_avx,
    "avx",
    "128",
    ["nop"],
    [vec4!(add_v, "vmovupd", "ymm", 32)],
    ["vzeroupper"]
);
stream!(
    triad_avx,
    "avx,fma",
    "128",
    ["vbroadcastsd ymm15, qword ptr [r8]"],
    [vec4!(triad_v, "vmovupd", "ymm", 32)],
    ["vzeroupper"]
);
stream!(
    copy_avx_nt,
    "avx",
    "128",
    ["nop"],
    [vec4!(copy_v, "vmovntpd", "ymm", 32)],
    ["sfence\nvzeroupper"]
);
stream!(
    scale_avx_nt,
    "avx",
    "128",
    ["vbroadcastsd ymm15, qword ptr [r8]"],
    [vec4!(scale_v, "vmovntpd", "ymm", 32)],
    ["sfence\nvzeroupper"]
);
stream!(
    add_avx_nt,
    "avx",
    "128",
    ["nop"],
    [vec4!(add_v, "vmovntpd", "ymm", 32)],
    ["sfence\nvzeroupper"]
);
stream!(
    triad_avx_nt,
    "avx,fma",
    "128",
    ["vbroadcastsd ymm15, qword ptr [r8]"],
    [vec4!(triad_v, "vmovntpd", "ymm", 32)],
    ["sfence\nvzeroupper"]
);
stream!(
    copy_avx512,
    "avx512f",
    "256",
    ["nop"],
    [vec4!(copy_v, "vmovupd", "zmm", 64)],
    ["vzeroupper"]
);
stream!(
    scale_avx512,
    "avx512f",
    "256",
    ["vbroadcastsd zmm15, qword ptr [r8]"],
    [vec4!(scale_v, "vmovupd", "zmm", 64)],
    ["vzeroupper"]
);
stream!(
    add_avx512,
    "avx512f",
    "256",
    ["nop"],
    [vec4!(add_v, "vmovupd", "zmm", 64)],
    ["vzeroupper"]
);
stream!(
    triad_avx512,
    "avx512f",
    "256",
    ["vbroadcastsd zmm15, qword ptr [r8]"],
    [vec4!(triad_v, "vmovupd", "zmm", 64)],
    ["vzeroupper"]
);
stream!(
    copy_avx512_nt,
    "avx512f",
    "256",
    ["nop"],
    [vec4!(copy_v, "vmovntpd", "zmm", 64)],
    ["sfence\nvzeroupper"]
);
stream!(
    scale_avx512_nt,
    "avx512f",
    "256",
    ["vbroadcastsd zmm15, qword ptr [r8]"],
    [vec4!(scale_v, "vmovntpd", "zmm", 64)],
    ["sfence\nvzeroupper"]
);
stream!(
    add_avx512_nt,
    "avx512f",
    "256",
    ["nop"],
    [vec4!(add_v, "vmovntpd", "zmm", 64)],
    ["sfence\nvzeroupper"]
);
stream!(
    triad_avx512_nt,
    "avx512f",
    "256",
    ["vbroadcastsd zmm15, qword ptr [r8]"],
    [vec4!(triad_v, "vmovntpd", "zmm", 64)],
    ["sfence\nvzeroupper"]
);
