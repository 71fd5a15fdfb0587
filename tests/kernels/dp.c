/* Dot-product chains (DPPS, DPPD): acc = dp(acc, x, imm8).
 *
 *   usage: dp N                 build: -O2 -msse4.1 | -O2 -mavx | -O2 -mavx2 -mfma
 *
 * Per 128-bit block, imm8 bits 7:4 (DPPS) or 5:4 (DPPD) select m products:
 * m multiplies plus max(m - 1, 0) adds. Bits 3:0 only choose which result
 * lanes receive the sum and cost nothing. VDPPS ymm has two blocks.
 * Chain k runs N + k iterations of one instruction, op class `dot`, its
 * multiplies booked under mul and its adds under add. Chains 5-6 need AVX.
 *
 *   k  intrinsic              imm8  precision width lanes  m   mul add FLOP
 *   0  _mm_dp_ps              0xFF  fp32      128   4      4   4   3   7
 *   1  _mm_dp_ps              0x71  fp32      128   4      3   3   2   5
 *   2  _mm_dp_ps              0x31  fp32      128   4      2   2   1   3
 *   3  _mm_dp_pd              0x31  fp64      128   2      2   2   1   3
 *   4  _mm_dp_pd              0x11  fp64      128   2      1   1   0   1
 *   5  _mm256_dp_ps           0xFF  fp32      256   8    2x4   8   6  14  (AVX)
 *   6  _mm256_dp_ps           0x55  fp32      256   8    2x2   4   2   6  (AVX)
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
static volatile __m256 sink_ps256;
#endif

#define CHAIN(name, type, set1, seed, op, imm)                           \
    __attribute__((noinline)) static type name(long n) {                 \
        type acc = set1(seed), x = set1(seed);                           \
        for (long i = 0; i < n; i++)                                     \
            acc = op(acc, x, imm);                                       \
        return acc;                                                      \
    }

CHAIN(c0, __m128, _mm_set1_ps, vf, _mm_dp_ps, 0xFF)
CHAIN(c1, __m128, _mm_set1_ps, vf, _mm_dp_ps, 0x71)
CHAIN(c2, __m128, _mm_set1_ps, vf, _mm_dp_ps, 0x31)
CHAIN(c3, __m128d, _mm_set1_pd, vd, _mm_dp_pd, 0x31)
CHAIN(c4, __m128d, _mm_set1_pd, vd, _mm_dp_pd, 0x11)
#ifdef __AVX__
CHAIN(c5, __m256, _mm256_set1_ps, vf, _mm256_dp_ps, 0xFF)
CHAIN(c6, __m256, _mm256_set1_ps, vf, _mm256_dp_ps, 0x55)
#endif

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    sink_ps = c0(n + 0);
    sink_ps = c1(n + 1);
    sink_ps = c2(n + 2);
    sink_pd = c3(n + 3);
    sink_pd = c4(n + 4);
#ifdef __AVX__
    sink_ps256 = c5(n + 5);
    sink_ps256 = c6(n + 6);
#endif
    return 0;
}
