/* The program spends argv[1] seconds of CPU time in before_exec, then execs
 * itself, which spends as much again in after_exec: one pid, two programs. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "burn.h"

NOINLINE void before_exec(double s) {
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}
NOINLINE void after_exec(double s) {
    /* The process's CPU time carries over the exec. */
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}

int main(int argc, char **argv) {
    double s = argc > 1 ? atof(argv[1]) : 0.2;
    if (argc > 2 && strcmp(argv[2], "after") == 0) {
        after_exec(2 * s);
        return 0;
    }
    before_exec(s);
    execl("/proc/self/exe", argv[0], argv[1], "after", (char *)NULL);
    perror("execl");
    return 1;
}
