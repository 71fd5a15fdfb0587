/* Two marked kernels with unmarked floating-point work around them, built
 * with one of four kinds of marker.
 *
 *   usage: regions N REPS M K      (N, K <= 4096, M <= 32)
 *   build: gcc -O2 -I crates/markers/include, and one of
 *     -DMARK_NAMED                    flopscope.h
 *     -DMARK_LIKWID -DLIKWID_PERFMON  likwid-marker.h (without LIKWID_PERFMON
 *                                     its macros are empty: no regions)
 *     -DMARK_SSC                      SDE's __SSC_MARK: triad 0x111..0x222,
 *                                     matmul 0x333..0x444
 *
 * Closed form (fp64; no FMA, as built without -mfma):
 *   region "triad"  (SSC: the 0x111..0x222 pairs): REPS entries, each a triad
 *                   over N elements: flop = 2 N REPS (add = mul = N REPS)
 *   region "matmul" (SSC: 0x333..0x444):          1 entry, flop = 2 M^3
 *                   (add = mul = M^3)
 *   unmarked: a scale of K elements before, between and after: 3 K (mul)
 *   total = 2 N REPS + 2 M^3 + 3 K
 *
 * Bytes of region "triad": each element loads b[i] and c[i] and stores a[i],
 * whatever the vector width; everything else in the region (the call, the
 * markers) does not depend on N. So two runs at N1 and N2 with the same
 * number of digits differ by d read = 16 (N2 - N1) REPS and d written =
 * 8 (N2 - N1) REPS in that region, and by nothing anywhere else.
 */
#include "regions.h"

#if defined(MARK_NAMED)
#include "flopscope.h"
#define INIT() FLOPSCOPE_INIT()
#define CLOSE() FLOPSCOPE_CLOSE()
#define BEGIN(name, mark) FLOPSCOPE_REGION_BEGIN(name)
#define END(name, mark) FLOPSCOPE_REGION_END(name)
#elif defined(MARK_LIKWID)
#include <likwid-marker.h>
#define INIT() LIKWID_MARKER_INIT
#define CLOSE() LIKWID_MARKER_CLOSE
#define BEGIN(name, mark) LIKWID_MARKER_START(name)
#define END(name, mark) LIKWID_MARKER_STOP(name)
#elif defined(MARK_SSC)
/* As Intel SDE documents it. */
#define __SSC_MARK(tag) __asm__ __volatile__("movl %0, %%ebx; .byte 0x64, 0x67, 0x90" ::"i"(tag) : "%ebx")
#define INIT()
#define CLOSE()
#define BEGIN(name, mark) __SSC_MARK(mark)
#define END(name, mark) __SSC_MARK(mark)
#else
#error "build with -DMARK_NAMED, -DMARK_LIKWID or -DMARK_SSC"
#endif

#define NMAX 4096
#define MMAX 32
static double a[NMAX], b[NMAX], c[NMAX], x[NMAX], s[1];
static double A[MMAX * MMAX], B[MMAX * MMAX], C[MMAX * MMAX];

int main(int argc, char **argv) {
    long n = arg(argc, argv, 1, NMAX), reps = arg(argc, argv, 2, 1000000);
    long m = arg(argc, argv, 3, MMAX), k = arg(argc, argv, 4, NMAX);
    fill(a, sizeof a); fill(b, sizeof b); fill(c, sizeof c); fill(x, sizeof x); fill(s, sizeof s);
    fill(A, sizeof A); fill(B, sizeof B); fill(C, sizeof C);
    INIT();

    scale(x, s, k);
    for (long r = 0; r < reps; r++) {
        BEGIN("triad", 0x111);
        triad(a, b, c, s, n);
        END("triad", 0x222);
    }
    scale(x, s, k);
    BEGIN("matmul", 0x333);
    matmul(C, A, B, m);
    END("matmul", 0x444);
    scale(x, s, k);

    CLOSE();
    escape(a); escape(C); escape(x);
    return 0;
}
