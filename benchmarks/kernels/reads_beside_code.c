/* Reads by a program that runs code from a page it can write, as JIT
 * compilers do: the native engine keeps that page read-only to see its
 * code rewritten, and from then on sends each system call that writes
 * the program's memory (here: read) through its dispatcher first, to give
 * such pages back before the kernel writes them. The cost measured: that
 * detour, on N reads of one byte from /dev/zero into an ordinary buffer,
 * with a signal handler installed (as JIT runtimes have: the engine then
 * keeps signals from landing in its own work).
 *
 *   usage: reads_beside_code N  build: -O2
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef double (*fn)(double, double);

static const unsigned char ADDSD[] = {0xf2, 0x0f, 0x58, 0xc1, 0xc3};

static void on_usr1(int sig) { (void)sig; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    signal(SIGUSR1, on_usr1);
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    memcpy(page, ADDSD, sizeof ADDSD);
    volatile double acc = ((fn)page)(1.0, 2.0);
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) return 2;
    char buf[8];
    for (long i = 0; i < n; i++)
        if (read(fd, buf, 1) != 1) return 3;
    return acc != 3.0;
}
