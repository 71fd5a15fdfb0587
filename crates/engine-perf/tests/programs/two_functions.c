/* Two functions running the same dependent floating-point chain, `heavy`
   three times as many iterations as `light`, so their CPU times are 3:1.
   They alternate, so that frequency changes and interference hit both alike.

   Usage: two_functions ROUNDS N [fork]   (fork: a forked child does the same) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHAIN(count) for (long i = 0; i < (count); i++) x = x * 0.999999 + 1e-7

__attribute__((noinline)) double heavy(double x, long n) {
    CHAIN(3 * n);
    return x;
}

__attribute__((noinline)) double light(double x, long n) {
    CHAIN(n);
    return x;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROUNDS N [fork]\n", argv[0]);
        return 2;
    }
    long rounds = atol(argv[1]), n = atol(argv[2]);
    pid_t child = argc > 3 && strcmp(argv[3], "fork") == 0 ? fork() : -1;
    double x = 1.0;
    for (long r = 0; r < rounds; r++) {
        x = heavy(x, n);
        x = light(x, n);
    }
    if (child == 0)
        return x == 12345.0; /* keeps x live; never true */
    if (child > 0)
        waitpid(child, NULL, 0);
    printf("%g\n", x);
    return 0;
}
