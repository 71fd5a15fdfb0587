/* An AVX-512 program: one _mm512_add_pd (VADDPD zmm, EVEX-encoded), which
 * QEMU 7.2 cannot execute.
 *
 *   usage: avx512               build: -O2 -mavx512f
 *
 * The operands are built with AVX (VEX) instructions and widened with casts
 * that emit no instruction, so the add is the first EVEX instruction the
 * program reaches (check: objdump -d). Under emulation it dies there of
 * SIGILL before doing any FLOP.
 *
 *   exit_status = "signal:SIGILL", complete = false, flop.total = 0,
 *   and a warning naming AVX-512 and vaddpd, with the remedy -march=x86-64-v3.
 */
#include <immintrin.h>

static volatile double vd = 0.5;
static volatile double sink;

int main(void) {
    __m256d x = _mm256_set1_pd(vd);
    __m512d w = _mm512_castpd256_pd512(x);
    __m512d s = _mm512_add_pd(w, w);
    sink = _mm256_cvtsd_f64(_mm512_castpd512_pd256(s));
    return 0;
}
