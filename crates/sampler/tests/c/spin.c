/* argv[1]: "forever" spins in spin_forever until killed; "own-handler"
 * installs its own SIGPROF handler, spins argv[2] seconds of CPU time and
 * prints how many SIGPROFs it received. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "burn.h"

NOINLINE void spin_forever(void) {
    for (;;) BURN(100000);
}
NOINLINE void spin_for(double s) {
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}

static volatile sig_atomic_t received;
static void on_prof(int sig) {
    (void)sig;
    received++;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "forever") == 0) spin_forever();
    if (argc > 2 && strcmp(argv[1], "own-handler") == 0) {
        signal(SIGPROF, on_prof);
        spin_for(atof(argv[2]));
        printf("received %d\n", (int)received);
        return 0;
    }
    return 2;
}
