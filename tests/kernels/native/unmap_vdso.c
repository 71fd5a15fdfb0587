/* Unmaps the vDSO (as Valgrind does as it starts), then N multiplies and N
 * adds (x = x * 1.0001 + 0.5), the result printed; it never calls the
 * vDSO after. Exit 2 if there is no [vdso] to unmap.
 *
 *   usage: unmap_vdso N        build: -O1 (no FMA contraction)
 *
 *   flop.total = 2 N, exit_status = 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  FILE *f = fopen("/proc/self/maps", "r"); char line[512]; unsigned long lo = 0, hi = 0;
  while (fgets(line, sizeof line, f)) if (strstr(line, "[vdso]")) sscanf(line, "%lx-%lx", &lo, &hi);
  fclose(f);
  if (!lo || munmap((void *)lo, hi - lo)) return 2;
  volatile double a = 1.0001, b = 0.5; double x = 1.0;
  for (long i = 0; i < n; i++) x = x * a + b;
  printf("%f\n", x);
  return 0;
}
