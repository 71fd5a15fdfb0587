/* REP string instructions in the region "rep", 10 times each with a count
 * of N (0 included): rep stosb (N bytes written), rep movsq (N quadwords
 * read and written), and repe cmpsb over equal bytes (it runs until rcx
 * reaches 0: N bytes read twice). Each REP instruction executes as QEMU
 * runs it: once an iteration and once for the check that ends them.
 *   bytes written: 10 (N + 8 N)     bytes read: 10 (8 N + 2 N)
 * Usage: rep_strings N    (N <= 512) */
#include <stdio.h>
#include "kernel.h"
#include "flopscope.h"

static char a[512], b[512];
static long q[512], r[512];

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], 0, 10) : 0;
    if (n < 0 || n > 512) return 64;
    FLOPSCOPE_REGION_BEGIN("rep");
    for (int k = 0; k < 10; k++) {
        void *d = a, *s = q, *t = r;
        long c = n;
        __asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0) : "memory");
        c = n;
        __asm__ volatile("rep movsq" : "+S"(s), "+D"(t), "+c"(c) : : "memory");
        void *x = a, *y = b;
        c = n;
        __asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(c) : : "memory", "cc");
    }
    FLOPSCOPE_REGION_END("rep");
    printf("%d %ld\n", a[0], r[0]);
    return 0;
}
