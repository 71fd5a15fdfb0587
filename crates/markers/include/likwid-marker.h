/* LIKWID marker API on flopscope's markers: programs instrumented for
 * LIKWID (`#include <likwid-marker.h>`, built with -DLIKWID_PERFMON) count
 * per region under `flopscope count` without changes. Put this directory
 * before LIKWID's on the include path. Without LIKWID_PERFMON the macros
 * expand to nothing, as LIKWID's own do.
 */
#ifndef FLOPSCOPE_LIKWID_MARKER_H
#define FLOPSCOPE_LIKWID_MARKER_H

#ifdef LIKWID_PERFMON
#include "flopscope.h"
#define LIKWID_MARKER_INIT flopscope_init()
#define LIKWID_MARKER_THREADINIT do { } while (0)
#define LIKWID_MARKER_SWITCH do { } while (0)
#define LIKWID_MARKER_REGISTER(regionTag) do { (void)(regionTag); } while (0)
#define LIKWID_MARKER_START(regionTag) flopscope_region_begin(regionTag)
#define LIKWID_MARKER_STOP(regionTag) flopscope_region_end(regionTag)
#define LIKWID_MARKER_CLOSE flopscope_close()
#define LIKWID_MARKER_RESET(regionTag) do { (void)(regionTag); } while (0)
/* flopscope reports regions itself: GET returns no events. */
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
    do { (void)(regionTag); (void)(events); *(nevents) = 0; *(time) = 0; *(count) = 0; } while (0)
#else
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_CLOSE
#define LIKWID_MARKER_RESET(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#endif

#endif
