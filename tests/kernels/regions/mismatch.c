/* Region ends that do not match, in two modes.
 *
 *   usage: mismatch MODE N      (MODE 1 or 2, N <= 4096)
 *   build: gcc -O2 -I crates/markers/include
 *
 * Every step below is scale(N): N multiplies (fp64, mul); "->" names the
 * region(s) it counts in.
 *
 * MODE 1, an END of a region never begun (ignored, with a warning):
 *     scale -> unmarked; end "ghost"; scale -> unmarked;
 *     begin "a"; scale -> a; end "a"; scale -> unmarked
 *   region "a": entries 1, flop N; no region "ghost"; unmarked: 3 N; total 4 N
 *
 * MODE 2, the outer region ended while the inner one is open (closes both),
 * then the inner one ended when no longer open (ignored):
 *     scale -> unmarked; begin "outer"; scale -> outer;
 *     begin "inner"; scale -> inner and outer; end "outer";
 *     scale -> unmarked; end "inner"; scale -> unmarked
 *   region "outer": entries 1, flop 2 N; region "inner": entries 1, flop N;
 *   unmarked: 3 N; total 5 N
 */
#include "regions.h"
#include "flopscope.h"

#define NMAX 4096
static double x[NMAX], s[1];

int main(int argc, char **argv) {
    long mode = arg(argc, argv, 1, 2), n = arg(argc, argv, 2, NMAX);
    fill(x, sizeof x); fill(s, sizeof s);
    scale(x, s, n);
    if (mode == 1) {
        FLOPSCOPE_REGION_END("ghost");
        scale(x, s, n);
        FLOPSCOPE_REGION_BEGIN("a");
        scale(x, s, n);
        FLOPSCOPE_REGION_END("a");
    } else {
        FLOPSCOPE_REGION_BEGIN("outer");
        scale(x, s, n);
        FLOPSCOPE_REGION_BEGIN("inner");
        scale(x, s, n);
        FLOPSCOPE_REGION_END("outer");
        scale(x, s, n);
        FLOPSCOPE_REGION_END("inner");
    }
    scale(x, s, n);
    escape(x);
    return 0;
}
