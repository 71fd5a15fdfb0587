/* A loop in generated code whose `call` starts OFF bytes before a page
 * boundary and ends on the next page (1 to 4): each of N iterations runs
 * mulsd, nop, nop, call f, f's addsd and ret, dec, jnz (8 instructions,
 * 2 FLOP); then ret: 8 N + 1 instructions, 2 N FLOP, x = 1 + N printed.
 * QEMU 7.2 reads the call's first bytes into the block before it, finds it
 * crossing, and runs it in a block of its own.
 * Usage: page_crossing_call N OFF */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

typedef double (*fn)(double, double, long);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  int off = argc > 2 ? atoi(argv[2]) : 2;
  if (off < 1 || off > 4)
    return 2;
  unsigned char *m = mmap(0, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  unsigned char *f = m + 4096 + 64;
  f[0] = 0xf2; f[1] = 0x0f; f[2] = 0x58; f[3] = 0xc1; /* addsd xmm0, xmm1 */
  f[4] = 0xc3;                                        /* ret */
  unsigned char *p = m + 4096 - off - 6, *top = p;
  *p++ = 0xf2; *p++ = 0x0f; *p++ = 0x59; *p++ = 0xc1; /* mulsd xmm0, xmm1 */
  *p++ = 0x90; *p++ = 0x90;                           /* nop; nop */
  *p++ = 0xe8;                                        /* call f */
  *(int *)p = (int)(f - (p + 4));
  p += 4;
  *p++ = 0x48; *p++ = 0xff; *p++ = 0xcf;              /* dec rdi */
  *p++ = 0x75; *p = (unsigned char)(top - (p + 1)); p++; /* jnz top */
  *p++ = 0xc3;
  printf("%.17g\n", ((fn)top)(1.0, 1.0, n));
  return 0;
}
