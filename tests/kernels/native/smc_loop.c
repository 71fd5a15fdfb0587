/* A loop of one block that rewrites an instruction of its own every
 * iteration: `mov [rip+d], al` stores into the opcode byte of the addsd
 * after it, al alternating 0x59 (mulsd) and 0x58 (addsd), N iterations of
 * x = x op 1.0 from 1.0, in a page mapped writable and executable.
 * Natively the store changes the instruction of its own iteration: mulsd
 * in odd iterations. The native engine runs a block's rewritten
 * instructions from its next execution on (the README's limit): iteration
 * 1 runs the original addsd and each later one the instruction the one
 * before wrote, so ceil(N/2) adds and floor(N/2) multiplies; never the
 * same instruction for good.
 * Usage: smc_loop N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
typedef double (*fn)(double,double,long);
int main(int argc, char **argv){
  long n = argc > 1 ? atol(argv[1]) : 1001;
  unsigned char *m=mmap(0,4096,PROT_READ|PROT_WRITE|PROT_EXEC,MAP_PRIVATE|MAP_ANONYMOUS,-1,0),*p=m;
  *p++=0xb0;*p++=0x59;
  unsigned char *L=p; *p++=0x88;*p++=0x05; unsigned char *disp=p; p+=4;
  *p++=0x34;*p++=0x01;
  unsigned char *tgt=p; *p++=0xf2;*p++=0x0f;*p++=0x58;*p++=0xc1;
  *p++=0x48;*p++=0xff;*p++=0xcf; *p++=0x75;*p=(unsigned char)(L-(p+1)); p++; *p++=0xc3;
  *(int*)disp=(int)((tgt+2)-(disp+4));
  double r=((fn)m)(1.0,1.0,n);
  printf("%.17g\n",r); }
