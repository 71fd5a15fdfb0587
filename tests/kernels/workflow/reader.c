/* Reads its work from standard input and leaves a trace of every run.
 *
 *   usage: reader TRACE-FILE < N
 *   build: -O2
 *
 * Reads N from stdin, adds 0.5 to a sum N times (N fp64 additions, scalar),
 * appends "N\n" to TRACE-FILE (a side effect: one line per run) and prints
 * "reader: N" on stdout. N missing or invalid: no FLOP, exit 65.
 */
#include <stdio.h>
#include "../kernel.h"

__attribute__((noinline)) static double sum(long n) {
    double s = 0;
    escape(&s); /* s may be anything: the first addition is not folded */
    for (long i = 0; i < n; i++) {
        s += 0.5;
        escape(&s);
    }
    return s;
}

int main(int argc, char **argv) {
    long n = 0;
    if (argc < 2 || scanf("%ld", &n) != 1 || n <= 0) return 65;
    double s = sum(n);
    escape(&s);
    FILE *trace = fopen(argv[1], "a");
    if (!trace) return 66;
    fprintf(trace, "%ld\n", n);
    fclose(trace);
    printf("reader: %ld\n", n);
    return 0;
}
