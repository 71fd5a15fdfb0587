/* AVX-512 with opmasks, gathers and scatters, written with intrinsics so
 * that the instruction forms are known, each kernel in a named region.
 *
 *   usage: avx512_masked N REPS      (N <= 4096)
 *   build: gcc -O2 -march=x86-64-v4 -I crates/markers/include
 *
 * Let q = N / 8 (whole vectors of 8 doubles), r = N % 8, and per rep:
 *
 *   region "triad"   a[i] = b[i] + s c[i]: q unmasked VFMADD231PD zmm (16
 *                    FLOP each) and, if r > 0, one masked-remainder
 *                    VFMADD zmm{k} with r active lanes (2 r FLOP). Loads:
 *                    2 q full 64-byte loads + 2 r masked 8-byte elements;
 *                    stores: q 64-byte + r masked 8-byte elements.
 *   region "sum32"   acc = acc + d[i] over N floats, every iteration masked
 *                    (k = lanes left, at most 16): ceil(N/16) VADDPS zmm{k},
 *                    N FLOP (fp32 add); reads: N masked 4-byte elements.
 *   region "gather"  g = table[idx[i]] for i < N with VGATHERDPD zmm{k}
 *                    (ceil(N/8) of them, N active elements of 8 bytes),
 *                    idx loaded 32 bytes at a time (ceil(N/8) loads), then
 *                    sum = sum + g masked: N FLOP (fp64 add).
 *   region "scatter" out[idx[i]] = v for i < N with VSCATTERDPD zmm{k}: N
 *                    written 8-byte elements, ceil(N/8) 32-byte idx loads,
 *                    no FLOP.
 *
 * Totals per region are these times REPS; nothing else in a region touches
 * memory (check: objdump -d, the loops keep everything in registers).
 * Outside the regions only integer work is done, so the whole program's
 * FLOP is the sum of the regions' FLOP.
 */
#include <immintrin.h>
#include <stdint.h>
#include "flopscope.h"
#include "../kernel.h"

#define NMAX 4096
static double a[NMAX + 8], b[NMAX + 8], c[NMAX + 8], table[NMAX + 8], out[NMAX + 8];
static float d[NMAX + 16];
static int32_t idx[NMAX + 8];

__attribute__((noinline)) static void triad(long n, __m512d s) {
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d x = _mm512_loadu_pd(b + i), y = _mm512_loadu_pd(c + i);
        _mm512_storeu_pd(a + i, _mm512_fmadd_pd(s, y, x));
    }
    if (i < n) {
        __mmask8 k = (__mmask8)((1u << (n - i)) - 1);
        __m512d x = _mm512_maskz_loadu_pd(k, b + i), y = _mm512_maskz_loadu_pd(k, c + i);
        _mm512_mask_storeu_pd(a + i, k, _mm512_maskz_fmadd_pd(k, s, y, x));
    }
}

__attribute__((noinline)) static __m512 sum32(long n) {
    __m512 acc = _mm512_setzero_ps();
    for (long i = 0; i < n; i += 16) {
        long left = n - i;
        __mmask16 k = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        acc = _mm512_mask_add_ps(acc, k, acc, _mm512_maskz_loadu_ps(k, d + i));
    }
    return acc;
}

__attribute__((noinline)) static __m512d gather(long n) {
    __m512d sum = _mm512_setzero_pd();
    for (long i = 0; i < n; i += 8) {
        long left = n - i;
        __mmask8 k = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);
        __m256i j = _mm256_loadu_si256((const __m256i *)(idx + i));
        __m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, j, table, 8);
        sum = _mm512_mask_add_pd(sum, k, sum, g);
    }
    return sum;
}

__attribute__((noinline)) static void scatter(long n, __m512d v) {
    for (long i = 0; i < n; i += 8) {
        long left = n - i;
        __mmask8 k = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);
        __m256i j = _mm256_loadu_si256((const __m256i *)(idx + i));
        _mm512_mask_i32scatter_pd(out, k, j, v, 8);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    if (n > NMAX) return 64;
    for (long i = 0; i < n; i++) {
        b[i] = (double)i;
        c[i] = (double)(n - i);
        d[i] = (float)(i & 7);
        table[i] = (double)(i & 15);
        idx[i] = (int32_t)((i * 7) % n);
    }
    __m512d s = _mm512_set1_pd((double)(reps + 1));
    __m512 acc = _mm512_setzero_ps();
    __m512d sum = _mm512_setzero_pd();
    for (long r = 0; r < reps; r++) {
        FLOPSCOPE_REGION_BEGIN("triad");
        triad(n, s);
        FLOPSCOPE_REGION_END("triad");
        escape(a);
        FLOPSCOPE_REGION_BEGIN("sum32");
        acc = sum32(n);
        FLOPSCOPE_REGION_END("sum32");
        FLOPSCOPE_REGION_BEGIN("gather");
        sum = gather(n);
        FLOPSCOPE_REGION_END("gather");
        FLOPSCOPE_REGION_BEGIN("scatter");
        scatter(n, s);
        FLOPSCOPE_REGION_END("scatter");
        escape(out);
    }
    /* Keep the results alive without floating-point work: store and escape. */
    float fa[16];
    double fs[8];
    _mm512_storeu_ps(fa, acc);
    _mm512_storeu_pd(fs, sum);
    escape(fa);
    escape(fs);
    return 0;
}
