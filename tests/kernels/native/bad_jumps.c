/* Jumps to where nothing may run, each a SIGSEGV the program survives: a
 * call through a null pointer, through a non-canonical address, into a
 * data page (mapped, not executable), a direct jump there, a call into a
 * page unmapped before, a return to that page, and a signal handler's
 * return to it: a store to address 0 faults, and the handler moves the
 * context's program counter to that page and returns. The SIGSEGV handler
 * then notes si_code and whether si_addr is the target (0 for the
 * non-canonical one, which faults as a general protection fault), and
 * leaves with siglongjmp. N steps of s = s * 0.5 + 1 (a multiply and an
 * add) come before each jump.
 *
 *   usage: bad_jumps N [die]      build: -O1
 *
 *   prints: one line a jump, "<name> code <si_code> addr <yes|no>", then
 *   the bits of s; with "die", no handler: "before" and the null call kills
 *   the program (SIGSEGV) after N steps
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static sigjmp_buf env;
static volatile int code;
static volatile uintptr_t addr;
static unsigned char data_page[4096] __attribute__((aligned(4096)));

static volatile uintptr_t resume_at;

static void on_segv(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  if (resume_at) {
    ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] = (greg_t)resume_at;
    resume_at = 0;
    return;
  }
  code = si->si_code;
  addr = (uintptr_t)si->si_addr;
  siglongjmp(env, 1);
}

__attribute__((noinline)) static double steps(long n, double s) {
  for (long i = 0; i < n; i++)
    s = s * 0.5 + 1.0;
  return s;
}

typedef void (*fn)(void);

__attribute__((noinline)) static void call_at(uintptr_t where) {
  fn f = (fn)where;
  __asm__ volatile("" : "+r"(f));
  f();
}

__attribute__((noinline, used)) static void jump_to_data(void) {
  __asm__ volatile("jmp data_page");
}

__attribute__((noinline)) static void return_to(uintptr_t where) {
  __asm__ volatile("push %0\n\tret" : : "r"(where) : "memory");
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  double s = 0;
  if (argc > 2 && strcmp(argv[2], "die") == 0) {
    s = steps(n, s);
    printf("before\n");
    fflush(stdout);
    call_at((uintptr_t)(s < 0 ? 1 : 0));
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 4096);
  struct {
    const char *name;
    uintptr_t target;
    int how; /* 0: call, 1: return, 2: a signal handler's return, 3: direct */
  } jumps[] = {
      {"null", 0, 0},
      {"non-canonical", (uintptr_t)1 << 63, 0},
      {"data", (uintptr_t)data_page, 0},
      {"direct", (uintptr_t)data_page, 3},
      {"unmapped", (uintptr_t)gone, 0},
      {"return", (uintptr_t)gone + 64, 1},
      {"sigreturn", (uintptr_t)gone + 128, 2},
  };
  for (unsigned i = 0; i < sizeof jumps / sizeof jumps[0]; i++) {
    s = steps(n, s);
    if (sigsetjmp(env, 1) == 0) {
      if (jumps[i].how == 1) {
        return_to(jumps[i].target);
      } else if (jumps[i].how == 3) {
        jump_to_data();
      } else if (jumps[i].how == 2) {
        resume_at = jumps[i].target;
        *(volatile int *)(uintptr_t)(s < 0) = 1;
      } else {
        call_at(jumps[i].target);
      }
      printf("%s returned\n", jumps[i].name);
    } else {
      uintptr_t expect = jumps[i].target >> 63 ? 0 : jumps[i].target;
      printf("%s code %d addr %s\n", jumps[i].name, code, addr == expect ? "yes" : "no");
    }
  }
  uint64_t bits;
  memcpy(&bits, &s, sizeof bits);
  printf("%016llx\n", (unsigned long long)bits);
  return 0;
}
