/* A function whose multiply crosses a page boundary (its first 4 bytes at
 * the end of one page, the rest on the next), called n times inside the
 * region "calls": per call 4 instructions (movsd, mulsd, movsd, ret) and
 * 1 FLOP. QEMU 7.2 ends a block before such an instruction and starts the
 * next block with it; the emulate engine must count it once.
 * Usage: straddle N */
#include <stdio.h>
#include "kernel.h"
#include "flopscope.h"

__asm__(".text\n.balign 4096\n.skip 4096 - 12\n"
        ".globl straddle_f\n.type straddle_f, @function\nstraddle_f:\n"
        "  movsd straddle_x(%rip), %xmm0\n" /* 8 bytes: ends 4 before the page */
        "  mulsd straddle_x(%rip), %xmm0\n" /* 8 bytes: crosses it */
        "  movsd %xmm0, straddle_y(%rip)\n"
        "  ret\n.size straddle_f, . - straddle_f\n");
void straddle_f(void);
double straddle_x = 1.5, straddle_y;

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    FLOPSCOPE_REGION_BEGIN("calls");
    for (long i = 0; i < n; i++)
        straddle_f();
    FLOPSCOPE_REGION_END("calls");
    printf("%g\n", straddle_y);
    return 0;
}
