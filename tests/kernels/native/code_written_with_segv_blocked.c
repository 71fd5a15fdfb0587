// Code rewritten while SIGSEGV is blocked: the engine write-protects the
// pages it translated code from, and a fault the kernel finds blocked
// kills the process, so these writes must still reach the engine.
//
// A generated function f(x) (x * x or x + x, one FLOP a call) is called N
// times after each rewrite:
//   1. as generated (x * x);
//   2. rewritten to x + x by a thread that blocked every signal first, as
//      worker threads often do (pthread_sigmask with a full set);
//   3. rewritten to x * x by a SIGUSR1 handler whose action blocks every
//      signal (sa_mask full);
//   4. rewritten to x + x by a SIGSEGV handler installed without
//      SA_NODEFER (as QEMU's user mode installs its own: it invalidates
//      its translations there), entered for a store into a read-only page,
//      which it then makes writable.
// Prints the sum of f(1.5) over the 4 N calls: 10.5 N. The generated code
// executes N multiplies, N adds, N multiplies and N adds, and adding up
// the 4 N results takes 4 N + 4 adds. Exit 3 if the
// actions do not read back as set.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "generated_f.h"

static volatile char *guarded;
static long n;
static volatile double sum;

static void *blocked_thread(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    generate(1);
    sum += call_n(n);
    return NULL;
}

static void on_usr1(int sig) {
    (void)sig;
    generate(0);
}

static void on_segv(int sig, siginfo_t *info, void *uc) {
    (void)sig, (void)uc;
    char *page = (char *)((unsigned long)info->si_addr & ~4095UL);
    if (page != (char *)guarded) abort();
    generate(1);
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static int reads_back_as_set(int sig, int nodefer) {
    struct sigaction now;
    sigaction(sig, NULL, &now);
    return sigismember(&now.sa_mask, SIGSEGV) == 1 && !(now.sa_flags & SA_NODEFER) == !nodefer;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 1000;
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    guarded = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED || guarded == MAP_FAILED) return 2;

    generate(0);
    sum += call_n(n);

    pthread_t t;
    if (pthread_create(&t, NULL, blocked_thread, NULL) || pthread_join(t, NULL)) return 2;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigfillset(&sa.sa_mask);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sum += call_n(n);

    sa.sa_flags = SA_SIGINFO;
    sa.sa_sigaction = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    guarded[0] = 1;
    sum += call_n(n);

    if (!reads_back_as_set(SIGUSR1, 0) || !reads_back_as_set(SIGSEGV, 0)) return 3;
    printf("%.1f\n", sum);
    return 0;
}
