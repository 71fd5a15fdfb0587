/* Generates code at run time: writes `addsd xmm0, xmm1; ret` into a page
 * mapped writable and executable, and calls it N times.
 *
 *   usage: jit N                build: -O2
 *
 * Natively: N ADDSD, exit status 0. The native engine translates code once
 * and cannot follow code rewritten later, so it must say that the program
 * executes code from a writable mapping and mark the report incomplete.
 */
#include <string.h>
#include <sys/mman.h>
#include "../kernel.h"

typedef double (*fn)(double, double);

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    static const unsigned char code[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3}; /* addsd xmm0, xmm1; ret */
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    memcpy(page, code, sizeof code);
    fn add = (fn)page;
    volatile double acc = 0.0;
    for (long i = 0; i < n; i++) acc = add(acc, 1.0);
    return 0;
}
