/* Signal handlers that read and move the program counter in their context,
 * as the JVM's do (it recognizes its own faulting instructions by address
 * and resumes elsewhere), and one that repairs the fault and returns to the
 * same instruction, as page-protection schemes do.
 *
 *   usage: handler_pc N M        build: -O2 -msse2
 *
 * N times each:
 * - a load from address 0 at the instruction labelled fault_at: the SIGSEGV
 *   handler checks that the context's program counter is fault_at (exit 3
 *   if not) and moves it to resume_at (on even rounds) or past the 7-byte
 *   load (odd rounds: the same address);
 * - a store to a page mapped PROT_NONE: the handler makes the page
 *   writable and returns, and the store runs again;
 * then M scalar fp64 adds (ADDSD on a volatile). The handlers do no
 * floating-point work.
 *
 *   flop.fp64 = flop_by_op.add = N M
 *   stdout: "moved N repaired N\n", exit status 0
 */
#define _GNU_SOURCE /* REG_RIP */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "../kernel.h"

extern const char fault_at[], resume_at[];
static volatile double acc = 1.0, one = 1.0;
static volatile long moved, repaired, round_no;
static char *page;

/* The load whose fault the handler skips: `mov eax, [0]`, 7 bytes. */
__attribute__((noinline)) static void load_from_zero(void) {
    __asm__ volatile(".globl fault_at\nfault_at:\n\tmovl 0, %%eax\n.globl resume_at\nresume_at:\n"
                     ::: "eax", "memory");
}

static void on_segv(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    greg_t *pc = &uc->uc_mcontext.gregs[REG_RIP];
    if ((char *)si->si_addr >= page && (char *)si->si_addr < page + 4096) {
        mprotect(page, 4096, PROT_READ | PROT_WRITE);
        repaired++;
        return; /* the store runs again */
    }
    if (*pc != (greg_t)fault_at) {
        static const char msg[] = "handler_pc: the context's program counter is not fault_at\n";
        write(2, msg, sizeof msg - 1);
        _exit(3);
    }
    if (round_no % 2 == 0)
        *pc = (greg_t)resume_at;
    else
        *pc += 7;
    moved++;
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1), m = arg_long(argc, argv, 2);
    page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    for (round_no = 0; round_no < n; round_no++) {
        load_from_zero();
        page[round_no % 4096] = 1;
        mprotect(page, 4096, PROT_NONE);
        for (long i = 0; i < m; i++) acc = acc + one;
    }
    printf("moved %ld repaired %ld\n", (long)moved, (long)repaired);
    return 0;
}
