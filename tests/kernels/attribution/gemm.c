/* A C driver of Debian's OpenBLAS: one cblas_dgemm of N x N matrices,
 * C = 1.0 * A * B + 0.0 * C.
 *
 *   usage: gemm N          build: -O2 -g -lopenblas   (OPENBLAS_NUM_THREADS=1)
 *
 * The product is 2 N^3 FLOP. OpenBLAS's dgemm kernels then scale each
 * element of the product by alpha and add it into C, which costs N^2 to
 * 2 N^2 more FLOP by the kernel OpenBLAS picks for the processor (measured:
 * Zen kernel 2 N^3 + N^2, Opteron-SSE3 kernel, picked under QEMU,
 * 2 N^3 + 2 N^2). On an Intel processor with AVX-512, OpenBLAS 0.3.21 takes
 * its small-matrix path instead (dgemm_small_kernel_b0_nn_SKYLAKEX,
 * 2 N^3 + N^2, measured on a Sapphire Rapids-class VM).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    double *a = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n * n);
    double *c = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = 0.5;
        b[i] = 0.25;
        c[i] = 0.0;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    printf("gemm: n=%d c00=%g\n", n, c[0]);
    free(a);
    free(b);
    free(c);
    return 0;
}
