/* i-k-j matrix product C += A * B, n x n doubles: 2 n^3 FLOP.
 * Build: gcc -O3 -mavx2 -mfma -o matmul matmul.c   Run: ./matmul 512 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void matmul(long n, const double *restrict a, const double *restrict b,
                                             double *restrict c) {
    for (long i = 0; i < n; i++)
        for (long k = 0; k < n; k++) {
            double aik = a[i * n + k];
            for (long j = 0; j < n; j++)
                c[i * n + j] += aik * b[k * n + j];
        }
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 512;
    double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b), *c = calloc(n * n, sizeof *c);
    if (!a || !b || !c) return 1;
    memset(a, 0x3f, n * n * sizeof *a);
    memset(b, 0x3f, n * n * sizeof *b);
    matmul(n, a, b, c);
    unsigned long bits;
    memcpy(&bits, &c[n + 1], sizeof bits);
    printf("matmul n=%ld checksum=%lx\n", n, bits);
    return 0;
}
