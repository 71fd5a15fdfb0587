/* Signal handlers that do floating-point work: one returns normally, one
 * leaves with siglongjmp. Under the native engine both run in the code
 * cache and are counted; the program's output and exit status are its own.
 *
 *   usage: signals N M          build: -O2 -msse2
 *
 * SIGUSR1 is raised N times; its handler does M scalar fp64 adds (ADDSD on
 * a volatile) and returns. SIGUSR2 is raised N times from inside
 * sigsetjmp; its handler does M scalar fp64 multiplies (MULSD) and leaves
 * with siglongjmp. The main program does no floating-point work.
 *
 *   flop.fp64 = 2 N M: flop_by_op.add = N M, flop_by_op.mul = N M
 *   stdout: "usr1 N usr2 N\n", exit status 0
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include "../kernel.h"

static volatile double acc = 1.0, one = 1.0;
static volatile long m_flop;
static volatile sig_atomic_t usr1, usr2;
static sigjmp_buf back;

static void on_usr1(int sig) {
    (void)sig;
    for (long i = 0; i < m_flop; i++) acc = acc + one;
    usr1++;
}

static void on_usr2(int sig) {
    (void)sig;
    for (long i = 0; i < m_flop; i++) acc = acc * one;
    usr2++;
    siglongjmp(back, 1);
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    m_flop = arg_long(argc, argv, 2);
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    struct sigaction check;
    sigaction(SIGUSR1, NULL, &check);
    if (check.sa_handler != on_usr1) return 70; /* the handler reads back as set */
    for (long i = 0; i < n; i++) raise(SIGUSR1);
    for (long i = 0; i < n; i++)
        if (sigsetjmp(back, 1) == 0) raise(SIGUSR2);
    printf("usr1 %ld usr2 %ld\n", (long)usr1, (long)usr2);
    return 0;
}
