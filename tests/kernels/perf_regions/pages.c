/* Region counts read by the markers (the perf engine's side), tested with a
 * software event: region "touch pages" writes one byte to each of N fresh
 * pages, so it takes at least N page faults (PERF_COUNT_SW_PAGE_FAULTS);
 * region "empty" does nothing and is entered twice, once nested in itself.
 *
 *   usage: pages N
 */
#include "flopscope.h"
#include <stdio.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long page = sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    FLOPSCOPE_REGION_BEGIN("touch pages");
    for (long i = 0; i < n; i++) p[i * page] = 1;
    FLOPSCOPE_REGION_END("touch pages");
    FLOPSCOPE_REGION_BEGIN("empty");
    FLOPSCOPE_REGION_BEGIN("empty");
    FLOPSCOPE_REGION_END("empty");
    FLOPSCOPE_REGION_END("empty");
    printf("%ld\n", n);
    return 0;
}
