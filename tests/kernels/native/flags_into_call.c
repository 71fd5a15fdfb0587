/* Flags passed into a call, which the psABI does not do but hand-written
 * code may: carry_in() returns the carry flag it was called with. The
 * native engine bumps a block's counter with a plain add (which clears the
 * carry) only where the flags are dead; a block ending in a call has them
 * dead only if the callee writes them before reading them. So each call
 * here must still see the carry its caller set.
 *
 * below(a, b) sets the carry to a < b (unsigned) in one block, then calls
 * carry_in from the next block, which writes no flags of its own. The same
 * call into fresh_flags() (which writes all flags first) must work too.
 * main sums both over i < N against N/2 (N even): prints "N/2 N/2", and
 * adds 1.0 per carry into a double: N/2 scalar fp64 adds each way. */
#include <stdio.h>
#include <stdlib.h>

long below(long a, long b);
long below_fresh(long a, long b);

__asm__(".text\n"
        ".globl carry_in\n"
        "carry_in:\n"
        "  mov $0, %eax\n" /* no flags written */
        "  adc $0, %eax\n" /* reads the carry the caller left */
        "  ret\n"
        ".globl fresh_flags\n"
        "fresh_flags:\n"
        "  sub $8, %rsp\n" /* writes every arithmetic flag */
        "  add $8, %rsp\n"
        "  mov %rdx, %rax\n"
        "  ret\n"
        ".globl below\n"
        "below:\n"
        "  cmp %rsi, %rdi\n" /* carry = a < b */
        "  jbe 1f\n"         /* to the next instruction: a block ends here */
        "1:\n"
        "  mov $7, %edx\n" /* the next block writes no flags */
        "  call carry_in\n"
        "  ret\n"
        ".globl below_fresh\n"
        "below_fresh:\n"
        "  xor %edx, %edx\n"
        "  cmp %rsi, %rdi\n"
        "  setb %dl\n"
        "  jbe 1f\n"
        "1:\n"
        "  mov $7, %ecx\n"
        "  call fresh_flags\n"
        "  ret\n");

static volatile double one = 1.0;

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long carries = 0, fresh = 0;
    double sum = 0.0;
    for (long i = 0; i < n; i++) {
        long c = below(i, n / 2), f = below_fresh(i, n / 2);
        carries += c;
        fresh += f;
        if (c) sum = sum + one;
        if (f) sum = sum + one;
    }
    printf("%ld %ld %.0f\n", carries, fresh, sum);
    return 0;
}
