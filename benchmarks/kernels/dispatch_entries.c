/* N entries into the native engine's dispatcher, timed by the program
 * itself: munmap of an address range it just unmapped (the engine performs
 * munmap in its dispatcher; the kernel has nothing to do). Prints the mean
 * nanoseconds per call. Built static and dynamic, it measures what a
 * statically linked program's `fs` switch adds to a dispatcher entry.
 *
 *   usage: dispatch_entries N
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    void *p = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p, 4096);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) munmap(p, 4096);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
