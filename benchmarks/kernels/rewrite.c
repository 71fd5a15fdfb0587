/* Code rewritten and run again, as a JIT compiler reusing a buffer does:
 * N rounds of writing a new constant into a small function (mov eax,
 * imm32; ret) and calling it. Under the native engine each write faults
 * (the page holds translated code) and each call translates the function
 * anew (the cost measured: a fault and a translation a round, and no
 * more however many rounds came before).
 *
 *   usage: rewrite N           build: -O2
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return 2;
    long sum = 0;
    for (long i = 0; i < n; i++) {
        int v = (int)i;
        code[0] = 0xb8; /* mov eax, imm32 */
        memcpy(code + 1, &v, sizeof v);
        code[5] = 0xc3; /* ret */
        __asm__ volatile("" : : "r"(code) : "memory");
        sum += ((int (*)(void))code)();
    }
    return sum != (long)n * (n - 1) / 2;
}
