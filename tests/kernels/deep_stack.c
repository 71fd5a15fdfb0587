/* A recursion N calls deep, each frame holding a 1 KiB array: about N KiB
 * of stack (50,000 calls: some 55 MiB, more than the 8 MiB QEMU gives a
 * guest by default).
 *
 *   usage: deep_stack N       build: -O1
 *
 * FLOP: N fp64 adds (one per return); it prints N + (N mod 256) (the
 * deepest frame's byte, counted down the frames and wrapping at 256).
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double down(long n, volatile unsigned char *prev) {
    volatile unsigned char pad[1024];
    pad[0] = prev ? (unsigned char)(prev[0] + 1) : 0;
    if (n == 0)
        return pad[0];
    return down(n - 1, pad) + 1.0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 50000;
    printf("%.0f\n", down(n, 0));
    return 0;
}
