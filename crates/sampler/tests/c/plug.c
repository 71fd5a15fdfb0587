/* A library the host program loads with dlopen after start-up. */
#include "burn.h"

NOINLINE void plug_work(double s) {
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}
