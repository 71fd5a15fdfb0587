/* Many short-lived threads: T threads in all, created in rounds of at most
 * 4 alive at once and joined, each adding K doubles inside the region
 * "work" (two region states per thread: none and "work").
 *
 *   usage: many_threads T K [fork]   build: -O2 -pthread
 *
 * With `fork`, a child forked at the end runs 4 more such threads (4 K
 * adds in "work", 4 adds in the child's main) and the parent waits for it.
 *
 * FLOP: T K fp64 adds in "work" (sum() of ../adds.h), entered T times,
 * and main's T adds of the threads' sums: T K + T in all. More threads
 * than the native engine keeps states of (4096), and more (thread, region)
 * pairs than the counter file has rows (2048).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"
#include "../adds.h"

static long k;
static void *work(void *out) {
    FLOPSCOPE_REGION_BEGIN("work");
    *(double *)out = sum(adds_data, k);
    FLOPSCOPE_REGION_END("work");
    return NULL;
}

/* T threads, at most 4 alive; the sum of their sums (T adds). */
static int run_threads(long t, double *total) {
    double out[4];
    for (long done = 0; done < t;) {
        pthread_t th[4];
        int n = 0;
        for (; n < 4 && done + n < t; n++) {
            int e = pthread_create(&th[n], NULL, work, &out[n]);
            if (e != 0) {
                fprintf(stderr, "pthread_create: error %d after %ld threads\n", e, done + n);
                return 1;
            }
        }
        for (int i = 0; i < n; i++) {
            pthread_join(th[i], NULL);
            *total += out[i];
        }
        done += n;
    }
    return 0;
}

int main(int argc, char **argv) {
    long t = argc > 1 ? atol(argv[1]) : 5000;
    k = argc > 2 ? atol(argv[2]) : 1000;
    if (k < 0 || k > ADDS_MAX)
        return 2;
    for (long i = 0; i < k; i++)
        adds_data[i] = (double)(i % 3);
    double total = 0.0;
    if (run_threads(t, &total) != 0)
        return 1;
    if (argc > 3 && strcmp(argv[3], "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            double more = 0.0;
            _exit(run_threads(4, &more) == 0 ? 0 : 1);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    printf("%ld threads, total %.0f\n", t, total);
    return 0;
}
