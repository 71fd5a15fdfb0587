/* Sets the gs segment base (arch_prctl ARCH_SET_GS), which the native
 * engine keeps for itself: the engine must refuse it clearly.
 *
 *   usage: uses_gs              build: -O2
 *
 * Natively: exits 0. Under the native engine: stopped with a message
 * naming gs and --engine emulate; the report is partial.
 */
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static char area[64];

int main(void) { return syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)area) == 0 ? 0 : 1; }
