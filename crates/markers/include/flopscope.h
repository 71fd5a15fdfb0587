/* flopscope region markers for C and C++ (header-only).
 *
 *   #include "flopscope.h"
 *   FLOPSCOPE_REGION_BEGIN("triad");
 *   for (...) a[i] = b[i] + s * c[i];
 *   FLOPSCOPE_REGION_END("triad");
 *
 * Under `flopscope count` the emulate engine recognises each marker and
 * counts FLOP, bytes and instructions per region (regions may nest, repeat,
 * and be entered by many threads). In flopscope's native timed run the
 * markers record each region's wall time (environment variable
 * FLOPSCOPE_REGION_TIMES names the file). Run on its own, a marker costs one
 * load, one compare and one predictable branch.
 *
 * The marker instruction is `cmp byte ptr cs:ds:[name], kind` (bytes 2e 3e
 * 80 /7 ib): two segment prefixes that compilers never emit, on a load of
 * the name's first byte, so that the engine sees the name's address at run
 * time. Names are C strings (at most 63 bytes are used).
 *
 * Under `flopscope count --engine perf` the hardware counters see the whole
 * program, so the markers read them at region boundaries: the engine lists
 * its core events in FLOPSCOPE_PERF_EVENTS (`type:config[:config1]` in hex,
 * comma-separated), each thread opens them for itself on first use, and at
 * exit one line per region is appended to the file FLOPSCOPE_PERF_REGIONS
 * names: `pid \t entries \t v0,v1,... \t name` (per event, the sum over
 * threads of END - BEGIN, user space only). If the events cannot be opened
 * the thread counts nothing; the program runs on.
 */
