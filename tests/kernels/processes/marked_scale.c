/* n multiplies inside flopscope's region "scale", then exits with CODE.
 * FLOP = n (fp64 mul), all of it in region "scale" (1 entry); nothing else.
 * Usage: marked_scale N CODE      build: -O2 -I crates/markers/include */
#include <stdlib.h>
#include <string.h>
#include "flopscope.h"

__attribute__((noinline)) static void scale(double *a, double s, long n) {
    for (long i = 0; i < n; i++) a[i] *= s;
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    int code = argc > 2 ? atoi(argv[2]) : 0;
    double *a = malloc(n * sizeof *a), s;
    memset(a, 0x3f, n * sizeof *a);
    memcpy(&s, a, sizeof s);
    FLOPSCOPE_REGION_BEGIN("scale");
    scale(a, s, n);
    FLOPSCOPE_REGION_END("scale");
    return code;
}
