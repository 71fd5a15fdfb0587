/* i-k-j matrix product C = C + A B of n x n REAL matrices, repeated reps times.
 *
 *   usage: matmul N REPS        build: -O2 [-msse2 | -mavx | -mavx2 -mfma] [-DSINGLE]
 *
 * The statement c[i*n+j] += aik * b[k*n+j] runs once per (i, k, j), n^3 times
 * per rep, and does one multiply and one add. The compiler may vectorize it
 * (any width) or contract the pair into one fused multiply-add (2 FLOP): the
 * total is the same. Setup only converts integers (CVTSI2SD is not a FLOP).
 *
 *   flop.total = flop.fp64 (flop.fp32 with -DSINGLE) = 2 n^3 reps
 *   flop_by_op: add = mul = n^3 reps           (no FMA available)
 *               fma = 2 n^3 reps               (-mfma: GCC contracts a*b+c)
 */
#include "kernel.h"

__attribute__((noinline)) static void matmul(long n, long reps, const REAL *a, const REAL *b, REAL *c) {
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            for (long k = 0; k < n; k++) {
                REAL aik = a[i * n + k];
                for (long j = 0; j < n; j++)
                    c[i * n + j] += aik * b[k * n + j];
            }
        escape(c);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    REAL *a = malloc(n * n * sizeof(REAL)), *b = malloc(n * n * sizeof(REAL)), *c = malloc(n * n * sizeof(REAL));
    if (!a || !b || !c) return 65;
    for (long i = 0; i < n * n; i++) {
        a[i] = (REAL)(i % 7 + 1);
        b[i] = (REAL)(i % 5 + 1);
        c[i] = (REAL)0;
    }
    matmul(n, reps, a, b, c);
    escape(c);
    return 0;
}
