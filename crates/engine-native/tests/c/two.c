/* heavy() does three times light()'s floating-point work, in alternation,
 * until light() has done argv[1] iterations in all. Rounds have
 * pseudo-random lengths: samples come on the kernel's tick, and rounds of
 * one length would alias with it. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

/* A dependent multiply-add chain: the same time per iteration in both. */
NOINLINE double heavy(long n) {
    double x = 1.0;
    for (long i = 0; i < 3 * n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

NOINLINE double light(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv) {
    long total = argc > 1 ? atol(argv[1]) : 1000000;
    unsigned long r = 1;
    double s = 0;
    for (long done = 0; done < total;) {
        r = r * 6364136223846793005UL + 1442695040888963407UL;
        long n = 50000 + (long)((r >> 33) % 100000);
        s += heavy(n);
        s += light(n);
        done += n;
    }
    printf("%.3f\n", s);
    return 0;
}
