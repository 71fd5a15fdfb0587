/* n multiplies: a[i] *= s over n doubles. FLOP = n (fp64 mul), nothing else.
 * Usage: scale N */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void scale(double *a, double s, long n) {
    for (long i = 0; i < n; i++) a[i] *= s;
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    double *a = malloc(n * sizeof *a), s;
    memset(a, 0x3f, n * sizeof *a);
    memcpy(&s, a, sizeof s);
    scale(a, s, n);
    return 0;
}
