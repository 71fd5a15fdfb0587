/* Min/max chains: acc = min(max(acc, lo), hi), one instruction form per chain.
 *
 *   usage: minmax N             build: -O2 -msse2 | -O2 -mavx | -O2 -mavx2 -mfma
 *
 * Chain k runs N + k iterations of two instructions (one MAX, one MIN), each
 * 1 FLOP per lane, booked under `minmax`. Chains 4 and 5 exist only when built
 * with AVX (__AVX__); with -mavx the SSE intrinsics become their VEX forms,
 * same width.
 *
 *   k  intrinsics                 precision width lanes  instructions  FLOP
 *   0  _mm_max_pd, _mm_min_pd     fp64      128   2      2 n0          4 n0
 *   1  _mm_max_ps, _mm_min_ps     fp32      128   4      2 n1          8 n1
 *   2  _mm_max_sd, _mm_min_sd     fp64       64   1      2 n2          2 n2
 *   3  _mm_max_ss, _mm_min_ss     fp32       32   1      2 n3          2 n3
 *   4  _mm256_max_pd, _min_pd     fp64      256   4      2 n4          8 n4   (AVX)
 *   5  _mm256_max_ps, _min_ps     fp32      256   8      2 n5         16 n5   (AVX)
 *
 *   flop_by_op.minmax = flop.total, with nk = N + k.
 */
#include <immintrin.h>
#include "kernel.h"

static volatile double vlo = 0.25, vhi = 0.75;
static volatile float flo = 0.25f, fhi = 0.75f;
static volatile __m128d sink_pd;
static volatile __m128 sink_ps;
#ifdef __AVX__
static volatile __m256d sink_pd256;
static volatile __m256 sink_ps256;
#endif

#define CHAIN(name, type, set1, lo, hi, max, min)                        \
    __attribute__((noinline)) static type name(long n) {                 \
        type acc = set1(lo), l = set1(lo), h = set1(hi);                 \
        for (long i = 0; i < n; i++)                                     \
            acc = min(max(acc, l), h);                                   \
        return acc;                                                      \
    }

CHAIN(c0, __m128d, _mm_set1_pd, vlo, vhi, _mm_max_pd, _mm_min_pd)
CHAIN(c1, __m128, _mm_set1_ps, flo, fhi, _mm_max_ps, _mm_min_ps)
CHAIN(c2, __m128d, _mm_set1_pd, vlo, vhi, _mm_max_sd, _mm_min_sd)
CHAIN(c3, __m128, _mm_set1_ps, flo, fhi, _mm_max_ss, _mm_min_ss)
#ifdef __AVX__
CHAIN(c4, __m256d, _mm256_set1_pd, vlo, vhi, _mm256_max_pd, _mm256_min_pd)
CHAIN(c5, __m256, _mm256_set1_ps, flo, fhi, _mm256_max_ps, _mm256_min_ps)
#endif

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    sink_pd = c0(n + 0);
    sink_ps = c1(n + 1);
    sink_pd = c2(n + 2);
    sink_ps = c3(n + 3);
#ifdef __AVX__
    sink_pd256 = c4(n + 4);
    sink_ps256 = c5(n + 5);
#endif
    return 0;
}
