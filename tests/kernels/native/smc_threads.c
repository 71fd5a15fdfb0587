/* One thread rewrites code on a page while another runs other code on the
 * same page: every write invalidates the page's translations under the
 * running thread.
 *
 *   usage: smc_threads N (even)       build: -O2 -pthread
 *
 * The page holds F at its start and G = `subsd xmm0, xmm1; ret` at +64.
 * The reader calls G N times. The writer, N times, writes F anew (ADDSD on
 * even rounds, MULSD on odd ones: `OP xmm0, xmm1; ret`) and calls it once.
 * Exactly (fp64, scalar): sub N, add N/2, mul N/2.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};
static const unsigned char MULSD[] = {0xf2, 0x0f, 0x59, 0xc1, 0xc3};
static const unsigned char SUBSD[] = {0xf2, 0x0f, 0x5c, 0xc1, 0xc3};

static unsigned char *page;
static long n;
static pthread_barrier_t start;

static void *reader(void *arg) {
    (void)arg;
    fn g = (fn)(page + 64);
    volatile double acc = 0.0;
    pthread_barrier_wait(&start);
    for (long i = 0; i < n; i++) acc = g(acc, 1.0);
    return NULL;
}

static void *writer(void *arg) {
    (void)arg;
    fn f = (fn)page;
    volatile double acc = 0.0;
    pthread_barrier_wait(&start);
    for (long i = 0; i < n; i++) {
        memcpy(page, i % 2 ? MULSD : ADDSD, sizeof ADDSD);
        acc = f(acc, 1.0);
    }
    return NULL;
}

int main(int argc, char **argv) {
    n = arg_long(argc, argv, 1);
    if (n % 2) return 64;
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    memcpy(page + 64, SUBSD, sizeof SUBSD);
    pthread_barrier_init(&start, NULL, 2);
    pthread_t r, w;
    if (pthread_create(&r, NULL, reader, NULL) || pthread_create(&w, NULL, writer, NULL)) return 2;
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    return 0;
}
