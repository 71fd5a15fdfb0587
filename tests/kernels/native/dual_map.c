/* Code written through a second mapping of the same memory, as JIT
 * compilers keeping W^X do (Erlang's BEAM, .NET): one view of a shared
 * memory file is readable and executable, the other readable and
 * writable, and the program writes code through the second and runs it
 * through the first. Each phase writes one function `OP xmm0, xmm1; ret`
 * at the start of the page and calls it N times:
 *
 *   1. written through the writable view: ADDSD                N x 1 FLOP add
 *   2. rewritten in place through it: MULPD (2 doubles)        N x 2 FLOP mul
 *   3. the writable view unmapped and mapped again elsewhere,
 *      the code rewritten through the new view: DIVSD          N x 1 FLOP div
 *
 *   usage: dual_map N           build: -O2
 *
 * In all (fp64): add N, mul 2N, div N FLOP, and nothing else.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};
static const unsigned char MULPD[] = {0x66, 0x0f, 0x59, 0xc1, 0xc3};
static const unsigned char DIVSD[] = {0xf2, 0x0f, 0x5e, 0xc1, 0xc3};

static volatile double acc;

static void run(const unsigned char *code, long n) {
    fn f = (fn)code;
    for (long i = 0; i < n; i++) acc = f(acc, 1.0);
}

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    int fd = memfd_create("code", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0) return 1;
    unsigned char *rx = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    unsigned char *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rx == MAP_FAILED || rw == MAP_FAILED) return 2;

    memcpy(rw, ADDSD, sizeof ADDSD);
    run(rx, n);

    memcpy(rw, MULPD, sizeof MULPD);
    run(rx, n);

    if (munmap(rw, 4096) != 0) return 3;
    rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rw == MAP_FAILED) return 4;
    memcpy(rw, DIVSD, sizeof DIVSD);
    run(rx, n);
    return 0;
}
