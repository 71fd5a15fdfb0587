/* Code written, run, rewritten in place and run again, as JIT compilers do.
 * Each phase writes one function `OP xmm0, xmm1; ret` at the start of a page
 * and calls it N times through a pointer:
 *
 *   1. a page mapped writable and executable: ADDSD            N x 1 FLOP add
 *   2. the same bytes rewritten in place: MULPD (2 doubles)    N x 2 FLOP mul
 *   3. W^X as most JITs do (mprotect RW, write, mprotect RX): DIVSD
 *                                                               N x 1 FLOP div
 *   4. code and data on one page: every call is preceded by a write to the
 *      page's second half, the code untouched: SUBSD           N x 1 FLOP sub
 *   5. the page unmapped, a new one mapped at the same address: MULSD
 *                                                               N x 1 FLOP mul
 *
 *   usage: smc N                build: -O2
 *
 * In all (fp64): add N, mul 3N, div N, sub N FLOP, and nothing else: the
 * arguments and the accumulator move without arithmetic.
 */
#include <string.h>
#include <sys/mman.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};
static const unsigned char MULPD[] = {0x66, 0x0f, 0x59, 0xc1, 0xc3};
static const unsigned char DIVSD[] = {0xf2, 0x0f, 0x5e, 0xc1, 0xc3};
static const unsigned char SUBSD[] = {0xf2, 0x0f, 0x5c, 0xc1, 0xc3};
static const unsigned char MULSD[] = {0xf2, 0x0f, 0x59, 0xc1, 0xc3};

static volatile double acc;

static void run(unsigned char *page, long n) {
    fn f = (fn)page;
    for (long i = 0; i < n; i++) acc = f(acc, 1.0);
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    const int rwx = PROT_READ | PROT_WRITE | PROT_EXEC;
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    unsigned char *page = mmap(NULL, 4096, rwx, flags, -1, 0);
    if (page == MAP_FAILED) return 1;

    memcpy(page, ADDSD, sizeof ADDSD);
    run(page, n);

    memcpy(page, MULPD, sizeof MULPD);
    run(page, n);

    if (mprotect(page, 4096, PROT_READ | PROT_WRITE)) return 2;
    memcpy(page, DIVSD, sizeof DIVSD);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) return 3;
    run(page, n);

    if (mprotect(page, 4096, rwx)) return 4;
    memcpy(page, SUBSD, sizeof SUBSD);
    fn f = (fn)page;
    volatile unsigned char *data = page + 2048;
    for (long i = 0; i < n; i++) {
        data[0] = (unsigned char)i;
        acc = f(acc, 1.0);
    }

    if (munmap(page, 4096)) return 5;
    unsigned char *again = mmap(page, 4096, rwx, flags | MAP_FIXED, -1, 0);
    if (again != page) return 6;
    memcpy(page, MULSD, sizeof MULSD);
    run(page, n);
    return 0;
}
