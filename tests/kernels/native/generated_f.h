/* A function f(x) generated at run time into `code` (one page, writable
 * and executable): x * x, or x + x when `add`; one FLOP a call. Shared by
 * the kernels that rewrite it while they run. */
#include <string.h>

static unsigned char *code;

static void generate(int add) {
    /* mulsd / addsd xmm0, xmm0; ret */
    const unsigned char op[5] = {0xf2, 0x0f, add ? 0x58 : 0x59, 0xc0, 0xc3};
    memcpy(code, op, sizeof op);
}

/* The sum of f(1.5) over `n` calls. */
static double call_n(long n) {
    double (*volatile f)(double) = (double (*)(double))code;
    double s = 0;
    for (long i = 0; i < n; i++) s += f(1.5);
    return s;
}
