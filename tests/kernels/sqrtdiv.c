/* Divide and square-root loops: q[i] = a[i] / b[i]; r[i] = sqrt(a[i]), over
 * the first n elements, reps times.
 *
 *   usage: sqrtdiv N REPS       (N <= NMAX)
 *   build: -O2 -fno-math-errno [-msse2 | -mavx | -mavx2 -mfma] [-DSINGLE]
 *
 * -fno-math-errno makes sqrt one SQRTSD/SQRTPD (no errno check, no libm call).
 * Without -ffast-math the compiler may not turn the divide into a multiply by
 * a reciprocal. Per element per rep: one divide and one square root.
 *
 *   flop.total = flop.fp64 (fp32 with -DSINGLE) = 2 n reps
 *   flop_by_op: div = n reps, sqrt = n reps
 */
#include "kernel.h"

#define NMAX 4096
static REAL a[NMAX], b[NMAX], q[NMAX], r[NMAX];

__attribute__((noinline)) static void sqrtdiv(long n, long reps) {
    for (long k = 0; k < reps; k++) {
        for (long i = 0; i < n; i++) {
            q[i] = a[i] / b[i];
            r[i] = SQRT(a[i]);
        }
        escape(q);
        escape(r);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    if (n > NMAX) return 64;
    for (long i = 0; i < NMAX; i++) {
        a[i] = (REAL)(i % 7 + 1);
        b[i] = (REAL)(i % 5 + 1);
    }
    sqrtdiv(n, reps);
    return 0;
}
