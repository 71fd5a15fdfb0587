/* A program that does not use LIKWID: prints the LD_PRELOAD it was started
 * with (or "-"), so that a test can see that flopscope preloaded nothing
 * for LIKWID into it. No floating-point work. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const char *p = getenv("LD_PRELOAD");
    printf("LD_PRELOAD=%s\n", p ? p : "-");
    return 0;
}
