/* A SIGSEGV handler (installed without SA_NODEFER) that faults itself:
 * natively the second fault, blocked, kills the process with SIGSEGV.
 *
 *   usage: segv_in_segv_handler N        build: -O1 (no FMA contraction)
 *
 *   N multiplies and N adds (x = x * 1.0001 + 0.5), the result printed,
 *   then a store through a null pointer, whose handler stores through it
 *   again: exit_status = signal:SIGSEGV, flop.total = 2 N.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int *volatile null;

static void on_segv(int sig) {
    (void)sig;
    *null = 1;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    volatile double a = 1.0001, b = 0.5;
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * a + b;
    printf("%f\n", x);
    fflush(stdout);
    *null = 2;
    return 0;
}
