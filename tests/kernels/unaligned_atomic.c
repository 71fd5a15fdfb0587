/* T threads, each N iterations of: an add, an atomic add to an int at an
 * odd address, a multiply (x = 1.0, read through a volatile). Under QEMU
 * with more than one thread, the unaligned atomic cannot run in parallel:
 * QEMU leaves the block at it, runs it alone with the other threads
 * stopped, and goes on after it. FLOP: T N adds and T N multiplies; the
 * counter ends at T N (printed).
 * Usage: unaligned_atomic T N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static char buf[64] __attribute__((aligned(64)));
static long n;

static void *work(void *arg) {
  volatile double x = 1.0;
  double s = 0;
  int *counter = (int *)(buf + 1);
  for (long i = 0; i < n; i++) {
    s += x;
    __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
    s *= x;
  }
  return (void *)(long)(s > 0);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  n = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 1 || threads > 64)
    return 2;
  for (int i = 1; i < threads; i++)
    pthread_create(&t[i], 0, work, 0);
  work(0);
  for (int i = 1; i < threads; i++)
    pthread_join(t[i], 0);
  printf("%d\n", *(int *)(buf + 1));
  return 0;
}
