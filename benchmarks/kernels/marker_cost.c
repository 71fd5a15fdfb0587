/* Cost of a flopscope marker pair in a program run without flopscope.
 *
 *   build: gcc -O2 -I crates/markers/include [-DNO_MARKERS] marker_cost.c
 *   run:   ./marker_cost N BODY   (BODY 0: empty, 1: one dependent integer add)
 *   prints the loop's wall time in nanoseconds
 *
 * The loop runs N iterations of BEGIN("pair"); body; END("pair"); with
 * -DNO_MARKERS the same loop without the markers. The body is an empty asm
 * statement (the compiler must keep one iteration per i) or one add to an
 * accumulator the compiler cannot see through. Timed with CLOCK_MONOTONIC
 * around the loop only. Run with FLOPSCOPE_REGION_TIMES=FILE, the markers
 * also time the region, as in flopscope's native timed run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "flopscope.h"

#ifdef NO_MARKERS
#define BEGIN(name)
#define END(name)
#else
#define BEGIN(name) FLOPSCOPE_REGION_BEGIN(name)
#define END(name) FLOPSCOPE_REGION_END(name)
#endif

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static uint64_t empty(long n) {
    for (long i = 0; i < n; i++) {
        BEGIN("pair");
        __asm__ volatile("");
        END("pair");
    }
    return 0;
}

__attribute__((noinline)) static uint64_t tiny(long n) {
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) {
        BEGIN("pair");
        acc += (uint64_t)i;
        __asm__ volatile("" : "+r"(acc));
        END("pair");
    }
    return acc;
}

int main(int argc, char **argv) {
    if (argc < 3) return 64;
    long n = atol(argv[1]), body = atol(argv[2]);
    uint64_t t0 = now_ns();
    uint64_t r = body ? tiny(n) : empty(n);
    uint64_t t1 = now_ns();
    printf("%llu\n", (unsigned long long)(t1 - t0));
    return r == 1 ? 1 : 0; /* keeps r alive; never 1 */
}
