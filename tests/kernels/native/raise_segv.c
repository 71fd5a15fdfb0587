/* SIGSEGV sent by the program to itself, with the default action: it ends
 * the process as a fault would (exit_status = signal:SIGSEGV), after N
 * multiplies and N adds; "survived" is never printed.
 *
 *   usage: raise_segv N        build: -O1 (no FMA contraction)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    volatile double a = 1.0001, b = 0.5;
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * a + b;
    printf("%f\n", x);
    fflush(stdout);
    raise(SIGSEGV);
    puts("survived");
    return 0;
}
