/* System calls that write into a page holding code the program has run, as
 * JIT compilers that keep code and data together do (Racket's Chez Scheme
 * reads its boot files into such pages). Two pages mapped writable and
 * executable, one function `ADDSD xmm0, xmm1; ret` at the start of the
 * second, called N times before the first call and after each of these,
 * each writing the second page (the code itself untouched):
 *
 *   1. read from a file           5. read of 300 bytes starting 100 bytes
 *   2. pread64 from a file           before the page (the first page then
 *   3. readv, two vectors            the code's)
 *   4. fstat                      6. read from a pipe
 *                                 7. clock_gettime, as a system call
 *
 * Each call must do natively what it does under any engine: return the
 * whole count, the same bytes as a read into an ordinary buffer. Then
 * (8) a read into the page from an empty pipe is interrupted by a timer's
 * signal: EINTR with a handler without SA_RESTART; with SA_RESTART, the
 * handler runs and the read goes on until a child writes a byte; the
 * function is called N times again. Last (9), a read from a pipe writes
 * new code over the function, `MULSD xmm0, xmm1; ret`, called N times:
 * its translation must be of the new bytes.
 *
 *   usage: kernel_writes N      build: -O2
 *   exit status: 0, or 10 + the number of the call that went wrong
 *
 * In all (fp64): 9N FLOP add, N mul, and nothing else.
 */
#define _GNU_SOURCE
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};
static const unsigned char MULSD[] = {0xf2, 0x0f, 0x59, 0xc1, 0xc3};

static volatile double acc;

static volatile int alarms;

static void on_alarm(int sig) {
    (void)sig;
    alarms++;
}

/* A read into `buf` from an empty pipe, interrupted 50 ms in. */
static ssize_t interrupted_read(int flags, unsigned char *buf, int *err) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    if (sigaction(SIGALRM, &sa, NULL)) return -2;
    int p[2];
    if (pipe(p)) return -2;
    if (flags & SA_RESTART) {
        pid_t child = fork();
        if (child < 0) return -2;
        if (child == 0) {
            usleep(300000);
            _exit(write(p[1], "x", 1) != 1);
        }
    }
    struct itimerval t = {{0, 0}, {0, 50000}};
    if (setitimer(ITIMER_REAL, &t, NULL)) return -2;
    ssize_t r = read(p[0], buf, 16);
    *err = errno;
    return r;
}

static void run(fn f, long n) {
    for (long i = 0; i < n; i++) acc = f(acc, 1.0);
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    const int rwx = PROT_READ | PROT_WRITE | PROT_EXEC;
    unsigned char *two = mmap(NULL, 8192, rwx, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (two == MAP_FAILED) return 1;
    unsigned char *page = two + 4096;
    memcpy(page, ADDSD, sizeof ADDSD);
    fn f = (fn)page;
    run(f, n);

    int fd = open(argv[0], O_RDONLY);
    if (fd < 0) return 2;
    static unsigned char want[512];
    if (pread(fd, want, sizeof want, 0) != (ssize_t)sizeof want) return 3;

    if (read(fd, page + 2048, 256) != 256 || memcmp(page + 2048, want, 256)) return 11;
    run(f, n);

    if (pread(fd, page + 1024, 512, 0) != 512 || memcmp(page + 1024, want, 512)) return 12;
    run(f, n);

    struct iovec iov[2] = {{page + 512, 100}, {page + 3000, 156}};
    if (pread(fd, want, 256, 0) != 256 || lseek(fd, 0, SEEK_SET) != 0) return 4;
    if (readv(fd, iov, 2) != 256 || memcmp(page + 512, want, 100) ||
        memcmp(page + 3000, want + 100, 156))
        return 13;
    run(f, n);

    struct stat plain, *in_page = (struct stat *)(page + 1024);
    if (fstat(fd, &plain) || fstat(fd, in_page) || in_page->st_size != plain.st_size) return 14;
    run(f, n);

    if (lseek(fd, 0, SEEK_SET) != 0) return 5;
    if (read(fd, page - 100, 300) != 300 || memcmp(page - 100, want, 300)) return 15;
    /* The read wrote the code's first bytes over: put them back. */
    memcpy(page, ADDSD, sizeof ADDSD);
    run(f, n);

    int p[2];
    if (pipe(p) || write(p[1], want, 100) != 100) return 6;
    if (read(p[0], page + 3500, 100) != 100 || memcmp(page + 3500, want, 100)) return 16;
    run(f, n);

    struct timespec *ts = (struct timespec *)(page + 4000);
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts) != 0 || ts->tv_sec == 0) return 17;
    run(f, n);

    int err = 0;
    if (interrupted_read(0, page + 2048, &err) != -1 || err != EINTR || alarms != 1) return 18;
    if (interrupted_read(SA_RESTART, page + 2048, &err) != 1 || page[2048] != 'x' || alarms != 2)
        return 18;
    run(f, n);

    int q[2];
    if (pipe(q) || write(q[1], MULSD, sizeof MULSD) != sizeof MULSD) return 7;
    if (read(q[0], page, sizeof MULSD) != sizeof MULSD) return 19;
    run(f, n);
    return 0;
}
