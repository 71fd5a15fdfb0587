/* Flags left by a loop's closing branch and read after the loop, and flags
 * carried across a return. With attribution, the native engine counts the
 * not-taken side of a backward branch (the loop's exits): with a plain add
 * (which clears the carry) only where the code it falls to writes every
 * flag before reading one, else with a sequence that keeps them. A block
 * that writes no flags and ends in a return is counted in the return's own
 * code, which must keep them too.
 *
 * Each loop counts rcx down from 3 with `sub $1, %rcx; jnc 1b`: four
 * iterations, left with the carry set (the borrow past 0).
 * - carry_self: a loop of one block; after it, `adc` reads the carry.
 * - carry_two: the same loop of two blocks (a forward branch inside).
 * - fresh_self, fresh_two: the same loops, the code after them writing
 *   every flag first.
 * Each returns 1 when the carry reached the code after the loop (fresh_*
 * return 1 always).
 * - carry_out(a, b): returns with the carry set to a < b (unsigned), from a
 *   block that writes no flags; the caller reads it with `adc`.
 * main calls each n times and prints "n n n n n/2 n/2", adding 1.0 into a
 * double for each carry carry_out gave: n/2 scalar fp64 adds. */
#include <stdio.h>
#include <stdlib.h>

long carry_self(void);
long carry_two(void);
long fresh_self(void);
long fresh_two(void);
long carry_of(long a, long b);

__asm__(".text\n"
        ".globl carry_self\n"
        ".type carry_self, @function\n"
        "carry_self:\n"
        "  mov $3, %ecx\n"
        "1:\n"
        "  sub $1, %rcx\n"
        "  jnc 1b\n"
        "  mov $0, %eax\n" /* no flags written */
        "  adc $0, %eax\n" /* the loop's last borrow */
        "  ret\n"
        ".globl carry_two\n"
        ".type carry_two, @function\n"
        "carry_two:\n"
        "  mov $3, %ecx\n"
        "1:\n"
        "  test $1, %cl\n"
        "  jz 2f\n" /* forward: the loop has two blocks */
        "  nop\n"
        "2:\n"
        "  sub $1, %rcx\n"
        "  jnc 1b\n"
        "  mov $0, %eax\n"
        "  adc $0, %eax\n"
        "  ret\n"
        ".globl fresh_self\n"
        ".type fresh_self, @function\n"
        "fresh_self:\n"
        "  mov $3, %ecx\n"
        "1:\n"
        "  sub $1, %rcx\n"
        "  jnc 1b\n"
        "  sub $8, %rsp\n" /* writes every arithmetic flag */
        "  add $8, %rsp\n"
        "  mov $1, %eax\n"
        "  ret\n"
        ".globl fresh_two\n"
        ".type fresh_two, @function\n"
        "fresh_two:\n"
        "  mov $3, %ecx\n"
        "1:\n"
        "  test $1, %cl\n"
        "  jz 2f\n"
        "  nop\n"
        "2:\n"
        "  sub $1, %rcx\n"
        "  jnc 1b\n"
        "  sub $8, %rsp\n"
        "  add $8, %rsp\n"
        "  mov $1, %eax\n"
        "  ret\n"
        ".type carry_out, @function\n"
        "carry_out:\n"
        "  cmp %rsi, %rdi\n" /* carry = a < b */
        "  jbe 1f\n"         /* forward, to the next instruction: a block ends */
        "1:\n"
        "  mov $7, %eax\n" /* no flags written, then a return */
        "  ret\n"
        ".globl carry_of\n"
        ".type carry_of, @function\n"
        "carry_of:\n"
        "  call carry_out\n"
        "  mov $0, %eax\n"
        "  adc $0, %eax\n"
        "  ret\n");

static volatile double one = 1.0;

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long cs = 0, ct = 0, fs = 0, ft = 0, below = 0;
    double sum = 0.0;
    for (long i = 0; i < n; i++) {
        cs += carry_self();
        ct += carry_two();
        fs += fresh_self();
        ft += fresh_two();
        long c = carry_of(i, n / 2);
        below += c;
        if (c) sum = sum + one;
    }
    printf("%ld %ld %ld %ld %ld %.0f\n", cs, ct, fs, ft, below, sum);
    return 0;
}
