/* Masked AVX-512 arithmetic with an embedded broadcast memory operand,
 * in the region "bc", under the opmask given (argv[1], 16 bits):
 *   vaddps zmm{k1}, zmm, [x]{1to16}       16 lanes, 4-byte element
 *   vfmadd231pd zmm{k1}, zmm, [y]{1to8}   8 lanes, 8-byte element
 *   vmulps ymm{k1}, ymm, [x]{1to8}        8 lanes, 4-byte element
 *   vcmpps k2{k1}, zmm, [x]{1to16}, 0     16 lanes, no FLOP
 * Each reads its one element once when any of its lanes is active (the
 * mask's low 16, 8, 8 and 16 bits), and nothing otherwise.
 * FLOP: popcount(m) + 2 popcount(m & 0xff) + popcount(m & 0xff).
 * Usage: avx512_broadcast MASK */
#include <stdlib.h>
#include "flopscope.h"

static float x[16] __attribute__((aligned(64))) = {1.0f};
static double y[8] __attribute__((aligned(64))) = {1.0};

int main(int argc, char **argv) {
    unsigned m = argc > 1 ? (unsigned)strtoul(argv[1], 0, 0) : 0xffff;
    FLOPSCOPE_REGION_BEGIN("bc");
    /* The mask set in the same statement: k registers do not survive calls. */
    __asm__ __volatile__("kmovw %2, %%k1\n\t"
                         "vaddps (%0)%{1to16%}, %%zmm1, %%zmm0%{%%k1%}\n\t"
                         "vfmadd231pd (%1)%{1to8%}, %%zmm1, %%zmm0%{%%k1%}\n\t"
                         "vmulps (%0)%{1to8%}, %%ymm1, %%ymm0%{%%k1%}\n\t"
                         "vcmpps $0, (%0)%{1to16%}, %%zmm1, %%k2%{%%k1%}"
                         :
                         : "r"(x), "r"(y), "r"(m)
                         : "xmm0", "xmm1", "k1", "k2", "memory");
    FLOPSCOPE_REGION_END("bc");
    return 0;
}
