/* Calls and returns that do not pair up, which an engine that predicts or
 * caches returns by their calls must still follow exactly: each of N rounds
 *   1. dives 40 calls deep, x = x * 0.5 + 1 at each level (2 FLOP), and
 *      longjmps from the bottom back to the round's setjmp: 40 calls that
 *      never return;                                             80 FLOP
 *   2. calls a chain of 8 functions that return normally, each
 *      x = x * 0.5 + 1;                                          16 FLOP
 *   3. ret_as_jump: `push label; ret` (a return no call made), then
 *      x = x + x;                                                 1 FLOP
 *   4. through_thunk: calls half (x * 0.5) through a retpoline-style
 *      thunk (`call 2f; 2: mov %r11, (%rsp); ret`);               1 FLOP
 *   5. call_pop: reads its own address with `call 1f; 1: pop` (a call
 *      that never returns), then x = x + x;                       1 FLOP
 *   6. up_two: calls a helper that drops its return address and returns
 *      straight to up_two's caller with x * 0.5;                  1 FLOP
 *   7. dives 30 calls deep as in 1, raises SIGUSR1 at the bottom, and the
 *      handler siglongjmps back to the round's sigsetjmp.         60 FLOP
 * After the rounds, a recursion 20,000 calls deep that returns through every
 * frame, x = x * 0.5 + 1 on the way down and again on the way up: 80,000
 * FLOP.
 *
 *   usage: unpaired_returns N        build: -O2 (any x86-64 flags)
 *   flop.fp64 = 160 N + 80000
 *   stdout: the bits of x in hex (printing a double would do fp work), and
 *   how many times the C functions were entered (a return that lands in the
 *   wrong place changes it, or crashes)
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../kernel.h"

double ret_as_jump(double x);
double through_thunk(double (*f)(double), double x);
double call_pop(double x);
double up_two(double x);

__asm__(
    ".text\n"
    ".globl ret_as_jump\n"
    "ret_as_jump:\n"
    "    lea 1f(%rip), %rax\n"
    "    push %rax\n"
    "    ret\n"
    "1:  addsd %xmm0, %xmm0\n"
    "    ret\n"
    ".globl through_thunk\n"
    "through_thunk:\n"
    "    mov %rdi, %r11\n"
    "    call 3f\n"
    "    ret\n"
    "3:  call 2f\n"
    "1:  pause\n"
    "    lfence\n"
    "    jmp 1b\n"
    "2:  mov %r11, (%rsp)\n"
    "    ret\n"
    ".globl call_pop\n"
    "call_pop:\n"
    "    call 1f\n"
    "1:  pop %rax\n"
    "    addsd %xmm0, %xmm0\n"
    "    ret\n"
    ".globl up_two\n"
    "up_two:\n"
    "    call 1f\n"
    "    ud2\n"
    "1:  mulsd half_constant(%rip), %xmm0\n"
    "    add $8, %rsp\n"
    "    ret\n"
    ".section .rodata\n"
    ".balign 8\n"
    "half_constant: .double 0.5\n"
    ".text\n");

static jmp_buf env;
static sigjmp_buf sigenv;
static volatile double bottom;
static long entered;

__attribute__((noinline)) static double half(double x) {
    entered++;
    return x * 0.5;
}

__attribute__((noinline)) static double dive(double x, int d) {
    entered++;
    x = x * 0.5 + 1.0;
    if (d == 1) {
        bottom = x;
        longjmp(env, 1);
    }
    double r = dive(x, d - 1);
    __asm__ volatile("" : "+x"(r)); /* not a tail call */
    return r;
}

__attribute__((noinline)) static double dive_to_signal(double x, int d) {
    entered++;
    x = x * 0.5 + 1.0;
    if (d == 1) {
        bottom = x;
        raise(SIGUSR1);
    }
    double r = dive_to_signal(x, d - 1);
    __asm__ volatile("" : "+x"(r));
    return r;
}

static void on_usr1(int sig) {
    (void)sig;
    siglongjmp(sigenv, 1);
}

__attribute__((noinline)) static double chain(double x, int d) {
    entered++;
    x = x * 0.5 + 1.0;
    if (d > 1) {
        x = chain(x, d - 1);
        __asm__ volatile("" : "+x"(x));
    }
    return x;
}

/* Down and up again: 2 FLOP on the way down, 2 on the way up. */
__attribute__((noinline)) static double deep(double x, int d) {
    entered++;
    x = x * 0.5 + 1.0;
    if (d > 1) x = deep(x, d - 1);
    __asm__ volatile("" : "+x"(x));
    return x * 0.5 + 1.0;
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    double x = 3.0;
    for (long i = 0; i < n; i++) {
        if (setjmp(env) == 0) dive(x, 40);
        x = bottom;
        x = chain(x, 8);
        x = ret_as_jump(x);
        x = through_thunk(half, x);
        x = call_pop(x);
        x = up_two(x);
        if (sigsetjmp(sigenv, 1) == 0) dive_to_signal(x, 30);
        x = bottom;
    }
    x = deep(x, 20000);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    printf("%016llx %ld\n", (unsigned long long)bits, entered);
    return 0;
}
