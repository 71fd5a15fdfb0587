/* A program that picks its code by CPUID, as numpy, OpenBLAS and JIT
 * compilers do: it prints what CPUID (leaf 1 ECX, leaf 7.0 EBX/ECX/EDX,
 * leaf 7.1 EAX) and libgcc's __builtin_cpu_supports (its constructor asks
 * CPUID and XGETBV) say, then adds b to a, N doubles (N a multiple of 4),
 * REPS times, with AVX2 (4 lanes an instruction) where CPUID reports AVX
 * and AVX2, else with SSE2 (2 lanes): N x REPS FLOP either way.
 * Usage: cpuid_choice N REPS */
#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((target("avx2"), noinline)) static void add_avx2(double *a, const double *b,
                                                              long n) {
    for (long i = 0; i < n; i += 4)
        _mm256_storeu_pd(a + i, _mm256_add_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)));
}

__attribute__((noinline)) static void add_sse2(double *a, const double *b, long n) {
    for (long i = 0; i < n; i += 2)
        _mm_storeu_pd(a + i, _mm_add_pd(_mm_loadu_pd(a + i), _mm_loadu_pd(b + i)));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cpuid_choice N REPS\n");
        return 2;
    }
    long n = atol(argv[1]), reps = atol(argv[2]);
    unsigned eax, ebx, ecx, edx;
    __cpuid(1, eax, ebx, ecx, edx);
    unsigned leaf1_ecx = ecx;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    unsigned leaf7_ebx = ebx, leaf7_ecx = ecx, leaf7_edx = edx;
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    printf("leaf1.ecx %08x\nleaf7.ebx %08x\nleaf7.ecx %08x\nleaf7.edx %08x\nleaf7.1.eax %08x\n",
           leaf1_ecx, leaf7_ebx, leaf7_ecx, leaf7_edx, eax);
    printf("builtin avx %d avx2 %d fma %d avx512f %d\n", __builtin_cpu_supports("avx") != 0,
           __builtin_cpu_supports("avx2") != 0, __builtin_cpu_supports("fma") != 0,
           __builtin_cpu_supports("avx512f") != 0);
    int avx2 = (leaf1_ecx >> 28 & 1) && (leaf7_ebx >> 5 & 1);
    double *a = calloc(n, sizeof *a), *b = malloc(n * sizeof *b);
    for (long i = 0; i < n; i++) b[i] = 1.0;
    for (long r = 0; r < reps; r++) {
        if (avx2)
            add_avx2(a, b, n);
        else
            add_sse2(a, b, n);
    }
    long sum = 0;
    for (long i = 0; i < n; i++) sum += (long)a[i];
    printf("path %s sum %ld\n", avx2 ? "avx2" : "sse2", sum);
    free(a);
    free(b);
    return 0;
}
