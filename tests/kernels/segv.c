/* Does N fused multiply-adds, then writes through a null pointer.
 *
 *   usage: segv N               build: -O2 -mavx2 -mfma
 *
 * The chain acc = _mm256_fmadd_pd(acc, x, y) runs N times: N VFMADD*PD ymm, 8
 * FLOP each (fp64, 4 lanes, 2 per lane). Its result is stored (a move), then
 * the program stores to address 0 and dies of SIGSEGV. No floating-point
 * instruction follows the fault.
 *
 *   exit_status = "signal:SIGSEGV", complete = false
 *   flop.total = flop.fp64 = flop_by_op.fma = 8 N
 */
#include <immintrin.h>
#include "kernel.h"

static volatile double vd = 0.5;
static volatile __m256d sink;
static int *volatile nowhere;

__attribute__((noinline)) static __m256d chain(long n) {
    __m256d acc = _mm256_set1_pd(vd), x = _mm256_set1_pd(vd), y = _mm256_set1_pd(vd);
    for (long i = 0; i < n; i++)
        acc = _mm256_fmadd_pd(acc, x, y);
    return acc;
}

int main(int argc, char **argv) {
    sink = chain(arg_long(argc, argv, 1));
    *nowhere = 1;
    return 0;
}
