/* 1-D heat equation, explicit steps, split across the ranks: each rank owns
 * N points, exchanges one halo point with each neighbour per step
 * (MPI_Sendrecv) and sums the squared change over the job every 50 steps
 * (MPI_Allreduce). 5 FLOP per point per step, 3 more per point on the
 * steps that sum the change.
 * Build: mpicc -O2 -o mpi_heat mpi_heat.c
 * Run:   mpirun -n 2 ./mpi_heat 1000000 400 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 1000000, steps = argc > 2 ? atol(argv[2]) : 400;
    /* u[0] and u[n + 1] are the halo points. */
    double *u = calloc(n + 2, sizeof *u), *v = calloc(n + 2, sizeof *v);
    if (!u || !v) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 1; i <= n; i++) u[i] = (double)((rank * n + i) % 1000) / 1000.0;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    const double k = 0.25;
    double change = 0.0;
    for (long s = 0; s < steps; s++) {
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[n + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[n], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (long i = 1; i <= n; i++) v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        if (s % 50 == 49) {
            double local = 0.0;
            for (long i = 1; i <= n; i++) local += (v[i] - u[i]) * (v[i] - u[i]);
            MPI_Allreduce(&local, &change, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        double *t = u;
        u = v;
        v = t;
    }
    if (rank == 0) printf("mpi_heat ranks=%d n=%ld steps=%ld change=%g\n", size, n, steps, change);
    MPI_Finalize();
    return 0;
}
