/* LIKWID's marker API called as functions (likwid.h, linked with -llikwid),
 * around two kernels with unmarked floating-point work between them.
 *
 *   usage: likwid_api N REPS M K      (N, K <= 4096, M <= 32)
 *   build: gcc -O2 -I crates/markers/include -I tests/kernels/regions
 *          likwid_api.c -L DIR -Wl,-rpath,DIR -llikwid
 *          (DIR: flopscope's liblikwid, or a stand-in for LIKWID's)
 *
 * Closed form (fp64; no FMA, as built without -mfma; the kernels are
 * tests/kernels/regions/regions.h's):
 *   region "triad":  REPS entries, each a triad over N elements:
 *                    add = mul = N REPS
 *   region "matmul": 1 entry, add = mul = M^3
 *   unmarked: a scale of K elements before, between and after: mul = 3 K
 *   total = 2 N REPS + 2 M^3 + 3 K
 *
 * Every other function of the marker API is called once, where LIKWID's
 * documentation puts it; under flopscope none of them does any work. Exit
 * status: 0 when flopscope's library answered likwid_markerGetRegion (no
 * events, no time, no calls), 3 otherwise.
 */
#include <likwid.h>

#include "regions.h"

#define NMAX 4096
#define MMAX 32
static double a[NMAX], b[NMAX], c[NMAX], x[NMAX], s[1];
static double A[MMAX * MMAX], B[MMAX * MMAX], C[MMAX * MMAX];

int main(int argc, char **argv) {
    long n = arg(argc, argv, 1, NMAX), reps = arg(argc, argv, 2, 1000000);
    long m = arg(argc, argv, 3, MMAX), k = arg(argc, argv, 4, NMAX);
    fill(a, sizeof a); fill(b, sizeof b); fill(c, sizeof c); fill(x, sizeof x); fill(s, sizeof s);
    fill(A, sizeof A); fill(B, sizeof B); fill(C, sizeof C);
    likwid_markerInit();
    likwid_markerThreadInit();
    likwid_markerRegisterRegion("triad");
    likwid_markerRegisterRegion("matmul");

    scale(x, s, k);
    for (long r = 0; r < reps; r++) {
        likwid_markerStartRegion("triad");
        triad(a, b, c, s, n);
        likwid_markerStopRegion("triad");
    }
    scale(x, s, k);
    likwid_markerStartRegion("matmul");
    matmul(C, A, B, m);
    likwid_markerStopRegion("matmul");
    scale(x, s, k);

    int nevents = 4, count = -1;
    double events[4], time = -1;
    likwid_markerGetRegion("triad", &nevents, events, &time, &count);
    likwid_markerResetRegion("triad");
    likwid_markerNextGroup();
    likwid_markerClose();
    escape(a); escape(C); escape(x);
    /* flopscope's library reports no events, time or calls. */
    return nevents == 0 && time == 0 && count == 0 ? 0 : 3;
}
