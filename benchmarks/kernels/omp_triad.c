/* OpenMP triad a[i] = b[i] + s c[i] over N doubles, REPS times: 2 N REPS FLOP.
 * Build: gcc -O3 -mavx2 -mfma -fopenmp -o omp_triad omp_triad.c
 * Run:   OMP_NUM_THREADS=2 ./omp_triad 8000000 40 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 8000000, reps = argc > 2 ? atol(argv[2]) : 40;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) return 1;
    memset(b, 0x3f, n * sizeof *b);
    memset(c, 0x3f, n * sizeof *c);
    double s = 0.5;
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        __asm__ volatile("" : : "r"(a) : "memory");
    }
    unsigned long bits;
    memcpy(&bits, &a[n / 2], sizeof bits);
    printf("omp_triad n=%ld reps=%ld checksum=%lx\n", n, reps, bits);
    return 0;
}
