/* flopscope's region markers as functions, for languages that reach C
 * through a foreign-function interface (Python's ctypes, LuaJIT's ffi).
 *
 *   build: gcc -shared -fPIC -O2 -I crates/markers/include -o libmarks.so marks.c
 */
#include "flopscope.h"

void marks_begin(const char *name) { flopscope_region_begin(name); }
void marks_end(const char *name) { flopscope_region_end(name); }
