/* Signals that land while the native engine's dispatcher is starting, with
 * the handler on an alternate signal stack (as Go runs every handler).
 * Another thread sends the main thread SIGUSR1, the next once the last was
 * handled and after a delay that sweeps across the main thread's rounds,
 * while the main thread makes a system call the engine performs itself
 * (arch_prctl), an entry into the dispatcher, every round (from the first
 * signal handled on); the handler returns through rt_sigreturn, another
 * entry. A handler that ran its dispatcher entry where the interrupted one
 * had saved the program's registers would give the program the handler's
 * registers back: wrong results, or a crash.
 *
 *   usage: altstack M          build: -O2 -msse2 -fno-math-errno -pthread
 *
 * M rounds of: arch_prctl(ARCH_GET_FS), s += sqrt(i), i*i summed as an
 * integer. The handler does no floating-point work.
 *
 *   flop.fp64 = 2 M: flop_by_op.sqrt = M, flop_by_op.add = M
 *   stdout: "ok" (every arch_prctl returned 0 and a non-zero fs base, the
 *   integer sum is M (M-1) (2M-1) / 6), then the number of signals handled
 *   (at least 1); exit 0
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../kernel.h"

static volatile sig_atomic_t handled;
static volatile int done;
static pid_t main_tid;

static void on_usr1(int sig) {
    (void)sig;
    handled++;
}

static void *sender(void *arg) {
    (void)arg;
    pid_t pid = getpid();
    for (unsigned k = 0; !done; k++) {
        sig_atomic_t before = handled;
        syscall(SYS_tgkill, pid, main_tid, SIGUSR1);
        while (handled == before && !done) {
        }
        /* A delay that sweeps across the main thread's rounds. */
        for (volatile unsigned d = 0; d < k % 4096; d++) {
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    long m = arg_long(argc, argv, 1);
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    if (sigaltstack(&ss, NULL) != 0) return 71;
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    main_tid = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    if (pthread_create(&t, NULL, sender, NULL) != 0) return 73;
    while (handled == 0) {
    }
    double s = 0.0;
    unsigned long squares = 0, failed = 0;
    for (long i = 0; i < m; i++) {
        unsigned long fs = 0;
        if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) != 0 || fs == 0) failed++;
        s += SQRT((double)i);
        squares += (unsigned long)i * (unsigned long)i;
        escape(&squares);
    }
    done = 1;
    pthread_join(t, NULL);
    unsigned long um = (unsigned long)m;
    int ok = failed == 0 && squares == um * (um - 1) * (2 * um - 1) / 6;
    escape(&s);
    printf("%s %ld\n", ok ? "ok" : "wrong", (long)handled);
    return ok ? 0 : 1;
}
