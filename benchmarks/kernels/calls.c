/* Calls and returns on a chain: each iteration calls a one-line function
 * eight times, each call's argument the result of the one before, so the
 * loop runs at the latency of call, body and return. Under the native
 * engine every return is an indirect branch with code of its own; what
 * that code adds to the result register's path shows here first.
 *
 *   usage: calls N        (N iterations, 8 N calls; prints the sum)
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) long step(long x) { return x * 3 + 1; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += step(i);
        s += step(s);
        s += step(i);
        s += step(s);
        s += step(i);
        s += step(s);
        s += step(i);
        s += step(s);
    }
    printf("%ld\n", s);
    return 0;
}
