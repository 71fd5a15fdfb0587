/* LIKWID's marker API as functions, for programs that call them directly
 * and link with -llikwid (against LIKWID, or against flopscope's own
 * liblikwid built from crates/markers/likwid/likwid.c, whose header comment
 * shows how). The declarations follow LIKWID 5's likwid.h, so a program
 * built with this header also runs against LIKWID's library; only the
 * marker API is declared. As LIKWID's likwid.h does, this header also
 * brings in the marker macros (likwid-marker.h).
 */
#ifndef LIKWID_H
#define LIKWID_H

#ifndef LIKWID_MARKER_INIT
#include "likwid-marker.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

void likwid_markerInit(void);
void likwid_markerThreadInit(void);
void likwid_markerNextGroup(void);
void likwid_markerClose(void);
int likwid_markerWriteFile(const char *markerfile);
int likwid_markerRegisterRegion(const char *regionTag);
int likwid_markerStartRegion(const char *regionTag);
int likwid_markerStopRegion(const char *regionTag);
int likwid_markerResetRegion(const char *regionTag);
/* flopscope's library returns no events, no time and no calls (flopscope
 * reports each region itself). */
void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events, double *time, int *count);

#ifdef __cplusplus
}
#endif
#endif /* LIKWID_H */
