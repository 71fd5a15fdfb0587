/* AMX tiles live across the engine's own work: a TDPBF16PS loop, its tile
 * state in use, while SIGALRM arrives every 100 us (a handler that adds
 * doubles) and new code is reached in the loop (each translation enters
 * the engine's dispatcher, which saves and restores the whole XSAVE state:
 * with AMX, 8 KiB of tile data beyond the AVX-512 state).
 *
 *   usage: amx_tiles REPS       build: -O2 -mamx-tile -mamx-bf16
 *
 * C = A B over bf16 tiles of ones (16 rows of 32 pairs): each element of C
 * gains 32 per TDPBF16PS, so C[0][0] = 32 REPS and the tile sum is 256 x
 * 32 REPS. FLOP (the TDPBF16PS are AMX, not FLOP): REPS fp64 adds in the
 * loop and 4 per signal handled, in region "tiles"; it prints C[0][0],
 * the tile sum and the number of signals handled.
 */
#include <immintrin.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include "flopscope.h"

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed));

static uint16_t a[16 * 32], b[16 * 32];
static float c[16 * 16];
static volatile long handled;
static volatile double hsum;

static void on_alarm(int sig) {
    (void)sig;
    double x = hsum;
    for (int i = 0; i < 4; i++)
        x += 0.25;
    hsum = x;
    handled++;
}

/* A few functions reached for the first time inside the loop: each is
 * translated then, with the tile state in use. */
#define STEP(n) __attribute__((noinline)) static double step##n(double v) { return v + 1.0; }
STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
static double (*const steps[8])(double) = {step0, step1, step2, step3, step4, step5, step6, step7};

int main(int argc, char **argv) {
    long reps = argc > 1 ? atol(argv[1]) : 20000;
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
        return 3;
    for (int i = 0; i < 16 * 32; i++)
        a[i] = b[i] = 0x3f80; /* bf16 1.0 */
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 3; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 100}, {0, 100}};
    FLOPSCOPE_REGION_BEGIN("tiles");
    setitimer(ITIMER_REAL, &every, NULL);
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, b, 64);
    double acc = 0.0;
    for (long r = 0; r < reps; r++) {
        _tile_dpbf16ps(0, 1, 2);
        if (r % (reps / 8 + 1) == 0)
            acc = steps[(r / (reps / 8 + 1)) % 8](acc) - 1.0; /* 2 adds, counted below */
        else
            acc += 1.0;
    }
    _tile_stored(0, c, 64);
    _tile_release();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    FLOPSCOPE_REGION_END("tiles");
    double total = 0.0;
    for (int i = 0; i < 256; i++)
        total += c[i];
    printf("%.0f %.0f %ld %.0f\n", c[0], total, handled, acc);
    return 0;
}
