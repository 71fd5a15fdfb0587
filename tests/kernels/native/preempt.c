/* A SIGPROF handler of the program's own that moves the program counter of
 * the context it interrupts, as Go's asynchronous preemption does: it
 * pushes the interrupted address and resumes at `ret $128`, which returns
 * there (the 128-byte red zone below the stack pointer kept), so the
 * loops go on where they were, interrupted half-way through a block.
 *
 *   usage: preempt N        build: -O2 -msse2 -fno-math-errno
 *
 * A profiling timer (setitimer ITIMER_PROF, every 50 us of CPU time) runs
 * while two loops of N iterations run, the first one block (s += sqrt(i)),
 * the second with a branch (t += sqrt(i) on every third i, else t *= c).
 * The handler moves the program counter only when it interrupts this
 * program's own code (not the C library's), and does no floating-point
 * work. With K = ceil(N / 3):
 *
 *   flop_by_op.sqrt = flop_by_op.add = N + K, flop_by_op.mul = N - K
 *   stdout: "moved M\n" (M > 0: the times the handler moved the counter)
 */
#define _GNU_SOURCE /* REG_RIP */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include "../kernel.h"

extern const char __executable_start[], etext[], resume_ret[];
__asm__(".text\n.globl resume_ret\nresume_ret:\n\tret $128\n");

static volatile long moved, first; /* first: 0, unknown to the compiler */
static volatile double sink1, sink2, c = 1.0000001;

static void on_prof(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    greg_t *pc = &uc->uc_mcontext.gregs[REG_RIP];
    greg_t *sp = &uc->uc_mcontext.gregs[REG_RSP];
    if (*pc < (greg_t)__executable_start || *pc >= (greg_t)etext)
        return;
    *sp -= 136;
    *(greg_t *)*sp = *pc;
    *pc = (greg_t)resume_ret;
    moved++;
}

__attribute__((noinline)) static double one_block(long n) {
    double s = 0;
    for (long i = first; i < n; i++) s += SQRT((double)i);
    return s;
}

__attribute__((noinline)) static double branchy(long n, double k) {
    double t = 1;
    for (long i = first; i < n; i++) {
        if (i % 3 == 0)
            t += SQRT((double)i);
        else
            t *= k;
    }
    return t;
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval every = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &every, NULL);
    sink1 = one_block(n);
    sink2 = branchy(n, c);
    setitimer(ITIMER_PROF, &off, NULL);
    printf("moved %ld\n", (long)moved);
    return 0;
}
