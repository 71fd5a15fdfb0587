/* C side of the Fortran module: compile it with the program
 * (gfortran flopscope.f90 prog.f90 flopscope_fortran.c   (the module first)). The marker runs here,
 * with the name's address in a register, so any name works. */
#include "../include/flopscope.h"

void flopscope_region_begin_f(const char *name) { flopscope_region_begin(name); }
void flopscope_region_end_f(const char *name) { flopscope_region_end(name); }
