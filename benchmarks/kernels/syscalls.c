/* Ordinary system calls in a loop: N calls of getppid, each running in the
 * code cache through the native engine's check for the system calls its
 * dispatcher handles (the cost measured: that check around each call).
 *
 *   usage: syscalls N           build: -O2
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    long s = 0;
    for (long i = 0; i < n; i++) s += syscall(SYS_getppid);
    return s == 0;
}
