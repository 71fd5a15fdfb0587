/* STREAM triad a[i] = b[i] + s * c[i] over the first n elements, reps times.
 *
 *   usage: triad N REPS         (N <= NMAX)
 *   build: -O2 [-msse2 | -mavx | -mavx2 -mfma] [-DSINGLE]
 *
 * FLOP: one multiply and one add per element per rep (or one FMA, with -mfma):
 *
 *   flop.total = flop.fp64 (fp32 with -DSINGLE) = 2 n reps
 *   flop_by_op: add = mul = n reps, or fma = 2 n reps with -mfma
 *
 * Bytes: per element per rep the loop loads b[i] and c[i] and stores a[i],
 * whatever the vector width. The arrays are static and set up over all NMAX
 * elements, the loop counters live in registers, and N is given with the same
 * number of digits, so nothing else depends on n. Two runs at n1 and n2 differ
 * by exactly
 *
 *   d bytes.read    = 2 sizeof(REAL) (n2 - n1) reps
 *   d bytes.written =   sizeof(REAL) (n2 - n1) reps
 */
#include "kernel.h"

#define NMAX 4096
static REAL a[NMAX], b[NMAX], c[NMAX];

__attribute__((noinline)) static void triad(long n, long reps, REAL s) {
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        escape(a);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    if (n > NMAX) return 64;
    for (long i = 0; i < NMAX; i++) {
        b[i] = (REAL)(i % 7 + 1);
        c[i] = (REAL)(i % 5 + 1);
    }
    triad(n, reps, (REAL)3);
    escape(a);
    return 0;
}
