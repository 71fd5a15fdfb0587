/* Loops entered in the two ways that hid their headers or their entries
 * from the native engine's rows, which both engines must now count alike.
 *
 *   usage: entered REPS STOP          build: -O0 -g, or -O2 -g
 *
 * scan(a, N) sums a[0..N): gcc -O0 enters the loop by a jump to its test,
 * at the bottom, which the native engine translated on through (the test
 * was no block of its own). search(a, N, STOP) adds a[i] until i == STOP:
 * at -O2 the early exit is a forward branch whose fall-through goes back
 * to the test, a side the native engine does not count. Each is called
 * REPS times, so each loop is entered REPS times (how many iterations and
 * FLOP the loop itself holds depends on how gcc lays it out: -O2 peels
 * search's first add).
 */
#include <stdio.h>
#include "../kernel.h"

#define N 64
static double a[N];
static volatile long stop_source;

__attribute__((noinline)) static double scan(const double *x, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) /* LOOP scan */
        s += x[i];
    return s;
}

__attribute__((noinline)) static double search(const double *x, long n, long stop) {
    double s = 0.0;
    for (long i = 0; i < n; i++) { /* LOOP search */
        s += x[i];
        if (i == stop)
            break;
    }
    return s;
}

int main(int argc, char **argv) {
    long reps = arg_long(argc, argv, 1);
    stop_source = arg_long(argc, argv, 2);
    double s = 0.0;
    for (long r = 0; r < reps; r++) {
        escape(a); /* a may have changed: scan is called every round */
        s += scan(a, N);
        s += search(a, N, stop_source);
    }
    printf("entered: %ld rounds, %d\n", reps, s > 1.0);
    return 0;
}
