/* One thread rewrites the environment (setenv, unsetenv: glibc moves and
 * frees its `environ` array) while another keeps entering the native
 * engine's dispatcher (every munmap does). The runtime must not read the
 * environment after its take-over: it would race with the writer.
 *
 *   usage: setenv_threads N      build: -O2 -pthread
 *
 * The worker adds 1.0 N times (scalar fp64): exactly N add FLOP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "../kernel.h"

static long n;
static volatile int done;

static void *worker(void *arg) {
    (void)arg;
    volatile double acc = 0.0;
    for (long i = 0; i < n; i++) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) munmap(p, 4096);
        acc = acc + 1.0;
    }
    done = 1;
    return NULL;
}

int main(int argc, char **argv) {
    n = arg_long(argc, argv, 1);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL)) return 2;
    char name[32];
    for (long i = 0; !done; i++) {
        snprintf(name, sizeof name, "FS_SETENV_%ld", i % 500);
        if (i % 3 == 2) unsetenv(name);
        else setenv(name, "a value long enough to be allocated", 1);
    }
    pthread_join(t, NULL);
    return 0;
}
