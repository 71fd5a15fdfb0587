/* Helpers of the region test programs. Nothing here does floating-point
 * work, so a program's FLOP are exactly those of the kernels it calls.
 *
 * Every kernel is `noipa`: GCC neither inlines it, clones it, nor lets what
 * it knows about the callee change the caller, so each call does its whole
 * closed-form work between the markers around it. Arrays are filled with
 * memset bit patterns (0x3f bytes: about 0.49) and then escaped, so the
 * compiler knows no value and can fold no arithmetic.
 */
#ifndef REGIONS_H
#define REGIONS_H

#include <stdlib.h>
#include <string.h>

#define KERNEL __attribute__((noipa))

/* Tells the compiler that the memory behind p is read and written here. */
static inline void escape(const void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

/* memset(p, 0x3f, bytes), then hidden from the optimizer. */
static inline void fill(void *p, size_t bytes) {
    memset(p, 0x3f, bytes);
    escape(p);
}

/* argv[i] as a positive integer (atol: integer work only); exits 64 when
 * missing, not positive or above max. */
static inline long arg(int argc, char **argv, int i, long max) {
    if (i >= argc) exit(64);
    long v = atol(argv[i]);
    if (v <= 0 || v > max) exit(64);
    return v;
}

/* a[i] = b[i] + s c[i], i < n: n multiplies and n adds (no FMA: built without -mfma). */
KERNEL void triad(double *a, const double *b, const double *c, const double *s, long n) {
    double f = *s;
    for (long i = 0; i < n; i++) a[i] = b[i] + f * c[i];
}

/* x[i] *= s, i < k: k multiplies. */
KERNEL void scale(double *x, const double *s, long k) {
    double f = *s;
    for (long i = 0; i < k; i++) x[i] *= f;
}

/* C += A B, m x m row-major, i-k-j order: m^3 multiplies and m^3 adds. */
KERNEL void matmul(double *C, const double *A, const double *B, long m) {
    for (long i = 0; i < m; i++)
        for (long k = 0; k < m; k++) {
            double aik = A[i * m + k];
            for (long j = 0; j < m; j++) C[i * m + j] += aik * B[k * m + j];
        }
}

#endif
