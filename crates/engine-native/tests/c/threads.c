/* Two threads, each busy in a function of its own (argv[1] iterations of
 * a floating-point chain); the main thread waits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static long iterations;
static double results[2];

NOINLINE double first_worker(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

NOINLINE double second_worker(long n) {
    double x = 2.0;
    for (long i = 0; i < n; i++) x = x * 0.9999999 + 1e-9;
    return x;
}

static void *run_first(void *arg) {
    (void)arg;
    results[0] = first_worker(iterations);
    return NULL;
}

static void *run_second(void *arg) {
    (void)arg;
    results[1] = second_worker(iterations);
    return NULL;
}

int main(int argc, char **argv) {
    iterations = argc > 1 ? atol(argv[1]) : 1000000;
    pthread_t a, b;
    pthread_create(&a, NULL, run_first, NULL);
    pthread_create(&b, NULL, run_second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%.3f %.3f\n", results[0], results[1]);
    return 0;
}
