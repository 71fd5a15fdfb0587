/* Prints the LD_PRELOAD the program sees, in brackets ("[]" when unset or
 * empty): under the native engine, the user's own, without the runtime.
 *
 *   usage: print_ld_preload        build: -O2 [-static]
 */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const char *p = getenv("LD_PRELOAD");
    printf("[%s]\n", p ? p : "");
    return 0;
}
