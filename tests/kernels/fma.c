/* FMA chains, one fused multiply-add instruction form per chain.
 *
 *   usage: fma N                build: -O2 -mavx2 -mfma
 *
 * Chain k runs acc = op(acc, x, y) for N + k iterations (distinct counts, so a
 * count booked under the wrong width or precision shows). Each iteration is
 * one FMA instruction of the form below; operands come from volatile loads and
 * broadcasts (not FLOP). An FMA is 2 FLOP per lane, booked under `fma`; the
 * SDE-style fp_elements count it once.
 *
 *   k  intrinsic            instruction          precision width lanes FLOP each
 *   0  _mm256_fmadd_pd      VFMADD*PD ymm        fp64      256   4     8
 *   1  _mm256_fmaddsub_pd   VFMADDSUB*PD ymm     fp64      256   4     8
 *   2  _mm256_fnmadd_ps     VFNMADD*PS ymm       fp32      256   8    16
 *   3  _mm_fmsub_pd         VFMSUB*PD xmm        fp64      128   2     4
 *   4  _mm_fnmsub_ps        VFNMSUB*PS xmm       fp32      128   4     8
 *   5  _mm_fmadd_sd         VFMADD*SD            fp64       64   1     2
 *   6  _mm_fmadd_ss         VFMADD*SS            fp32       32   1     2
 *
 *   flop.fp64 = 8 n0 + 8 n1 + 4 n3 + 2 n5,  flop.fp32 = 16 n2 + 8 n4 + 2 n6,
 *   flop_by_op.fma = flop.total, with nk = N + k.
 */
#include <immintrin.h>
#include "kernel.h"

static volatile double vd = 0.5;
static volatile float vf = 0.5f;
static volatile __m256d sink_pd256;
static volatile __m256 sink_ps256;
static volatile __m128d sink_pd128;
static volatile __m128 sink_ps128;

#define CHAIN(name, type, set1, seed, op)                                \
    __attribute__((noinline)) static type name(long n) {                 \
        type acc = set1(seed), x = set1(seed), y = set1(seed);           \
        for (long i = 0; i < n; i++)                                     \
            acc = op(acc, x, y);                                         \
        return acc;                                                      \
    }

CHAIN(c0, __m256d, _mm256_set1_pd, vd, _mm256_fmadd_pd)
CHAIN(c1, __m256d, _mm256_set1_pd, vd, _mm256_fmaddsub_pd)
CHAIN(c2, __m256, _mm256_set1_ps, vf, _mm256_fnmadd_ps)
CHAIN(c3, __m128d, _mm_set1_pd, vd, _mm_fmsub_pd)
CHAIN(c4, __m128, _mm_set1_ps, vf, _mm_fnmsub_ps)
CHAIN(c5, __m128d, _mm_set1_pd, vd, _mm_fmadd_sd)
CHAIN(c6, __m128, _mm_set1_ps, vf, _mm_fmadd_ss)

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    sink_pd256 = c0(n + 0);
    sink_pd256 = c1(n + 1);
    sink_ps256 = c2(n + 2);
    sink_pd128 = c3(n + 3);
    sink_ps128 = c4(n + 4);
    sink_pd128 = c5(n + 5);
    sink_ps128 = c6(n + 6);
    return 0;
}
