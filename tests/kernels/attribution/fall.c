/* A function that falls into the next one's loop, as hand-written assembly
 * does (glibc's string functions): the loop is entered by a call and by
 * falling in, and both count as its entries.
 *
 *   usage: fall N REPS     (N >= 1)
 *   fall_into(x, f, n): x + f, then on into fall_loop
 *   fall_loop(x, f, n): n multiplies of x by f (its loop header is its start)
 *
 * Per repetition: fall_into once (1 + N FLOP), fall_loop once (N FLOP).
 * fall_loop's loop: 2 * REPS entries, 2 * N * REPS iterations, as many FLOP.
 */
#include <stdio.h>
#include <stdlib.h>

double fall_into(double x, double f, long n);
double fall_loop(double x, double f, long n);

__asm__(".text\n"
        ".globl fall_into\n"
        ".type fall_into, @function\n"
        "fall_into:\n"
        "    addsd %xmm1, %xmm0\n"
        ".globl fall_loop\n"
        ".type fall_loop, @function\n"
        "fall_loop:\n"
        "    mulsd %xmm1, %xmm0\n"
        "    dec %rdi\n"
        "    jnz fall_loop\n"
        "    ret\n"
        ".size fall_loop, . - fall_loop\n"
        ".size fall_into, . - fall_into\n");

int main(int argc, char **argv) {
    if (argc < 3 || atol(argv[1]) < 1) {
        fprintf(stderr, "usage: fall N REPS (N >= 1)\n");
        return 2;
    }
    long n = atol(argv[1]), reps = atol(argv[2]);
    double s = 0;
    for (long r = 0; r < reps; r++)
        s += fall_into(1.0, 1.0000001, n) + fall_loop(1.0, 1.0000001, n);
    printf("%.17g\n", s);
    return 0;
}
