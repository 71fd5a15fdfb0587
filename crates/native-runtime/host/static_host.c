/* The host of a statically linked program under flopscope's native engine.
 *
 * A static program has no dynamic loader for the runtime to be preloaded
 * through. flopscope runs this small dynamically linked executable instead,
 * with the runtime preloaded (LD_PRELOAD), the program's own argv, and
 * FLOPSCOPE_NATIVE_STATIC naming the program: the runtime's constructor
 * maps the program, turns this process's initial stack into the program's
 * and starts it at its entry point (crates/native-runtime/src/loader.rs).
 * main runs only if that did not happen: the runtime was not preloaded, or
 * could not load the program (it said why on stderr).
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *program = getenv("FLOPSCOPE_NATIVE_STATIC");
    fprintf(stderr,
            "flopscope: the native engine's host of statically linked programs ran without "
            "starting %s: it runs under `flopscope count --engine native` only\n",
            program ? program : "a program");
    return 127;
}
