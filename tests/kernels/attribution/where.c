/* Functions, loops and lines of known FLOP, for attribution (functions[],
 * loops[], lines[] of the report).
 *
 *   usage: where N REPS
 *   build: -O2 -g (and -mavx2 -mfma), linked with libwhere.so (scale)
 *
 * Per repetition (N = n, all fp64, scalar with -O2; FMA = 2 FLOP):
 *   triad(n):     for i < n: a[i] = b[i] + s * c[i]      2n FLOP, loop of n iterations
 *   nested(n):    for i < 8: for j < n: x += b[j] * c[i] 16n FLOP; outer loop 8 iterations
 *                 per call, inner loop n iterations per outer iteration
 *   norm2(n):     for i < n: s += sq(a[i])               n adds in norm2, n multiplies
 *                 in sq (inlined into norm2)
 *   scale(n):     in libwhere.so, n multiplies
 *   rec(8):       recursive, 8 levels: 1.0 + 0.5 * rec(k - 1), 2 FLOP per level
 *                 above the base case: 16 FLOP
 * Every function is called REPS times (rec at its top level).
 *
 * Lines tagged LOOP are the loops' lines; FLOP are counted by the engines.
 */
#include <stdio.h>
#include <stdlib.h>

void scale(double *a, int n, double f);

static double s_factor = 1.0000001;

__attribute__((noinline)) void triad(double *a, const double *b, const double *c, int n) {
    double s = s_factor;
    for (int i = 0; i < n; i++) { /* LOOP triad */
        a[i] = b[i] + s * c[i];
    }
}

__attribute__((noinline)) double nested(const double *b, const double *c, int n) {
    double x = 0.0;
    for (int i = 0; i < 8; i++) { /* LOOP nested outer */
        for (int j = 0; j < n; j++) { /* LOOP nested inner */
            x += b[j] * c[i];
        }
    }
    return x;
}

static inline double sq(double v) {
    return v * v; /* LINE sq */
}

__attribute__((noinline)) double norm2(const double *a, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) { /* LOOP norm2 */
        s += sq(a[i]);
    }
    return s;
}

__attribute__((noinline, noipa)) double rec(int k) {
    if (k == 0)
        return 0.0;
    return 1.0 + 0.5 * rec(k - 1);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *c = malloc((n > 8 ? n : 8) * sizeof *c);
    long sum = 0;
    for (int i = 0; i < n; i++) {
        a[i] = b[i] = c[i] = 0.0;
    }
    double acc = 0.0;
    for (int r = 0; r < reps; r++) {
        triad(a, b, c, n);
        acc += nested(b, c, n);
        acc += norm2(a, n);
        scale(a, n, 0.5);
        acc += rec(8);
        sum += (long)(acc != 0.0);
    }
    printf("where: n=%d reps=%d %ld\n", n, reps, sum);
    free(a);
    free(b);
    free(c);
    return 0;
}
