/* Libraries loaded, run, unloaded and loaded again: under the native engine
 * the unloaded code's translations are forgotten (munmap), so a library
 * mapped where another one was runs its own code, counted as its own.
 *
 *   usage: dlopen_twice N LIB...        build: -O2
 *
 * For each LIB in order: dlopen it, call its `work(N)`, dlclose it. The
 * libraries are built from work_add.c (N fp64 adds) and work_mul.c (N fp64
 * multiplies); the program itself does no floating-point work.
 *
 *   with LIBs add, mul, add: flop_by_op.add = 2 N, flop_by_op.mul = N
 *   exit status 0; 66 when a library cannot be loaded
 */
#include <dlfcn.h>
#include <stdio.h>
#include "../kernel.h"

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    for (int i = 2; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen_twice: %s\n", dlerror());
            return 66;
        }
        void (*work)(long) = (void (*)(long))dlsym(h, "work");
        if (!work) {
            fprintf(stderr, "dlopen_twice: %s has no work(): %s\n", argv[i], dlerror());
            return 66;
        }
        work(n);
        dlclose(h);
    }
    return 0;
}
