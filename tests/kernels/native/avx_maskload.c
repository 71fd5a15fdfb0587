/* AVX masked loads and stores (VMASKMOVPD/PS, VPMASKMOVQ/D), n rounds, each
 * mask taken from memory so that none is hoisted. Per round, active
 * elements (2 of 4 doubles, 3 of 8 floats, 1 of 4 quadwords, 5 of 8
 * dwords) loaded, and the 2 doubles stored back under their mask:
 *   bytes read by the masked loads: n x (2x8 + 3x4 + 1x8 + 5x4) = 56 n
 *   bytes written by the masked store: n x 2x8 = 16 n
 *   FLOP: n x (4 fp64 adds (ymm) + 8 fp32 adds (ymm)) = 12 n
 * The region "masked" holds the loop.
 * Usage: avx_maskload N */
#include <immintrin.h>
#include <stdio.h>
#include "kernel.h"
#include "flopscope.h"

static double a[4] = {1, 2, 3, 4}, out[4];
static float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static long long q[4] = {1, 2, 3, 4};
static int d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static long long mpd[4] = {-1, 0, -1, 0};
static int mps[8] = {-1, 0, 0, -1, 0, 0, 0, -1};
static long long mq[4] = {0, 0, 0, -1};
static int md[8] = {-1, -1, 0, -1, 0, -1, 0, -1};

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    __m256d s = _mm256_setzero_pd();
    __m256 t = _mm256_setzero_ps();
    __m256i iq = _mm256_setzero_si256(), id = _mm256_setzero_si256();
    FLOPSCOPE_REGION_BEGIN("masked");
    for (long i = 0; i < n; i++) {
        escape(mpd);
        __m256i m = _mm256_loadu_si256((const __m256i *)mpd);
        s = _mm256_add_pd(s, _mm256_maskload_pd(a, m));
        t = _mm256_add_ps(t, _mm256_maskload_ps(f, _mm256_loadu_si256((const __m256i *)mps)));
        iq = _mm256_xor_si256(iq, _mm256_maskload_epi64(q, _mm256_loadu_si256((const __m256i *)mq)));
        id = _mm256_xor_si256(id, _mm256_maskload_epi32(d, _mm256_loadu_si256((const __m256i *)md)));
        _mm256_maskstore_pd(out, m, s);
    }
    FLOPSCOPE_REGION_END("masked");
    float tf[8];
    long long qq[4];
    int dd[8];
    _mm256_storeu_ps(tf, t);
    _mm256_storeu_si256((__m256i *)qq, iq);
    _mm256_storeu_si256((__m256i *)dd, id);
    printf("%g %g %g %lld %d\n", out[0], out[2], (double)tf[7], qq[3], dd[7]);
    return 0;
}
