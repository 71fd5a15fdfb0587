/* Helpers shared by the exact-count kernels. Nothing here does floating-point
 * work, so a kernel's whole-program FLOP is exactly the closed form in its
 * header comment.
 *
 * Precision: kernels compute in REAL, double unless built with -DSINGLE.
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdlib.h>

#ifdef SINGLE
#define REAL float
#else
#define REAL double
#endif

/* Square root of a REAL, inline (build with -fno-math-errno: no libm call). */
#define SQRT(x) _Generic((x), float: __builtin_sqrtf, default: __builtin_sqrt)(x)

/* Tells the compiler that the memory behind p is read and written here, so
 * stores before this point happen and nothing is hoisted across it. It emits
 * no instruction. */
static inline void escape(const void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

/* argv[i] as a positive integer, parsed with strtol (integer work only: atof
 * would do floating-point arithmetic). Exits with 64 when missing or invalid. */
static inline long arg_long(int argc, char **argv, int i) {
    if (i >= argc) exit(64);
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v <= 0) exit(64);
    return v;
}

/* With -DWHOLE_REGION (and -I crates/markers/include): the region "program"
 * spans everything from the executable's first constructor to the first
 * exit handler (registered last, run first: before the loader unloads
 * anything), so that two engines that take over at different points and
 * load different libraries can be compared over the same instructions. */
#ifdef WHOLE_REGION
#include "flopscope.h"
static void kernel__end(void) { FLOPSCOPE_REGION_END("program"); }
__attribute__((constructor(101))) static void kernel__begin(void) {
    FLOPSCOPE_REGION_BEGIN("program");
    atexit(kernel__end);
}
#endif

#endif