#ifndef FLOPSCOPE_H
#define FLOPSCOPE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__x86_64__)
#define FLOPSCOPE__MARK(kind, name) \
    __asm__ volatile(".byte 0x2e, 0x3e\n\tcmpb $" #kind ", (%0)" : : "r"(name) : "cc", "memory")
#else
#define FLOPSCOPE__MARK(kind, name) ((void)(name))
#endif

#define FLOPSCOPE__MAX_REGIONS 256
#define FLOPSCOPE__MAX_THREADS 64
#define FLOPSCOPE__MAX_DEPTH 16
#define FLOPSCOPE__MAX_EVENTS 16

struct flopscope__region {
    char name[64];
    uint64_t entries;
    uint64_t ns[FLOPSCOPE__MAX_THREADS]; /* per thread slot; the last slot is shared */
    uint64_t perf[FLOPSCOPE__MAX_EVENTS]; /* counter sums over threads (perf engine) */
};

struct flopscope__open {
    int region;
    int nested;
    uint64_t start_ns;
    uint64_t perf_start[FLOPSCOPE__MAX_EVENTS];
};

/* One copy per program: weak definitions merge across translation units. */
__attribute__((weak)) int flopscope__timing = -1; /* -1 not yet known, 0 off, 1 on */
__attribute__((weak)) int flopscope__lock = 0;
__attribute__((weak)) int flopscope__nregions = 0;
__attribute__((weak)) int flopscope__nthreads = 0;
__attribute__((weak)) struct flopscope__region flopscope__regions[FLOPSCOPE__MAX_REGIONS];
__attribute__((weak)) __thread int flopscope__slot = -1;
__attribute__((weak)) __thread int flopscope__depth = 0;
__attribute__((weak)) __thread struct flopscope__open flopscope__stack[FLOPSCOPE__MAX_DEPTH];
__attribute__((weak)) int flopscope__perf_n = 0;  /* events listed; 0: perf counting off */
__attribute__((weak)) int flopscope__perf_want = 0; /* FLOPSCOPE_PERF_EVENTS and _REGIONS are set */
__attribute__((weak)) int flopscope__perf_ok = 0; /* some thread opened them */
__attribute__((weak)) __thread int flopscope__perf_state = 0; /* 0 not yet, 1 open, -1 unavailable */
__attribute__((weak)) __thread int flopscope__perf_pid = 0;   /* the process that opened them (fork) */
__attribute__((weak)) __thread int flopscope__perf_fd[FLOPSCOPE__MAX_EVENTS];

static inline uint64_t flopscope__now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void flopscope__put(char **p, const char *s) {
    while (*s) *(*p)++ = *s++;
}

static inline void flopscope__put_u64(char **p, uint64_t v) {
    char d[24];
    int n = 0;
    do { d[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *(*p)++ = d[--n];
}

/* Opens FLOPSCOPE_PERF_EVENTS for the calling thread; on any failure the
 * thread is marked unavailable. A forked child reopens (the fds count its parent). */
__attribute__((weak, noinline)) int flopscope__perf_open(void) {
#ifdef __linux__
    int pid = (int)getpid();
    if (flopscope__perf_state != 0 && flopscope__perf_pid == pid) return flopscope__perf_state > 0;
    flopscope__perf_pid = pid;
    flopscope__perf_state = -1;
    const char *p = getenv("FLOPSCOPE_PERF_EVENTS");
    if (!p) return 0;
    int n = 0;
    while (*p && n < FLOPSCOPE__MAX_EVENTS) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        char *e;
        a.type = (uint32_t)strtoull(p, &e, 16);
        if (*e != ':') break;
        a.config = strtoull(e + 1, &e, 16);
        if (*e == ':') a.config1 = strtoull(e + 1, &e, 16);
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) break;
        flopscope__perf_fd[n++] = fd;
        p = *e == ',' ? e + 1 : e;
    }
    if (*p || n == 0) {
        while (n) close(flopscope__perf_fd[--n]);
        return 0;
    }
    flopscope__perf_n = n;
    __atomic_store_n(&flopscope__perf_ok, 1, __ATOMIC_RELAXED);
    flopscope__perf_state = 1;
    return 1;
#else
    return 0;
#endif
}

/* Reads this thread's counters into v; 0 if they are unavailable. */
static inline int flopscope__perf_read(uint64_t *v) {
    if (!flopscope__perf_want || !flopscope__perf_open()) return 0;
    for (int i = 0; i < flopscope__perf_n; i++)
        if (read(flopscope__perf_fd[i], &v[i], sizeof v[i]) != (ssize_t)sizeof v[i]) return 0;
    return 1;
}

/* Appends one line per region: pid, entries, counter sums, name (see the top). */
__attribute__((weak)) void flopscope__perf_dump(void) {
    const char *path = getenv("FLOPSCOPE_PERF_REGIONS");
    if (!path || !__atomic_load_n(&flopscope__perf_ok, __ATOMIC_RELAXED)) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) return;
    static char buf[FLOPSCOPE__MAX_REGIONS * (96 + 21 * FLOPSCOPE__MAX_EVENTS)];
    char *p = buf;
    for (int r = 0; r < flopscope__nregions; r++) {
        struct flopscope__region *g = &flopscope__regions[r];
        flopscope__put_u64(&p, (uint64_t)getpid()); *p++ = '\t';
        flopscope__put_u64(&p, g->entries); *p++ = '\t';
        for (int i = 0; i < flopscope__perf_n; i++) {
            if (i) *p++ = ',';
            flopscope__put_u64(&p, __atomic_load_n(&g->perf[i], __ATOMIC_RELAXED));
        }
        *p++ = '\t';
        flopscope__put(&p, g->name); *p++ = '\n';
    }
    if (p > buf && write(fd, buf, (size_t)(p - buf)) < 0) { /* nothing to do */ }
    close(fd);
}

/* Writes one line per region: pid, entries, max ns over threads, sum ns, name. */
__attribute__((weak)) void flopscope__dump(void) {
    const char *path = getenv("FLOPSCOPE_REGION_TIMES");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) return;
    static char buf[FLOPSCOPE__MAX_REGIONS * 128];
    char *p = buf;
    for (int r = 0; r < flopscope__nregions; r++) {
        struct flopscope__region *g = &flopscope__regions[r];
        uint64_t max = 0, sum = 0;
        for (int t = 0; t < FLOPSCOPE__MAX_THREADS; t++) {
            uint64_t ns = __atomic_load_n(&g->ns[t], __ATOMIC_RELAXED);
            sum += ns;
            if (ns > max) max = ns;
        }
        flopscope__put_u64(&p, (uint64_t)getpid()); *p++ = '\t';
        flopscope__put_u64(&p, g->entries); *p++ = '\t';
        flopscope__put_u64(&p, max); *p++ = '\t';
        flopscope__put_u64(&p, sum); *p++ = '\t';
        flopscope__put(&p, g->name); *p++ = '\n';
    }
    if (p > buf && write(fd, buf, (size_t)(p - buf)) < 0) { /* nothing to do */ }
    close(fd);
}

