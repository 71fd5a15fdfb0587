/* Threads that end the process in unusual ways.
 *
 *   usage: thread_exits MODE N      build: -O2 -msse2 -pthread
 *
 * Three worker threads each do N scalar fp64 adds (ADDSD on a volatile).
 *   MODE 1: main returns from pthread_exit; the last worker to finish ends
 *           the process (glibc calls exit(0) for it): exit status 0.
 *   MODE 2: main joins the first two workers, then lets the third one go
 *           on: after its adds it waits for that, then calls exit(7) while
 *           main waits for it: exit status 7.
 * Main does no floating-point work.
 *
 *   flop.fp64 = flop_by_op.add = 3 N, in either mode
 */
#include <pthread.h>
#include <stdlib.h>
#include "../kernel.h"

static long n_adds;
static int mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t joined = PTHREAD_COND_INITIALIZER;
static int others_done;

static void *work(void *arg) {
    volatile double acc = 0.0, one = 1.0;
    for (long i = 0; i < n_adds; i++) acc = acc + one;
    if (mode == 2 && (long)arg == 2) {
        pthread_mutex_lock(&lock);
        while (!others_done) pthread_cond_wait(&joined, &lock);
        pthread_mutex_unlock(&lock);
        exit(7);
    }
    return NULL;
}

int main(int argc, char **argv) {
    mode = (int)arg_long(argc, argv, 1);
    n_adds = arg_long(argc, argv, 2);
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, (void *)i);
    if (mode == 1) pthread_exit(NULL);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    pthread_mutex_lock(&lock);
    others_done = 1;
    pthread_cond_signal(&joined);
    pthread_mutex_unlock(&lock);
    pthread_join(t[2], NULL);
    return 0;
}
