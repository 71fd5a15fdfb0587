/* A program with a SIGPROF handler of its own (a plain one, without
 * SA_SIGINFO): works first (sampled), then reads SIGPROF's action
 * (SIG_DFL, as without flopscope), installs its handler and a profiling
 * timer, reads the action back (its handler and its flags, as it set them),
 * and burns (in burn_after) until the handler ran 20 times, then as long
 * again as before.
 * Exit status 0: all as expected; 3: SIGPROF's action was not SIG_DFL; 4:
 * the handler did not run 20 times; 5: the action read back is not the one
 * set. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile sig_atomic_t handled;

static void on_prof(int sig) {
    (void)sig;
    handled++;
}

__attribute__((noipa)) double burn(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

/* The same work, once the handler is installed. */
__attribute__((noipa)) double burn_after(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double s = burn(n);
    struct sigaction old;
    sigaction(SIGPROF, NULL, &old);
    if (old.sa_handler != SIG_DFL) return 3;
    struct sigaction sa = {0};
    sa.sa_handler = on_prof;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    struct sigaction now;
    sigaction(SIGPROF, NULL, &now);
    if (now.sa_handler != on_prof || (now.sa_flags & (SA_SIGINFO | SA_RESETHAND))) return 5;
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &it, NULL);
    for (int k = 0; handled < 20 && k < 100000; k++) s += burn_after(100000);
    s += burn_after(n);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("%.3f\n", s);
    return handled >= 20 ? 0 : 4;
}
