/* A one-block loop left after every trip count from 1 to T, for the native
 * engine's loops counted in rounds (one counter bump per round of copies,
 * the unfinished round added on the way out): every way out of a round,
 * and rounds run many times, must count exactly.
 *
 *   usage: trips T REPS          build: -O2 -g [-mavx2 -mfma]
 *
 * update(y, t) runs y[i] = y[i] * s + s for i < t: one MULSD and one ADDSD,
 * or one FMA (2 FLOP), per iteration, in one basic block (-O2 does not
 * vectorize it). It is called for t = 1 .. T, REPS times over.
 *
 *   flop.total = flop.fp64 = 2 REPS (1 + 2 + ... + T) = REPS T (T + 1)
 *   the loop: iterations REPS T (T + 1) / 2, entries REPS T
 */
#include <stdio.h>
#include <string.h>
#include "../kernel.h"

static volatile double s_bits_source;

__attribute__((noinline)) static void update(double *y, long t, double s) {
    for (long i = 0; i < t; i++) { /* LOOP trips */
        y[i] = y[i] * s + s;
    }
    escape(y);
}

int main(int argc, char **argv) {
    long top = arg_long(argc, argv, 1), reps = arg_long(argc, argv, 2);
    double *y = malloc(top * sizeof *y);
    if (!y) return 1;
    memset(y, 0, top * sizeof *y); /* all-zero bits: 0.0, without FLOP */
    double s = s_bits_source; /* 0.0, read without arithmetic */
    for (long r = 0; r < reps; r++)
        for (long t = 1; t <= top; t++) update(y, t, s);
    unsigned long bits;
    memcpy(&bits, &y[0], sizeof bits);
    printf("trips: %ld x %ld, y[0] bits %lx\n", top, reps, bits);
    return 0;
}
