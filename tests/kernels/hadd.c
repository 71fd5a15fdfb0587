/* Horizontal add/subtract and add-subtract chains: acc = op(acc, x).
 *
 *   usage: hadd N               build: -O2 -msse3 | -O2 -mavx | -O2 -mavx2 -mfma
 *
 * Chain k runs N + k iterations of one instruction. HADD/HSUB count 1 FLOP per
 * result element (= lanes), booked under add/sub; ADDSUB adds in half of the
 * lanes and subtracts in the other half. Chains 6-9 exist only with AVX.
 *
 *   k  intrinsic          op      precision width lanes FLOP each (flop_by_op)
 *   0  _mm_hadd_pd        hadd    fp64      128   2     2 (add)
 *   1  _mm_hadd_ps        hadd    fp32      128   4     4 (add)
 *   2  _mm_hsub_pd        hsub    fp64      128   2     2 (sub)
 *   3  _mm_hsub_ps        hsub    fp32      128   4     4 (sub)
 *   4  _mm_addsub_pd      addsub  fp64      128   2     2 (1 add, 1 sub)
 *   5  _mm_addsub_ps      addsub  fp32      128   4     4 (2 add, 2 sub)
 *   6  _mm256_hadd_pd     hadd    fp64      256   4     4 (add)         (AVX)
 *   7  _mm256_hadd_ps     hadd    fp32      256   8     8 (add)         (AVX)
 *   8  _mm256_hsub_ps     hsub    fp32      256   8     8 (sub)         (AVX)
 *   9  _mm256_addsub_pd   addsub  fp64      256   4     4 (2 add, 2 sub) (AVX)
 *
 * with nk = N + k executions of chain k.
 */
#include <immintrin.h>
#include "kernel.h"

static volatile double vd = 0.5;
static volatile float vf = 0.5f;
static volatile __m128d sink_pd;
static volatile __m128 sink_ps;
#ifdef __AVX__
static volatile __m256d sink_pd256;
static volatile __m256 sink_ps256;
#endif

#define CHAIN(name, type, set1, seed, op)                                \
    __attribute__((noinline)) static type name(long n) {                 \
        type acc = set1(seed), x = set1(seed);                           \
        for (long i = 0; i < n; i++)                                     \
            acc = op(acc, x);                                            \
        return acc;                                                      \
    }

CHAIN(c0, __m128d, _mm_set1_pd, vd, _mm_hadd_pd)
CHAIN(c1, __m128, _mm_set1_ps, vf, _mm_hadd_ps)
CHAIN(c2, __m128d, _mm_set1_pd, vd, _mm_hsub_pd)
CHAIN(c3, __m128, _mm_set1_ps, vf, _mm_hsub_ps)
CHAIN(c4, __m128d, _mm_set1_pd, vd, _mm_addsub_pd)
CHAIN(c5, __m128, _mm_set1_ps, vf, _mm_addsub_ps)
#ifdef __AVX__
CHAIN(c6, __m256d, _mm256_set1_pd, vd, _mm256_hadd_pd)
CHAIN(c7, __m256, _mm256_set1_ps, vf, _mm256_hadd_ps)
CHAIN(c8, __m256, _mm256_set1_ps, vf, _mm256_hsub_ps)
CHAIN(c9, __m256d, _mm256_set1_pd, vd, _mm256_addsub_pd)
#endif

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    sink_pd = c0(n + 0);
    sink_ps = c1(n + 1);
    sink_pd = c2(n + 2);
    sink_ps = c3(n + 3);
    sink_pd = c4(n + 4);
    sink_ps = c5(n + 5);
#ifdef __AVX__
    sink_pd256 = c6(n + 6);
    sink_ps256 = c7(n + 7);
    sink_ps256 = c8(n + 8);
    sink_pd256 = c9(n + 9);
#endif
    return 0;
}
