/* A program that saves the processor's state itself with XSAVE, as some
 * runtimes do around foreign calls (SBCL's Lisp): the bytes XSAVE moves
 * depend on that state, and the native engine, which does not count them,
 * names the block that holds it.
 *
 *   usage: xsave N        build: -O2
 *
 * Prints the address of save_state (whose first block holds the XSAVE) and
 * runs it N times. No floating-point work: flop.total = 0.
 */
#include <stdint.h>
#include <stdio.h>
#include "../kernel.h"

/* Room for every state component XCR0 can enable without a request
 * (x87 to AVX-512: 2,696 bytes), 64-byte aligned as XSAVE requires. */
static unsigned char area[8192] __attribute__((aligned(64)));

__attribute__((noinline)) void save_state(void) {
    __asm__ volatile("xsave %0" : "=m"(area) : "a"(-1), "d"(-1) : "memory");
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    printf("%p\n", (void *)save_state);
    for (long i = 0; i < n; i++) save_state();
    return 0;
}