static inline int flopscope__region_index(const char *name) {
    int n = __atomic_load_n(&flopscope__nregions, __ATOMIC_ACQUIRE);
    for (int r = 0; r < n; r++)
        if (strncmp(flopscope__regions[r].name, name, 63) == 0) return r;
    while (__atomic_exchange_n(&flopscope__lock, 1, __ATOMIC_ACQUIRE)) { }
    n = flopscope__nregions;
    int found = -1;
    for (int r = 0; r < n; r++)
        if (strncmp(flopscope__regions[r].name, name, 63) == 0) found = r;
    if (found < 0 && n < FLOPSCOPE__MAX_REGIONS) {
        strncpy(flopscope__regions[n].name, name, 63);
        found = n;
        __atomic_store_n(&flopscope__nregions, n + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&flopscope__lock, 0, __ATOMIC_RELEASE);
    return found;
}

/* The timing side of a marker: only called when timing is on or not yet known. */
__attribute__((weak, noinline)) void flopscope__time(int begin, const char *name) {
    if (flopscope__timing < 0) {
        int times = getenv("FLOPSCOPE_REGION_TIMES") != NULL;
        int perf = getenv("FLOPSCOPE_PERF_EVENTS") != NULL && getenv("FLOPSCOPE_PERF_REGIONS") != NULL;
        int on = times || perf;
        int expected = -1;
        if (__atomic_compare_exchange_n(&flopscope__timing, &expected, on, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            if (times) atexit(flopscope__dump);
            if (perf) {
                flopscope__perf_want = 1;
                atexit(flopscope__perf_dump);
            }
        }
        if (!on) return;
    }
    int r = flopscope__region_index(name);
    uint64_t now = begin ? 0 : flopscope__now();
    if (r < 0) return;
    if (flopscope__slot < 0) {
        int s = __atomic_fetch_add(&flopscope__nthreads, 1, __ATOMIC_RELAXED);
        flopscope__slot = s < FLOPSCOPE__MAX_THREADS ? s : FLOPSCOPE__MAX_THREADS - 1;
    }
    if (begin) {
        __atomic_fetch_add(&flopscope__regions[r].entries, 1, __ATOMIC_RELAXED);
        /* A region begun again while open is timed once, by its outermost
         * instance: the inner one records start 0 and adds nothing. */
        int nested = 0;
        for (int d = 0; d < flopscope__depth; d++)
            if (flopscope__stack[d].region == r) nested = 1;
        if (flopscope__depth < FLOPSCOPE__MAX_DEPTH) {
            struct flopscope__open *o = &flopscope__stack[flopscope__depth];
            o->region = r;
            o->nested = nested;
            o->start_ns = nested ? 0 : flopscope__now();
            /* Read last, so that the marker's own work stays outside the region. */
            if (!nested && !flopscope__perf_read(o->perf_start)) o->nested = 1;
            flopscope__depth++;
        }
        return;
    }
    uint64_t perf_end[FLOPSCOPE__MAX_EVENTS];
    int have_perf = flopscope__perf_read(perf_end);
    for (int d = flopscope__depth - 1; d >= 0; d--) {
        if (flopscope__stack[d].region == r) {
            if (flopscope__stack[d].start_ns)
                __atomic_fetch_add(&flopscope__regions[r].ns[flopscope__slot], now - flopscope__stack[d].start_ns,
                                   __ATOMIC_RELAXED);
            if (have_perf && !flopscope__stack[d].nested)
                for (int i = 0; i < flopscope__perf_n; i++)
                    __atomic_fetch_add(&flopscope__regions[r].perf[i], perf_end[i] - flopscope__stack[d].perf_start[i],
                                       __ATOMIC_RELAXED);
            flopscope__depth = d;
            return;
        }
    }
}

/* Begins region `name`: its timing runs before the marker, outside the region. */
static inline void flopscope_region_begin(const char *name) {
    if (__builtin_expect(flopscope__timing != 0, 0)) flopscope__time(1, name);
    FLOPSCOPE__MARK(1, name);
}

/* Ends region `name`: its timing runs after the marker, outside the region. */
static inline void flopscope_region_end(const char *name) {
    FLOPSCOPE__MARK(2, name);
    if (__builtin_expect(flopscope__timing != 0, 0)) flopscope__time(0, name);
}

/* Optional: nothing needs initialising; kept for symmetry with other marker APIs. */
static inline void flopscope_init(void) {}
static inline void flopscope_close(void) {}

#define FLOPSCOPE_INIT() flopscope_init()
#define FLOPSCOPE_CLOSE() flopscope_close()
#define FLOPSCOPE_REGION_BEGIN(name) flopscope_region_begin(name)
#define FLOPSCOPE_REGION_END(name) flopscope_region_end(name)

#ifdef __cplusplus
}
#endif
#endif /* FLOPSCOPE_H */
