/* Loads argv[1] with dlopen, runs its plug_work for argv[2] seconds of CPU
 * time, and leaves with _exit (no exit handlers, no library destructors). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void (*work)(double) = (void (*)(double))dlsym(lib, "plug_work");
    if (!work) return 1;
    work(atof(argv[2]));
    _exit(0);
}
