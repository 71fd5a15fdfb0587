/* A program that closes every descriptor it did not open (as Python's
 * subprocess does in a child before exec, and daemons do), opens a file of
 * its own (it gets the lowest number free), runs code it had not run
 * before, and checks that its file holds exactly what it wrote.
 *
 *   usage: close_all FILE N        build: -O2
 *
 * FLOP: N fp64 adds in the region "after", run after the descriptors were
 * closed. Exit 1 if FILE holds anything but the program's own line.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "flopscope.h"
#include "../adds.h"

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    if (n < 0 || n > ADDS_MAX)
        return 2;
    if (close_range(3, ~0U, 0) != 0)
        return 3;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 4;
    FLOPSCOPE_REGION_BEGIN("after");
    volatile double s = sum(adds_data, n);
    (void)s;
    FLOPSCOPE_REGION_END("after");
    const char line[] = "the program's own line\n";
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
        return 5;
    char back[256];
    ssize_t got = pread(fd, back, sizeof back, 0);
    close(fd);
    return got == (ssize_t)strlen(line) && memcmp(back, line, strlen(line)) == 0 ? 0 : 1;
}
