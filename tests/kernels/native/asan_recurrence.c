/* Built with a sanitizer: N multiplies and N adds (x = x * a + b), each
 * result stored in a heap array of N doubles, the last printed. With a
 * second argument "overflow" it then stores one element past the array's
 * end, which AddressSanitizer reports before it stops the program (exit 1,
 * or the `exitcode` of ASAN_OPTIONS).
 *
 *   usage: asan_recurrence N [overflow]
 *   build: -O1 -fsanitize=address or -fsanitize=thread (no FMA contraction)
 *
 *   flop.total = 2 N, exit_status = 0 (1 or exitcode with "overflow")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  double *xs = malloc(n * sizeof *xs);
  volatile double a = 1.0001, b = 0.5; double x = 1.0;
  for (long i = 0; i < n; i++) xs[i] = x = x * a + b;
  printf("%f\n", xs[n - 1]);
  if (argc > 2 && !strcmp(argv[2], "overflow")) {
    volatile double *v = xs; /* a store the compiler keeps before free */
    v[n] = x;
  }
  free(xs);
  return 0;
}
