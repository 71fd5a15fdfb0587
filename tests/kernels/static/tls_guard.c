/* The program's own thread state stays its own while the native engine's
 * runtime works on its threads (a statically linked program: the runtime
 * switches `fs` to a thread block of its host's; see hostfs.rs).
 *
 *   usage: tls_guard THREADS N      build: -O2 -msse2 -pthread [-static]
 *
 * Main and THREADS threads each fill a thread-local array with a pattern of
 * their own, set errno to a value of their own and note the stack
 * protector's canary (fs:0x28), then N times make system calls the native
 * engine performs in its dispatcher (munmap of nothing, mprotect of a page
 * of its own, a signal action read back, brk(0), arch_prctl(ARCH_GET_FS),
 * made with the `syscall` instruction itself, so that errno is the
 * program's alone), do one scalar fp64 add (ADDSD on a volatile), and check
 * the array, errno, the canary, and that ARCH_GET_FS gave the thread
 * pointer (fs:0 in glibc and musl). Any change: exit status 1 (and a line
 * on stderr), else 0.
 *
 *   flop.fp64 = flop_by_op.add = (THREADS + 1) N
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../kernel.h"

#define WORDS 512
static __thread unsigned long mine[WORDS];
#define ARCH_GET_FS 0x1003 /* asm/prctl.h, which musl-gcc does not see */

static long n_iter;
static char *page;
static volatile int bad;

static long raw(long nr, long a, long b, long c, long d) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
}

static unsigned long thread_pointer(void) {
    unsigned long p;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(p));
    return p;
}

static unsigned long canary(void) {
    unsigned long c;
    __asm__ volatile("mov %%fs:0x28, %0" : "=r"(c));
    return c;
}

static void *work(void *arg) {
    unsigned long id = (unsigned long)arg + 1;
    for (int i = 0; i < WORDS; i++) mine[i] = id * 0x9e3779b97f4a7c15ul + i;
    errno = 1000 + (int)id;
    unsigned long c = canary();
    volatile double acc = 0.0, one = 1.0;
    for (long k = 0; k < n_iter; k++) {
        unsigned long old[4], fs = 0;
        raw(SYS_munmap, 0, 0, 0, 0);
        if (raw(SYS_mprotect, (long)page, 4096, PROT_READ | PROT_WRITE, 0) != 0) bad = 1;
        raw(SYS_rt_sigaction, SIGUSR1, 0, (long)old, 8);
        raw(SYS_brk, 0, 0, 0, 0);
        if (raw(SYS_arch_prctl, ARCH_GET_FS, (long)&fs, 0, 0) != 0 || fs != thread_pointer()) bad = 5;
        acc = acc + one;
        for (int i = 0; i < WORDS; i++)
            if (mine[i] != id * 0x9e3779b97f4a7c15ul + i) bad = 2;
        if (errno != 1000 + (int)id) bad = 3;
        if (canary() != c) bad = 4;
    }
    return NULL;
}

int main(int argc, char **argv) {
    long threads = arg_long(argc, argv, 1);
    n_iter = arg_long(argc, argv, 2);
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pthread_t t[64];
    if (threads > 64) return 64;
    for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, (void *)(i + 1));
    work((void *)0);
    for (long i = 0; i < threads; i++) pthread_join(t[i], NULL);
    if (bad) fprintf(stderr, "tls_guard: thread state changed (case %d)\n", bad);
    return bad ? 1 : 0;
}
