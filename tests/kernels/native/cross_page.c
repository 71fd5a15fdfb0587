/* Generated code with an instruction that crosses from one page into the
 * next, run after code on the second page alone has run. Under the native
 * engine, running code from a writable page makes that page read-only (to
 * see later writes), which splits the mapping in two with different
 * protections; an instruction crossing the split must still be read whole.
 *
 *   usage: cross_page N          build: -O2
 *
 * In two pages of a read-write-execute mapping:
 * - mul, at 64 bytes into the second page: MULSD xmm0, xmm1; RET;
 * - add, 2 bytes before the second page: ADDSD xmm0, xmm1 (4 bytes, 2 on
 *   each page); RET.
 * mul runs N times first; then a RET in a mapping of its own runs once
 * (code in a new mapping: the engine reads the process's mappings again,
 * and sees the split); then add runs N times. Nothing else does FP work.
 *
 *   flop.fp64 = 2 N: flop_by_op.mul = N, flop_by_op.add = N
 *   stdout: "cross_page N\n", exit status 0
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "../kernel.h"

typedef double (*binary)(double, double);

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    unsigned char *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return 1;
    static const unsigned char mulsd_ret[] = {0xf2, 0x0f, 0x59, 0xc1, 0xc3};
    static const unsigned char addsd_ret[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};
    memcpy(mem + 4096 + 64, mulsd_ret, sizeof mulsd_ret);
    memcpy(mem + 4096 - 2, addsd_ret, sizeof addsd_ret);
    binary mul = (binary)(mem + 4096 + 64), add = (binary)(mem + 4096 - 2);
    volatile double x = 1.0, y = 1.0, sink;
    for (long i = 0; i < n; i++) sink = mul(x, y);
    unsigned char *other = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (other == MAP_FAILED) return 1;
    other[0] = 0xc3; /* ret */
    ((void (*)(void))other)();
    for (long i = 0; i < n; i++) sink = add(x, y);
    (void)sink;
    printf("cross_page %ld\n", n);
    return 0;
}
