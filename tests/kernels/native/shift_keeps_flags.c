/* A shift by CL whose count is 0 leaves the flags as they were. Here the
 * zero flag set by a test in one block is read by a je in the next block,
 * after such a shift: zero_kept(a) returns 1 when a == 0. The native engine
 * must not bump the second block's counter (an add, which clears the zero
 * flag) before the shift, as it did when a shift by CL counted as writing
 * the flags. main sums zero_kept(i % 2) over i < N (N even): prints N/2,
 * and adds 1.0 per hit into a double: N/2 scalar fp64 adds. */
#include <stdio.h>
#include <stdlib.h>

long zero_kept(long a);

__asm__(".text\n"
        ".globl zero_kept\n"
        "zero_kept:\n"
        "  xor %ecx, %ecx\n"   /* a count of 0 */
        "  xor %eax, %eax\n"
        "  test %rdi, %rdi\n"  /* ZF = (a == 0) */
        "  jne 1f\n"           /* to the next instruction: a block ends */
        "1:\n"
        "  shl %cl, %edx\n"    /* count 0: the flags stay */
        "  je 2f\n"
        "  ret\n"
        "2:\n"
        "  mov $1, %eax\n"
        "  ret\n");

static volatile double one = 1.0;

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000, hits = 0;
    double sum = 0.0;
    for (long i = 0; i < n; i++) {
        if (zero_kept(i % 2)) {
            hits++;
            sum = sum + one;
        }
    }
    printf("%ld %.0f\n", hits, sum);
    return 0;
}
