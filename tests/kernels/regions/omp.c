/* One region entered by the 4 threads of an OpenMP parallel region.
 *
 *   usage: omp N K      (N <= 4096, K <= 4096)
 *   build: gcc -O2 -fopenmp -I crates/markers/include
 *
 * Each of the 4 threads begins region "work", runs a triad over its own N
 * elements (N multiplies, N adds) and ends the region; exits 65 if OpenMP
 * gave another number of threads. The main thread scales K elements before
 * the parallel region (unmarked). libgomp's own work is integer work.
 *
 *   region "work": entries = 4, flop = 4 * 2 N (add = mul = 4 N)
 *   unmarked: flop = K (mul);  total = 8 N + K
 */
#include "regions.h"
#include "flopscope.h"
#include <omp.h>

#define THREADS 4
#define NMAX 4096
static double a[THREADS * NMAX], b[THREADS * NMAX], c[THREADS * NMAX], x[NMAX], s[1];

int main(int argc, char **argv) {
    long n = arg(argc, argv, 1, NMAX), k = arg(argc, argv, 2, NMAX);
    fill(a, sizeof a); fill(b, sizeof b); fill(c, sizeof c); fill(x, sizeof x); fill(s, sizeof s);
    scale(x, s, k);
    int wrong = 0;
#pragma omp parallel num_threads(THREADS)
    {
        if (omp_get_num_threads() != THREADS) {
#pragma omp atomic write
            wrong = 1;
        }
        long t = omp_get_thread_num();
        FLOPSCOPE_REGION_BEGIN("work");
        triad(a + t * n, b + t * n, c + t * n, s, n);
        FLOPSCOPE_REGION_END("work");
    }
    escape(a); escape(x);
    return wrong ? 65 : 0;
}
