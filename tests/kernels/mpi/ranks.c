/* Rank r does (r + 1) * N multiplies inside region "work"; nothing else
 * floating-point of its own (the MPI library may do some outside the region).
 * Region FLOP: rank r = (r + 1) N; job = N * size * (size + 1) / 2.
 * Usage: mpirun -n SIZE ranks N */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "flopscope.h"

__attribute__((noinline)) static void scale(double *a, double s, long n) {
    for (long i = 0; i < n; i++) a[i] *= s;
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = (rank + 1) * atol(argv[1]);
    double *a = malloc(n * sizeof *a), s;
    memset(a, 0x3f, n * sizeof *a);
    memcpy(&s, a, sizeof s);
    FLOPSCOPE_REGION_BEGIN("work");
    scale(a, s, n);
    FLOPSCOPE_REGION_END("work");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
