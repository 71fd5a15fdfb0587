/* work3 does three times work1's work, in alternation: until the process
 * has used argv[1] seconds of CPU time, or, with "until-usr1", until
 * SIGUSR1. */
#include <string.h>
#include "burn.h"

NOINLINE void work3(long n) { BURN(3 * n); }
NOINLINE void work1(long n) { BURN(n); }

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "until-usr1") == 0) {
        stop_on_usr1();
        /* Rounds of pseudo-random length: samples come on the kernel's tick,
         * and rounds of one length would alias with it (a round of 0.8 ms
         * against a 4 ms tick samples the same few phases for seconds). */
        unsigned long r = 1;
        while (!stop) {
            r = r * 6364136223846793005UL + 1442695040888963407UL;
            long n = 50000 + (long)((r >> 33) % 100000);
            work3(n);
            work1(n);
        }
        return 0;
    }
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    while (cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) < seconds) {
        work3(1000000);
        work1(1000000);
    }
    return 0;
}
