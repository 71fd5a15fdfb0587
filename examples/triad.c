/* The bundled example: a STREAM-style triad a[i] = b[i] + s * c[i].
 *
 * Closed form, for n elements and r repetitions (doubles):
 *   FLOP  = 2 n r        (one multiply and one add, or one FMA, per element)
 *   bytes = 24 n r       (read b and c, write a: 16 read + 8 written per element)
 * The program does no other floating-point work: sizes come from argv as
 * integers and the checksum is printed as an integer.
 *
 * Build: gcc -O2 -mavx2 -mfma -o triad triad.c
 * Run:   flopscope count -- ./triad 1000000 200
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void triad(double *restrict a, const double *restrict b,
                                            const double *restrict c, double s, long n) {
    for (long i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long reps = argc > 2 ? atol(argv[2]) : 10;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) return 1;
    /* Fill with bit patterns, not arithmetic, so that setup does no FLOP. */
    memset(a, 0, n * sizeof *a);
    memset(b, 0x3f, n * sizeof *b);
    memset(c, 0x3f, n * sizeof *c);
    double s;
    long one = 0x3ff0000000000000L; /* 1.0 */
    memcpy(&s, &one, sizeof s);
    for (long r = 0; r < reps; r++) {
        triad(a, b, c, s, n);
        __asm__ volatile("" ::: "memory");
    }
    unsigned long bits;
    memcpy(&bits, &a[n / 2], sizeof bits);
    printf("triad: n=%ld reps=%ld checksum=%lx\n", n, reps, bits);
    return 0;
}
