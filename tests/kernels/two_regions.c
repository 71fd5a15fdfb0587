/* Two marked regions with closed forms, for merge and diff tests.
 *
 *   usage: two_regions N REPS        (N <= NMAX)
 *   build: -O2 [-msse2 | -mavx2 -mfma] -I crates/markers/include
 *
 *   region "axpy":  y[i] = y[i] + s * x[i]   2 n reps FLOP (fp64)
 *   region "scale": z[i] = t * z[i]          n reps FLOP (fp64, multiplies)
 *
 * With -mfma the axpy FLOP are FMA at the vector width GCC picks; the totals
 * do not depend on the flags, only how they split by width and operation.
 */
#include "kernel.h"
#include "flopscope.h"

#define NMAX 4096
static double x[NMAX], y[NMAX], z[NMAX];

__attribute__((noinline)) static void axpy(long n, long reps, double s) {
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            y[i] = y[i] + s * x[i];
        escape(y);
    }
}

__attribute__((noinline)) static void scale(long n, long reps, double t) {
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            z[i] = t * z[i];
        escape(z);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    long reps = arg_long(argc, argv, 2);
    if (n > NMAX) return 2;
    /* The arrays may hold anything: the compiler must not fold s * x[i]. */
    escape(x);
    escape(y);
    escape(z);
    FLOPSCOPE_REGION_BEGIN("axpy");
    axpy(n, reps, 1.5);
    FLOPSCOPE_REGION_END("axpy");
    FLOPSCOPE_REGION_BEGIN("scale");
    scale(n, reps, 0.5);
    FLOPSCOPE_REGION_END("scale");
    return 0;
}
