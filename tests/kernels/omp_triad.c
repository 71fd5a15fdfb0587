/* OpenMP triad: a[i] = b[i] + s * c[i], the i loop shared by the threads of a
 * `parallel for`, repeated reps times.
 *
 *   usage: omp_triad N REPS     (N <= NMAX)   build: -O2 -fopenmp
 *
 * Whatever OMP_NUM_THREADS is, each (element, rep) pair is computed by exactly
 * one thread: one multiply and one add. No floating-point reduction is done
 * (its combining adds would depend on the thread count), and libgomp's own
 * scheduling is integer work.
 *
 *   flop.total = flop.fp64 = 2 N reps, for any number of threads,
 *   and the per-thread rows of the report sum to it.
 */
#include "kernel.h"

#define NMAX 4096
static double a[NMAX], b[NMAX], c[NMAX];

__attribute__((noinline)) static void triad(long n, long reps, double s) {
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        escape(a);
    }
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    if (n > NMAX) return 64;
    for (long i = 0; i < NMAX; i++) {
        b[i] = (double)(i % 7 + 1);
        c[i] = (double)(i % 5 + 1);
    }
    triad(n, reps, 3.0);
    escape(a);
    return 0;
}
