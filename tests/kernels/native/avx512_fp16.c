/* AVX512-FP16 arithmetic: a compiled half-precision loop and hand-written
 * masked instructions whose masks are wider than 16 bits.
 *
 *   usage: avx512_fp16 MASK N REPS      (MASK: 32 bits; N <= 4096)
 *   build: gcc -O3 -mavx512fp16 -mavx512vl -I crates/markers/include
 *
 * Region "axpy": y[i] = a x[i] + y[i] over N _Float16, REPS times. gcc
 *   vectorizes it with VFMADD...PH zmm and ymm and finishes with scalar
 *   VFMADD...SH; every element is one FMA whatever the split:
 *   2 N REPS FLOP, all fp16 and all fma.
 * Region "masked", under opmask m = MASK (k1), once:
 *   vaddph zmm{k1}          32 lanes: popcount(m) adds
 *   vmulph ymm{k1}          16 lanes: popcount(m & 0xffff) multiplies
 *   vfmadd231ph xmm{k1}      8 lanes: 2 popcount(m & 0xff) FLOP, fma
 *   vfmaddcph zmm{k1}       16 complex lanes (the mask's low 16 bits, one
 *                           per complex pair), 8 FLOP each, fma
 *   vsqrtsh xmm{k1}          1 lane: popcount(m & 1) square roots
 *   vaddph zmm, [h]{1to32}  unmasked: 32 adds, one 2-byte read
 * so FLOP = pc(m) + pc(m & 0xffff) + 2 pc(m & 0xff) + 8 pc(m & 0xffff)
 *         + pc(m & 1) + 32, all fp16; the region reads 2 bytes.
 */
#include <stdlib.h>
#include "flopscope.h"

#define NMAX 4096
static _Float16 x[NMAX], y[NMAX];
static _Float16 h[1] __attribute__((aligned(64))) = {1.0f16};

__attribute__((noinline)) static void axpy(int n, _Float16 a, const _Float16 *restrict xs,
                                           _Float16 *restrict ys) {
    for (int i = 0; i < n; i++)
        ys[i] = a * xs[i] + ys[i];
}

int main(int argc, char **argv) {
    unsigned m = argc > 1 ? (unsigned)strtoul(argv[1], 0, 0) : 0xffffffffu;
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    int reps = argc > 3 ? atoi(argv[3]) : 1;
    if (n < 0 || n > NMAX)
        return 2;
    for (int i = 0; i < n; i++) {
        x[i] = (_Float16)(i % 7);
        y[i] = (_Float16)(i % 5);
    }
    FLOPSCOPE_REGION_BEGIN("axpy");
    for (int r = 0; r < reps; r++)
        axpy(n, (_Float16)0.5f, x, y);
    FLOPSCOPE_REGION_END("axpy");

    FLOPSCOPE_REGION_BEGIN("masked");
    /* The mask set in the same statement: k registers do not survive calls. */
    __asm__ __volatile__("kmovd %1, %%k1\n\t"
                         "vaddph %%zmm2, %%zmm1, %%zmm0%{%%k1%}\n\t"
                         "vmulph %%ymm2, %%ymm1, %%ymm0%{%%k1%}\n\t"
                         "vfmadd231ph %%xmm2, %%xmm1, %%xmm0%{%%k1%}\n\t"
                         "vfmaddcph %%zmm2, %%zmm1, %%zmm3%{%%k1%}\n\t"
                         "vsqrtsh %%xmm2, %%xmm1, %%xmm0%{%%k1%}\n\t"
                         "vaddph (%0)%{1to32%}, %%zmm1, %%zmm0"
                         :
                         : "r"(h), "r"(m)
                         : "xmm0", "xmm1", "xmm2", "xmm3", "k1", "memory");
    FLOPSCOPE_REGION_END("masked");

    volatile _Float16 sink = y[n / 2];
    (void)sink;
    return 0;
}
