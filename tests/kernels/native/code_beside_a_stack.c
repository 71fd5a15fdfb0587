/* Code generated in a page just below a thread's stack, in a mapping of
 * its own (Valgrind lays out its code cache and a stack so): a function
 * f(x) = x * x is generated and called N times, rewritten to x + x and
 * called N times more, by a thread whose stack is the next megabyte.
 *
 *   usage: code_beside_a_stack N        build: -O2 -pthread
 *
 *   prints 5.25 N (the sum of f(1.5)); the generated code executes N
 *   multiplies and N adds; adding up the 2 N results takes 2 N + 2 adds.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define STACK (1L << 20)

#include "generated_f.h"

static long n;
static double sum;

static void *run(void *arg) {
    (void)arg;
    generate(0);
    sum += call_n(n);
    generate(1);
    sum += call_n(n);
    return NULL;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 1000;
    /* One page of code, then the stack: two mappings, told apart by their
     * protection. */
    unsigned char *area = mmap(NULL, 4096 + STACK, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED || mprotect(area, 4096, PROT_READ | PROT_WRITE | PROT_EXEC)) return 2;
    code = area;
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, area + 4096, STACK);
    if (pthread_create(&t, &attr, run, NULL) || pthread_join(t, NULL)) return 2;
    printf("%.2f\n", sum);
    return 0;
}
