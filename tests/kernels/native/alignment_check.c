/* Runs code for the first time with the alignment-check flag (RFLAGS.AC)
 * set, as the JVM does while it probes the processor: under the native
 * engine the program then leaves the code cache to have that code
 * translated, with AC still set, and the runtime must not fault on an
 * unaligned access of its own (natively nothing here is unaligned).
 *
 *   usage: alignment_check M     build: -O2 -msse2
 *
 * With AC set, each of four functions run for the first time does M scalar
 * fp64 adds (ADDSD on aligned volatiles); AC is cleared before anything
 * else runs.
 *
 *   flop.fp64 = flop_by_op.add = 4 M
 *   stdout: "done\n", exit status 0
 */
#include <stdio.h>
#include "../kernel.h"

static volatile double acc = 1.0, one = 1.0;
static long m_adds;

#define ADDS(name)                                              \
    __attribute__((noinline)) static void name(void) {          \
        for (long i = 0; i < m_adds; i++) acc = acc + one;      \
    }
ADDS(first)
ADDS(second)
ADDS(third)
ADDS(fourth)

static void set_ac(void) { __asm__ volatile("pushfq\n\torq $0x40000, (%%rsp)\n\tpopfq" ::: "memory", "cc"); }
static void clear_ac(void) { __asm__ volatile("pushfq\n\tandq $~0x40000, (%%rsp)\n\tpopfq" ::: "memory", "cc"); }

int main(int argc, char **argv) {
    m_adds = arg_long(argc, argv, 1);
    void (*fns[4])(void) = {first, second, third, fourth};
    for (int k = 0; k < 4; k++) {
        set_ac();
        fns[k]();
        clear_ac();
    }
    printf("done\n");
    return 0;
}
