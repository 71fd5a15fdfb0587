/* A program with a SIGPROF handler of its own: works first (sampled), then
 * reads SIGPROF's action (SIG_DFL, as without flopscope), installs its
 * handler and a profiling timer, and burns until the handler ran 20 times.
 * Exit status 0: all as expected; 3: SIGPROF's action was not SIG_DFL; 4:
 * the handler did not run 20 times. */
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
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &it, NULL);
    for (int k = 0; handled < 20 && k < 100000; k++) s += burn(100000);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("%.3f\n", s);
    return handled >= 20 ? 0 : 4;
}
