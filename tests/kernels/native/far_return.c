/* A far return (LRETQ) to the program's own code segment, as some
 * trampolines use to switch modes.
 *
 *   usage: far_return           build: -O2
 *
 * Natively: exits 0. The native engine cannot follow a far transfer from
 * its code cache: it must stop the program and name the instruction and
 * --engine emulate.
 */
int main(void) {
    __asm__ volatile(
        "mov %%cs, %%eax\n\t"
        "push %%rax\n\t"
        "lea 1f(%%rip), %%rax\n\t"
        "push %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        :
        :
        : "rax", "memory");
    return 0;
}
