/* The address of a faulting instruction, as a handler sees it: a division
 * by zero trapped as SIGFPE (unmasked in MXCSR) and a `ud2` as SIGILL. The
 * handler prints si_addr and the context's program counter, each as an
 * offset into the function that faulted, then resumes after the `ud2`
 * (SIGILL) or leaves with siglongjmp (SIGFPE). N divisions come first.
 *
 *   usage: fault_address N      build: -O1
 *
 *   prints: the sum, then "SIGFPE at divide+A (context divide+B)" and
 *   "SIGILL at illegal+C (context illegal+D)", the same counted as natively
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <xmmintrin.h>

static sigjmp_buf env;

__attribute__((noinline)) double divide(double a, double b) { return a / b; }
__attribute__((noinline)) void illegal(void) { __asm__ volatile("ud2"); }

static void report(const char *name, const char *fn_name, void *fn, siginfo_t *si, ucontext_t *uc) {
  long at = (char *)si->si_addr - (char *)fn;
  long rip = (char *)uc->uc_mcontext.gregs[REG_RIP] - (char *)fn;
  printf("%s at %s+%ld (context %s+%ld)\n", name, fn_name, at, fn_name, rip);
}

static void on_fpe(int sig, siginfo_t *si, void *uc) {
  report("SIGFPE", "divide", (void *)divide, si, uc);
  siglongjmp(env, 1);
}

static void on_ill(int sig, siginfo_t *si, void *ucp) {
  ucontext_t *uc = ucp;
  report("SIGILL", "illegal", (void *)illegal, si, uc);
  uc->uc_mcontext.gregs[REG_RIP] += 2; /* past the ud2 */
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  struct sigaction sa = {0};
  sa.sa_flags = SA_SIGINFO;
  sa.sa_sigaction = on_fpe;
  sigaction(SIGFPE, &sa, 0);
  sa.sa_sigaction = on_ill;
  sigaction(SIGILL, &sa, 0);
  volatile double s = 0;
  for (long i = 1; i <= n; i++) s = s + divide(1.0, (double)i);
  printf("%.6f\n", s);
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr & ~_MM_MASK_DIV_ZERO);
  if (sigsetjmp(env, 1) == 0) s = divide(1.0, 0.0);
  _mm_setcsr(csr);
  illegal();
  fflush(stdout);
  return 0;
}
