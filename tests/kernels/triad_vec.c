/* Triad a[i] = b[i] + s * c[i] with explicit vector loads and stores, so that
 * the size of every memory access is known: V = 16 bytes (SSE2 intrinsics) or
 * 32 bytes (AVX, when built with -mavx or later). L = V / sizeof(REAL) lanes.
 *
 *   usage: triad_vec N REPS     (N <= NMAX, a multiple of 8)
 *   build: -O2 -msse2 | -O2 -mavx | -O2 -mavx2 -mfma, [-DSINGLE]
 *
 * Per vector iteration (N / L per rep): two aligned V-byte loads (b, c; the
 * compiler may fold one into the arithmetic instruction's memory operand, the
 * access is the same), one V-byte aligned store (a), and either one MUL and
 * one ADD of width 8 V bits or, with FMA (__FMA__), one FMA.
 *
 *   flop.total = flop.fp64 (fp32 with -DSINGLE) = 2 N reps
 *   fp_instructions: (8V bits, L lanes, mul) and (.., add), N/L reps each,
 *                    or (8V bits, L lanes, fma) N/L reps, 2 N reps FLOP
 *
 * Memory: everything outside the loop is the same at any N of equal digit
 * count (static arrays set up over NMAX), so between runs at n1 and n2:
 *
 *   d mem_accesses.read[V]  = 2 (n2 - n1) / L reps,  other sizes: 0
 *   d mem_accesses.write[V] =   (n2 - n1) / L reps,  other sizes: 0
 *   d bytes.read = 2 sizeof(REAL) (n2 - n1) reps, d bytes.written = half that
 */
#include <immintrin.h>
#include "kernel.h"

#define NMAX 4096
static REAL a[NMAX] __attribute__((aligned(64)));
static REAL b[NMAX] __attribute__((aligned(64)));
static REAL c[NMAX] __attribute__((aligned(64)));

#if defined(__AVX__) && defined(SINGLE)
#define VEC __m256
#define LOAD _mm256_load_ps
#define STORE _mm256_store_ps
#define SET1 _mm256_set1_ps
#define MUL _mm256_mul_ps
#define ADD _mm256_add_ps
#define FMADD _mm256_fmadd_ps
#elif defined(__AVX__)
#define VEC __m256d
#define LOAD _mm256_load_pd
#define STORE _mm256_store_pd
#define SET1 _mm256_set1_pd
#define MUL _mm256_mul_pd
#define ADD _mm256_add_pd
#define FMADD _mm256_fmadd_pd
#elif defined(SINGLE)
#define VEC __m128
#define LOAD _mm_load_ps
#define STORE _mm_store_ps
#define SET1 _mm_set1_ps
#define MUL _mm_mul_ps
#define ADD _mm_add_ps
#else
#define VEC __m128d
#define LOAD _mm_load_pd
#define STORE _mm_store_pd
#define SET1 _mm_set1_pd
#define MUL _mm_mul_pd
#define ADD _mm_add_pd
#endif
#define LANES (long)(sizeof(VEC) / sizeof(REAL))

__attribute__((noinline)) static void triad(long n, long reps, REAL s) {
    VEC vs = SET1(s);
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i += LANES) {
#ifdef __FMA__
            STORE(&a[i], FMADD(vs, LOAD(&c[i]), LOAD(&b[i])));
#else
            STORE(&a[i], ADD(LOAD(&b[i]), MUL(vs, LOAD(&c[i]))));
#endif
        }
        escape(a);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    if (n > NMAX || n % 8 != 0) return 64;
    for (long i = 0; i < NMAX; i++) {
        b[i] = (REAL)(i % 7 + 1);
        c[i] = (REAL)(i % 5 + 1);
    }
    triad(n, reps, (REAL)3);
    escape(a);
    return 0;
}
