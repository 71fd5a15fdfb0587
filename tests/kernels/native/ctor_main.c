/* Links kernels/native/ctor_work.c's library, whose constructor runs
 * before main, then adds N values of its own.
 *
 *   usage: ctor_main N      build: -O1, linked with the library
 *
 *   flop.total = 2 x 3000 (the constructor) + N (main's adds)
 */
#include <stdio.h>
#include <stdlib.h>

double ctor_result(void);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  volatile double step = 0.25;
  double s = 0.0;
  for (long i = 0; i < n; i++)
    s = s + step;
  printf("%f %f\n", ctor_result(), s);
  return 0;
}
