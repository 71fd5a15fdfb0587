/* Two functions of known CPU time ratio, for time per function: heavy()
 * does three times the work of light(), in rounds of varying length (so
 * that no period locks to the kernel's timer tick).
 *
 *   usage: busy ROUNDS          build: -O2 -g
 *
 * Per round, light() runs k iterations of an integer hash and heavy() 3k,
 * k varying from round to round; each ends with one FLOP (a multiply), so
 * that both are in functions[]: ROUNDS FLOP each. Expected time shares:
 * heavy 0.75, light 0.25 of the two.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static volatile double fsink = 1.0;

/* The loops are written out in each function (no shared helper, which
 * would be inlined into both and hold their time as a function of its own). */
__attribute__((noinline)) void light(long k) {
    unsigned long x = sink;
    for (long i = 0; i < k; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
    fsink = fsink * 1.0000001;
}

__attribute__((noinline)) void heavy(long k) {
    unsigned long x = sink;
    for (long i = 0; i < 3 * k; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
    fsink = fsink * 1.0000001;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    unsigned long r = 12345;
    for (long i = 0; i < rounds; i++) {
        r = r * 6364136223846793005UL + 1;
        long k = 20000 + (long)((r >> 33) % 40000);
        light(k);
        heavy(k);
    }
    printf("busy: %ld rounds %lu\n", rounds, sink & 1);
    return 0;
}
