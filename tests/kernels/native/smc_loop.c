/* A loop that rewrites an instruction of its own block every iteration:
 * `mov [rip+d], al` stores into the opcode byte of the addsd after it, al
 * alternating 0x59 (mulsd) and 0x58 (addsd), N iterations of
 * x = x op 1.0 from 1.0, in a page mapped writable and executable. The
 * processor runs the instruction the store wrote, in the same iteration:
 * mulsd in odd iterations, addsd in even ones, so ceil(N/2) multiplies,
 * floor(N/2) adds and x = 1 + floor(N/2).
 * With "branchy", the loop is three blocks: after the rewritten
 * instruction, `test dil, 1; jz` skips an `addsd xmm2, xmm1` on even
 * counts, and xmm2 (from 0) is added to x at the end: ceil(N/2) + 1 more
 * adds, and x = 1 + N.
 * Usage: smc_loop N [branchy] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
typedef double (*fn)(double,double,long);
int main(int argc, char **argv){
  long n = argc > 1 ? atol(argv[1]) : 1001;
  int branchy = argc > 2 && !strcmp(argv[2], "branchy");
  unsigned char *m=mmap(0,4096,PROT_READ|PROT_WRITE|PROT_EXEC,MAP_PRIVATE|MAP_ANONYMOUS,-1,0),*p=m;
  *p++=0x66;*p++=0x0f;*p++=0xef;*p++=0xd2;            /* pxor xmm2, xmm2 */
  *p++=0xb0;*p++=0x59;                                /* mov al, 0x59 */
  unsigned char *L=p; *p++=0x88;*p++=0x05; unsigned char *disp=p; p+=4;
  *p++=0x34;*p++=0x01;                                /* xor al, 1 */
  unsigned char *tgt=p; *p++=0xf2;*p++=0x0f;*p++=0x58;*p++=0xc1;
  if (branchy) {
    *p++=0x40;*p++=0xf6;*p++=0xc7;*p++=0x01;          /* test dil, 1 */
    *p++=0x74;*p++=0x04;                              /* jz +4 */
    *p++=0xf2;*p++=0x0f;*p++=0x58;*p++=0xd1;          /* addsd xmm2, xmm1 */
  }
  *p++=0x48;*p++=0xff;*p++=0xcf; *p++=0x75;*p=(unsigned char)(L-(p+1)); p++;
  if (branchy) { *p++=0xf2;*p++=0x0f;*p++=0x58;*p++=0xc2; } /* addsd xmm0, xmm2 */
  *p++=0xc3;
  *(int*)disp=(int)((tgt+2)-(disp+4));
  double r=((fn)m)(1.0,1.0,n);
  printf("%.17g\n",r); }
