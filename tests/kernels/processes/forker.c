/* A parent that forks: the child does C multiplies, the parent P.
 * FLOP: parent P, child C, job P + C. Usage: forker P C */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void scale(double *a, double s, long n) {
    for (long i = 0; i < n; i++) a[i] *= s;
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    long p = atol(argv[1]), c = atol(argv[2]);
    long n = p > c ? p : c;
    double *a = malloc(n * sizeof *a), s;
    memset(a, 0x3f, n * sizeof *a);
    memcpy(&s, a, sizeof s);
    pid_t pid = fork();
    if (pid == 0) {
        scale(a, s, c);
        _exit(0);
    }
    scale(a, s, p);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
