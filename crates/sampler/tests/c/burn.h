/* Shared by the test programs: CPU-time clocks, a loop that burns a known
 * amount of work in the function that expands it, and a stop flag. */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double cpu_seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* n iterations of a dependent multiply-add through memory: about the same
 * time per iteration wherever it is expanded. */
#define BURN(n)                                                       \
    do {                                                              \
        volatile double x_ = 1.0;                                     \
        for (long i_ = 0; i_ < (n); i_++) x_ = x_ * 1.0000001 + 1e-9; \
    } while (0)

/* Burns until `clock` has counted `seconds`, reading it after every ~5 ms
 * of work only: reading a CPU clock has the scheduler account the thread
 * there, and on a loaded machine preempt it between kernel ticks, which
 * thins the (tick-driven) samples. */
#define BURN_FOR(clock, seconds)                                  \
    while (cpu_seconds(clock) < (seconds)) BURN(2000000)

/* Set by SIGUSR1: the test has seen enough samples. */
static volatile sig_atomic_t stop;
__attribute__((unused)) static void on_usr1(int sig) {
    (void)sig;
    stop = 1;
}
__attribute__((unused)) static void stop_on_usr1(void) { signal(SIGUSR1, on_usr1); }
