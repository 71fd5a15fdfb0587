/* Two threads with a function each, running until SIGUSR1 (one ends with
 * pthread_exit): prints their CPU times. Then short-lived threads, whose
 * timers must go with them: prints the timers left (/proc/self/timers). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "burn.h"

NOINLINE void spin_a(void) {
    while (!stop) BURN(100000);
}
NOINLINE void spin_b(void) {
    while (!stop) BURN(100000);
}

static double cpu_a, cpu_b;

static void *thread_a(void *arg) {
    spin_a();
    cpu_a = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    return arg;
}
static void *thread_b(void *arg) {
    spin_b();
    cpu_b = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    pthread_exit(arg);
}
static void *nothing(void *arg) { return arg; }

static int timers(void) {
    FILE *f = fopen("/proc/self/timers", "r");
    if (!f) return -1;
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "ID:", 3) == 0) n++;
    fclose(f);
    return n;
}

int main(void) {
    stop_on_usr1();
    pthread_t a, b;
    if (pthread_create(&a, NULL, thread_a, NULL) || pthread_create(&b, NULL, thread_b, NULL))
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int i = 0; i < 200; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL)) return 1;
        pthread_join(t, NULL);
    }
    printf("cpu %.6f %.6f\ntimers %d\n", cpu_a, cpu_b, timers());
    return 0;
}
