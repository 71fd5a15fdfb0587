/* Threads that run code no thread has run yet, all at once: its direct
 * branches are linked (re-aimed in place by the native engine) while other
 * threads run them.
 *
 *   usage: link_threads T R (R even)      build: -O2 -pthread
 *
 * 256 distinct functions, each one fp64 scalar add or multiply (odd or even
 * round); T threads, released together, call them all in turn R times.
 * Exactly (fp64, scalar): add T * R * 128, mul T * R * 128.
 */
#include <pthread.h>
#include "../kernel.h"

#define F(k) \
    __attribute__((noipa)) static double f##k(double x, long r) { \
        if (r & 1) return x + 1.0; \
        return x * 0.5; \
    }
#define F4(k) F(k##0) F(k##1) F(k##2) F(k##3)
#define F16(k) F4(k##0) F4(k##1) F4(k##2) F4(k##3)
#define F64(k) F16(k##0) F16(k##1) F16(k##2) F16(k##3)
F64(0) F64(1) F64(2) F64(3)

#define C(k) x = f##k(x, r);
#define C4(k) C(k##0) C(k##1) C(k##2) C(k##3)
#define C16(k) C4(k##0) C4(k##1) C4(k##2) C4(k##3)
#define C64(k) C16(k##0) C16(k##1) C16(k##2) C16(k##3)

static long rounds;
static pthread_barrier_t start;

static void *run(void *arg) {
    (void)arg;
    volatile double out;
    double x = 1.0;
    pthread_barrier_wait(&start);
    for (long r = 0; r < rounds; r++) {
        C64(0) C64(1) C64(2) C64(3)
    }
    out = x;
    (void)out;
    return NULL;
}

int main(int argc, char **argv) {
    long t = arg_long(argc, argv, 1);
    rounds = arg_long(argc, argv, 2);
    if (rounds % 2 || t > 64) return 64;
    pthread_t th[64];
    pthread_barrier_init(&start, NULL, (unsigned)t);
    for (long i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, run, NULL)) return 2;
    for (long i = 0; i < t; i++) pthread_join(th[i], NULL);
    return 0;
}
