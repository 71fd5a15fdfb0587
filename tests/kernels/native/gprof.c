/* A program built with gprof's -pg (and -fno-math-errno: sqrt is one
 * instruction). Its start files call __gmon_start__, which starts the
 * profiling: a SIGPROF handler and a profiling timer, the histogram written
 * to gmon.out (or GMON_OUT_PREFIX.<pid>) at exit.
 *
 * FLOP: work(n, x) takes 3 per step (i * x, its square root, the sum): 3 n
 * a call, reps calls (noipa: not one call reused, x not known to be a
 * constant that folds a step away); main adds the reps results.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) double work(long n, double x) {
    double s = 0;
    for (long i = 0; i < n; i++)
        s += sqrt(i * x);
    return s;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long reps = argc > 2 ? atol(argv[2]) : 10;
    double s = 0, x = (double)reps; /* a conversion, no FLOP */
    for (long k = 0; k < reps; k++)
        s += work(n, x);
    printf("%.6e\n", s);
    return 0;
}
