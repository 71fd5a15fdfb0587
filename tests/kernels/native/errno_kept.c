/* errno across the native engine's own work. A dynamically linked program
 * shares its C library, and so its errno, with the engine's runtime: a
 * failed call the runtime makes (a futex wait on its translator's lock
 * that finds the lock already released: EAGAIN) must not change the
 * program's errno. Erlang's loader saw EAGAIN where its open() had failed
 * with ENOENT, about one start in twenty.
 *
 *   usage: errno_kept T N          build: -O2 -msse2 -fno-math-errno -pthread
 *
 * T threads, each N rounds of: open() of a path that does not exist
 * (errno = ENOENT), a write of a new constant into its own piece of
 * machine code (mov eax, imm32; ret) and a call of it, a SIGUSR1 to
 * itself (a handler that does nothing: its return goes through the
 * engine's rt_sigreturn, which looks the interrupted block up under the
 * lock too), then a check that errno is still ENOENT and the call
 * returned the constant. Under the native engine every write faults and
 * every call translates the code again, each under the translator's lock,
 * which the T threads contend for. Each round also adds a square root to
 * the thread's sum.
 *
 *   flop.fp64 = 2 T N: flop_by_op.sqrt = T N, flop_by_op.add = T N
 *   stdout: "errno kept T N" when every check held, else the number of
 *   rounds that failed each check; exit 0 when every check held
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "../kernel.h"

typedef int (*constant)(void);

static void on_usr1(int sig) { (void)sig; }

struct worker {
    pthread_t thread;
    long rounds;
    long errno_lost, wrong_value, opened;
    double sum;
};

static void *work(void *arg) {
    struct worker *w = arg;
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) exit(2);
    for (long i = 0; i < w->rounds; i++) {
        int v = (int)i;
        errno = 0;
        int fd = open("/nonexistent-flopscope-dir/file", O_RDONLY);
        code[0] = 0xb8; /* mov eax, imm32 */
        memcpy(code + 1, &v, sizeof v);
        code[5] = 0xc3; /* ret */
        escape(code);
        int got = ((constant)code)();
        raise(SIGUSR1);
        int e = errno;
        if (fd >= 0) w->opened++;
        if (e != ENOENT) w->errno_lost++;
        if (got != v) w->wrong_value++;
        w->sum += SQRT((REAL)i);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long t = arg_long(argc, argv, 1), n = arg_long(argc, argv, 2);
    struct worker w[64];
    if (t > 64) return 64;
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) return 3;
    for (long k = 0; k < t; k++) {
        w[k] = (struct worker){.rounds = n};
        if (pthread_create(&w[k].thread, NULL, work, &w[k]) != 0) return 3;
    }
    long lost = 0, wrong = 0, opened = 0;
    for (long k = 0; k < t; k++) {
        pthread_join(w[k].thread, NULL);
        lost += w[k].errno_lost;
        wrong += w[k].wrong_value;
        opened += w[k].opened;
        escape(&w[k].sum);
    }
    if (lost || wrong || opened) {
        printf("errno lost %ld, wrong value %ld, opened %ld\n", lost, wrong, opened);
        return 1;
    }
    printf("errno kept %ld %ld\n", t, n);
    return 0;
}
