/* Signals queued to a thread while it runs code for the first time: the
 * thread calls FUNCS small functions it wrote into an executable buffer,
 * each once (under the native engine, each call a translation), while a
 * second thread queues SIGNALS real-time signals to it, the i-th with the
 * value i. Every signal must reach the handler exactly once, with the
 * value, the code and the sender it was queued with.
 * Prints: the functions' sum, the signals handled, the sum of their values,
 * the signals whose siginfo was not as queued.
 * Expected for FUNCS = n: sum of (k % 1000 + k) for k < n, 3000, 4501500, 0.
 * With a second argument "term", the second thread sends the first one
 * SIGTERM after 20 ms instead (no handler: the process ends by it, while
 * it is still running new code), and nothing is printed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SIGNALS 3000
#define STRIDE 16

static atomic_long handled, values, wrong;
static pthread_t target;

static void on_signal(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    if (si->si_code != SI_QUEUE || si->si_pid != getpid())
        atomic_fetch_add(&wrong, 1);
    atomic_fetch_add(&values, si->si_value.sival_int);
    atomic_fetch_add(&handled, 1);
}

static void *terminator(void *arg) {
    (void)arg;
    usleep(20000);
    pthread_kill(target, SIGTERM);
    return NULL;
}

static void *sender(void *arg) {
    (void)arg;
    for (int i = 1; i <= SIGNALS; i++) {
        union sigval v = {.sival_int = i};
        /* EAGAIN: the queue of pending real-time signals is full. */
        while (pthread_sigqueue(target, SIGRTMIN, v) != 0)
            sched_yield();
        if (i % 8 == 0)
            usleep(20);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long funcs = argc > 1 ? atol(argv[1]) : 100000;
    target = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN, &sa, NULL);
    unsigned char *code = mmap(NULL, funcs * STRIDE, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 1;
    for (long k = 0; k < funcs; k++) {
        unsigned char *f = code + k * STRIDE;
        int imm = (int)(k % 1000);
        f[0] = 0xb8; /* mov eax, imm32 */
        memcpy(f + 1, &imm, 4);
        f[5] = 0x01; /* add eax, edi */
        f[6] = 0xf8;
        f[7] = 0xc3; /* ret */
    }
    int term = argc > 2 && strcmp(argv[2], "term") == 0;
    pthread_t t;
    pthread_create(&t, NULL, term ? terminator : sender, NULL);
    long sum = 0;
    for (long k = 0; k < funcs; k++)
        sum += ((int (*)(int))(code + k * STRIDE))((int)k);
    if (term)
        return 2; /* not reached: SIGTERM came first */
    pthread_join(t, NULL);
    /* The rest may still be pending; a lost one ends the wait after 10 s. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (atomic_load(&handled) < SIGNALS && now.tv_sec - start.tv_sec < 10);
    printf("%ld %ld %ld %ld\n", sum, atomic_load(&handled), atomic_load(&values),
           atomic_load(&wrong));
    return 0;
}
