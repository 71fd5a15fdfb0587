/* A region begun again while it is open (as a marked recursive function
 * does), inside another region, then a region left open at exit.
 *
 *   usage: reenter N REPS      (N <= 4096)
 *   build: gcc -O2 -I crates/markers/include
 *
 * Every step is scale(N): N multiplies (fp64, mul).
 *
 *   begin "all"; begin "a"; scale; begin "a"; REPS x scale; end "a"; end "a";
 *   end "all"; begin "open"; scale
 *
 * Region "a" covers the first 1 + REPS scales: (1 + REPS) N FLOP, counted
 * once however deeply it is nested in itself; entries = 2 (it was begun
 * twice). Region "all" covers the same work: (1 + REPS) N FLOP, entries 1;
 * "a" lies inside it, so a's native time cannot exceed all's (with REPS
 * large, counting the inner interval twice would nearly double it). Region
 * "open" is never ended: it counts to the exit, N FLOP, entries = 1.
 * Unmarked: 0; total = (2 + REPS) N.
 */
#include "regions.h"
#include "flopscope.h"

#define NMAX 4096
static double x[NMAX], s[1];

int main(int argc, char **argv) {
    long n = arg(argc, argv, 1, NMAX), reps = arg(argc, argv, 2, 1000000);
    fill(x, sizeof x); fill(s, sizeof s);
    FLOPSCOPE_REGION_BEGIN("all");
    FLOPSCOPE_REGION_BEGIN("a");
    scale(x, s, n);
    FLOPSCOPE_REGION_BEGIN("a");
    for (long r = 0; r < reps; r++) scale(x, s, n);
    FLOPSCOPE_REGION_END("a");
    FLOPSCOPE_REGION_END("a");
    FLOPSCOPE_REGION_END("all");
    FLOPSCOPE_REGION_BEGIN("open");
    scale(x, s, n);
    escape(x);
    return 0;
}
