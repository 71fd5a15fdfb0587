/* x87 arithmetic: a long double loop.
 *
 *   usage: x87 N                build: -O2 -fno-math-errno [-mavx2 -mfma]
 *
 * long double is computed on the x87 stack whatever the SSE/AVX flags. Each of
 * the N iterations does acc = acc * m + c (FMUL, FADD), q = q / d (FDIV) and
 * s = sqrtl(s) (FSQRT; -fno-math-errno keeps it inline, no libm call). FLD,
 * FSTP and FXCH move data and are not FLOP. Each x87 arithmetic instruction is
 * 1 FLOP, precision x87, width 80 bits, 1 lane:
 *
 *   flop.total = flop.x87 = 4 N
 *   flop_by_op: add = mul = div = sqrt = N
 */
#include "kernel.h"

static volatile long double vm = 0.5L, vc = 0.25L, vdiv = 1.5L, vs = 2.0L;
static volatile long double sink;

__attribute__((noinline)) static void kernel(long n) {
    long double acc = vc, m = vm, c = vc, q = vm, d = vdiv, s = vs;
    for (long i = 0; i < n; i++) {
        acc = acc * m + c;
        q = q / d;
        s = __builtin_sqrtl(s);
    }
    sink = acc;
    sink = q;
    sink = s;
}

int main(int argc, char **argv) {
    kernel(arg_long(argc, argv, 1));
    return 0;
}
