/* Signal masks changed in a loop, the ways programs change them: N rounds
 * of blocking SIGUSR1 (pthread_sigmask), raising it (held back), a
 * multiply and an add (x = x * a + b), and restoring the mask (the
 * handler runs then). Then rt_sigprocmask with bad pointers (EFAULT), a
 * query (no new set), and SIG_UNBLOCK. Prints what a program sees.
 *
 *   usage: sigmask_calls N      build: -O1 (no FMA contraction)
 *
 *   flop.total = 2 N; prints the handler's count (N), the errnos (EFAULT
 *   twice) and whether SIGUSR1 is blocked at each step
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled++; }

static int blocked(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  return sigismember(&now, sig);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  signal(SIGUSR1, on_usr1);
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  volatile double a = 1.0001, b = 0.5;
  double x = 1.0;
  int held = 0;
  for (long i = 0; i < n; i++) {
    pthread_sigmask(SIG_BLOCK, &usr1, &old);
    raise(SIGUSR1);
    held += handled == i;
    x = x * a + b;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  printf("%f handled %d held %d\n", x, (int)handled, held);
  long r = syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, 8);
  printf("bad set: %ld errno %d\n", r, r ? errno : 0);
  r = syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, (void *)8, 8);
  printf("bad old set: %ld errno %d\n", r, r ? errno : 0);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  printf("blocked %d\n", blocked(SIGUSR1));
  pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
  printf("blocked %d\n", blocked(SIGUSR1));
  return 0;
}
