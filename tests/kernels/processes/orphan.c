/* A program that ends before the process it started: flopscope must wait
 * for that process (its counts are written when it ends) and, if it runs
 * on too long, stop it, so that none outlives flopscope.
 *
 *   usage: orphan N finish|linger          build: -O2 -msse2 -fno-math-errno
 *
 * The parent forks a child and prints "child PID" (the child's pid), then
 * sums N values (N adds) and exits 0 without waiting. The child waits
 * until its parent has ended (its parent pid changes), then:
 * - finish: sums N square roots (N sqrt, N adds) and exits 0;
 * - linger: sleeps until a signal ends it (no FP work).
 *
 *   finish: flop.fp64 = 3 N: flop_by_op.sqrt = N, flop_by_op.add = 2 N
 *   linger: flop.fp64 = N:   flop_by_op.add = N
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../kernel.h"

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    if (argc < 3) return 64;
    int linger = strcmp(argv[2], "linger") == 0;
    if (!linger && strcmp(argv[2], "finish") != 0) return 64;
    pid_t parent = getpid();
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        while (getppid() == parent) usleep(1000);
        if (linger) {
            for (;;) pause();
        }
        /* Long enough for a report read at the parent's end to miss this. */
        usleep(200000);
        volatile REAL t = 0;
        for (long i = 0; i < n; i++) t += SQRT((REAL)i);
        _exit(0);
    }
    printf("child %d\n", (int)child);
    volatile REAL s = 0;
    for (long i = 0; i < n; i++) s += (REAL)i;
    return 0;
}
