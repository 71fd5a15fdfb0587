/* System calls writing into pages of code while other threads run that
 * code: four threads, each with a function `ADDSD xmm0, xmm1; ret` at the
 * start of a page of its own (the four pages one writable, executable
 * mapping), call it N times; after each call, each reads 64 bytes from
 * /dev/zero into its own page and into the next thread's. Every read
 * gives a page back that another thread's next call has the engine
 * protect again, often between the dispatcher's check of a read and the
 * read itself: the read must still succeed, as natively.
 *
 *   usage: kernel_writes_threads N      build: -O2 -pthread
 *   exit status: 0, or 11 / 12 when a read into the own / the next page
 *   failed (its result and errno on stderr)
 *
 * In all (fp64): 4N FLOP add, and nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};

static long n;
static unsigned char *pages;

static void read_into(int fd, unsigned char *at, int status) {
    ssize_t r = read(fd, at, 64);
    if (r != 64) {
        fprintf(stderr, "read: %zd, errno %d\n", r, errno);
        exit(status);
    }
}

static void *work(void *arg) {
    long k = (long)arg;
    unsigned char *own = pages + 4096 * k, *next = pages + 4096 * ((k + 1) % 4);
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) exit(2);
    volatile double acc = 0;
    for (long i = 0; i < n; i++) {
        acc = ((fn)own)(acc, 1.0);
        read_into(fd, own + 2048, 11);
        read_into(fd, next + 3000, 12);
    }
    return NULL;
}

int main(int argc, char **argv) {
    n = arg_long(argc, argv, 1);
    pages = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return 1;
    for (int k = 0; k < 4; k++) memcpy(pages + 4096 * k, ADDSD, sizeof ADDSD);
    pthread_t t[4];
    for (long k = 0; k < 4; k++)
        if (pthread_create(&t[k], NULL, work, (void *)k)) return 3;
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    return 0;
}
