/* LIKWID's marker functions on flopscope's region markers: a small shared
 * library for programs that call LIKWID's marker API as functions
 * (likwid_markerStartRegion("name"), ...) and link with -llikwid.
 *
 * Build it as a stand-in for LIKWID's liblikwid.so.5 and link against it:
 *
 *   gcc -shared -fPIC -O2 -fvisibility=hidden -Wl,-soname,liblikwid.so.5 \
 *       -o lib/liblikwid.so.5 crates/markers/likwid/likwid.c
 *   ln -sf liblikwid.so.5 lib/liblikwid.so
 *   gcc -O2 -I crates/markers/include app.c -L lib -Wl,-rpath,$PWD/lib -llikwid
 *
 * (include/likwid.h declares these functions, as LIKWID's likwid.h does.)
 * The soname is LIKWID's, so the program runs against either library.
 *
 * flopscope also embeds this file, built with another soname, and preloads
 * it into counted programs that call these functions from LIKWID's own
 * library: its definitions then take the calls over (see the README's
 * Regions section).
 *
 * Start and stop are flopscope_region_begin/_end of include/flopscope.h:
 * the same marker instruction, so both engines count the regions exactly as
 * with the header's macros, and the same timing in flopscope's native timed
 * run. Everything else LIKWID's marker API does (event groups, per-region
 * counter results, its output file) belongs to likwid-perfctr, which is not
 * running: those functions do nothing and report no events. The library's
 * own copy of the header's state is private (-fvisibility=hidden); only the
 * functions below are exported.
 *
 * Signatures: LIKWID 5's likwid.h (Marker API module); the Fortran entry
 * points are those gfortran calls for LIKWID's Fortran module (lower case,
 * a trailing underscore, the name's length passed after the arguments).
 */
#include <errno.h>

#include "../include/flopscope.h"
#include "../include/likwid.h"

#define FLOPSCOPE_LIKWID_API __attribute__((visibility("default")))

/* Tells flopscope that the program's likwid_marker* calls already reach
 * flopscope's markers (nothing to take over). */
FLOPSCOPE_LIKWID_API const char flopscope_likwid_markers[] = "flopscope region markers for LIKWID's marker API";

FLOPSCOPE_LIKWID_API void likwid_markerInit(void) {}
FLOPSCOPE_LIKWID_API void likwid_markerThreadInit(void) {}
FLOPSCOPE_LIKWID_API void likwid_markerNextGroup(void) {}
FLOPSCOPE_LIKWID_API void likwid_markerClose(void) {}

FLOPSCOPE_LIKWID_API int likwid_markerWriteFile(const char *markerfile) {
    (void)markerfile;
    return 0;
}

FLOPSCOPE_LIKWID_API int likwid_markerRegisterRegion(const char *regionTag) {
    (void)regionTag;
    return 0;
}

FLOPSCOPE_LIKWID_API int likwid_markerStartRegion(const char *regionTag) {
    if (!regionTag) return -EINVAL;
    flopscope_region_begin(regionTag);
    return 0;
}

FLOPSCOPE_LIKWID_API int likwid_markerStopRegion(const char *regionTag) {
    if (!regionTag) return -EINVAL;
    flopscope_region_end(regionTag);
    return 0;
}

/* flopscope's counts cannot be taken back: a reset changes nothing. */
FLOPSCOPE_LIKWID_API int likwid_markerResetRegion(const char *regionTag) {
    (void)regionTag;
    return 0;
}

/* No events, no time, no calls: flopscope reports regions itself. */
FLOPSCOPE_LIKWID_API void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events, double *time,
                                                 int *count) {
    (void)regionTag;
    (void)events;
    if (nr_events) *nr_events = 0;
    if (time) *time = 0;
    if (count) *count = 0;
}

/* A Fortran name (blank-padded, not terminated) as a C string, cut to the
 * 63 bytes a marker uses. */
static void flopscope_likwid_name(char out[64], const char *tag, int len) {
    int n = len < 0 ? 0 : len > 63 ? 63 : len;
    while (n > 0 && tag[n - 1] == ' ') n--;
    memcpy(out, tag, (size_t)n);
    out[n] = 0;
}

FLOPSCOPE_LIKWID_API void likwid_markerinit_(void) {}
FLOPSCOPE_LIKWID_API void likwid_markerthreadinit_(void) {}
FLOPSCOPE_LIKWID_API void likwid_markernextgroup_(void) {}
FLOPSCOPE_LIKWID_API void likwid_markerclose_(void) {}

FLOPSCOPE_LIKWID_API void likwid_markerregisterregion_(const char *regionTag, int len) {
    (void)regionTag;
    (void)len;
}

FLOPSCOPE_LIKWID_API void likwid_markerstartregion_(const char *regionTag, int len) {
    char name[64];
    flopscope_likwid_name(name, regionTag, len);
    flopscope_region_begin(name);
}

FLOPSCOPE_LIKWID_API void likwid_markerstopregion_(const char *regionTag, int len) {
    char name[64];
    flopscope_likwid_name(name, regionTag, len);
    flopscope_region_end(name);
}

FLOPSCOPE_LIKWID_API void likwid_markerresetregion_(const char *regionTag, int len) {
    (void)regionTag;
    (void)len;
}

FLOPSCOPE_LIKWID_API void likwid_markergetregion_(const char *regionTag, int *nr_events, double *events, double *time,
                                                  int *count, int len) {
    (void)len;
    likwid_markerGetRegion(regionTag, nr_events, events, time, count);
}
