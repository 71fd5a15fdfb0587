/* Creates the file named by its argument: shows whether it ran.
 * Usage: touch PATH */
#include <stdio.h>

int main(int argc, char **argv) {
    FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (f)
        fclose(f);
    return 0;
}
