/* Nested regions: "inner" inside "outer", both repeated.
 *
 *   usage: nested N K REPS      (N, K <= 4096)
 *   build: gcc -O2 -I crates/markers/include
 *
 *   scale(K)                         unmarked: K
 *   REPS times:
 *     begin outer
 *       scale(K)                     outer's own: K
 *       2 times: begin inner; triad(N); end inner      inner: 2 N each
 *       scale(K)                     outer's own: K
 *     end outer
 *
 * A nested region's work also counts in the region around it, so:
 *   region "inner": entries = 2 REPS, flop = 4 N REPS (add = mul = 2 N REPS)
 *   region "outer": entries = REPS,   flop = (2 K + 4 N) REPS
 *                   (add = 2 N REPS, mul = (2 K + 2 N) REPS)
 *   unmarked: flop = K (mul);  total = K + (2 K + 4 N) REPS
 */
#include "regions.h"
#include "flopscope.h"

#define NMAX 4096
static double a[NMAX], b[NMAX], c[NMAX], x[NMAX], s[1];

int main(int argc, char **argv) {
    long n = arg(argc, argv, 1, NMAX), k = arg(argc, argv, 2, NMAX), reps = arg(argc, argv, 3, 1000000);
    fill(a, sizeof a); fill(b, sizeof b); fill(c, sizeof c); fill(x, sizeof x); fill(s, sizeof s);
    scale(x, s, k);
    for (long r = 0; r < reps; r++) {
        FLOPSCOPE_REGION_BEGIN("outer");
        scale(x, s, k);
        for (int j = 0; j < 2; j++) {
            FLOPSCOPE_REGION_BEGIN("inner");
            triad(a, b, c, s, n);
            FLOPSCOPE_REGION_END("inner");
        }
        scale(x, s, k);
        FLOPSCOPE_REGION_END("outer");
    }
    escape(a); escape(x);
    return 0;
}
