/* A stand-in for LIKWID's liblikwid.so.5 (which cannot be installed here):
 * its marker functions, C and Fortran, each doing nothing. A program built
 * against it is a program built against LIKWID, as far as the dynamic
 * loader is concerned.
 *
 *   build: gcc -shared -fPIC -Wl,-soname,liblikwid.so.5 -o DIR/liblikwid.so.5 stand_in.c
 *          ln -s liblikwid.so.5 DIR/liblikwid.so
 *
 * Its GetRegion reports 1 call where flopscope's reports none, so that a
 * program can tell which library answered.
 */
void likwid_markerInit(void) {}
void likwid_markerThreadInit(void) {}
void likwid_markerNextGroup(void) {}
void likwid_markerClose(void) {}
int likwid_markerWriteFile(const char *f) { (void)f; return 0; }
int likwid_markerRegisterRegion(const char *t) { (void)t; return 0; }
int likwid_markerStartRegion(const char *t) { (void)t; return 0; }
int likwid_markerStopRegion(const char *t) { (void)t; return 0; }
int likwid_markerResetRegion(const char *t) { (void)t; return 0; }
void likwid_markerGetRegion(const char *t, int *n, double *e, double *time, int *count) {
    (void)t; (void)e;
    *n = 0;
    *time = 0;
    *count = 1;
}

void likwid_markerinit_(void) {}
void likwid_markerthreadinit_(void) {}
void likwid_markerclose_(void) {}
void likwid_markernextgroup_(void) {}
void likwid_markerregisterregion_(const char *t, int len) { (void)t; (void)len; }
void likwid_markerstartregion_(const char *t, int len) { (void)t; (void)len; }
void likwid_markerstopregion_(const char *t, int len) { (void)t; (void)len; }
void likwid_markerresetregion_(const char *t, int len) { (void)t; (void)len; }
