/* N fp64 adds, the unit of work of the process and thread kernels:
 * sum(adds_data, n) adds the first n of ADDS_MAX doubles one after another
 * (scalar ADDSD: the sum is a dependence chain gcc does not vectorize
 * without -ffast-math), exactly n FLOP. A kernel refuses n above ADDS_MAX.
 */
#ifndef ADDS_H
#define ADDS_H

#define ADDS_MAX 4096

static double adds_data[ADDS_MAX];

__attribute__((noinline, unused)) static double sum(const double *x, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++)
        s += x[i];
    return s;
}

#endif
