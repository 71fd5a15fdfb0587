/* fork: the child works in child_work, the parent in parent_work (argv[1]
 * iterations each), then waits for the child. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))

NOIPA double child_work(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

NOIPA double parent_work(long n) {
    double x = 2.0;
    for (long i = 0; i < n; i++) x = x * 0.9999999 + 1e-9;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    pid_t pid = fork();
    if (pid == 0) {
        printf("%.3f\n", child_work(n));
        return 0;
    }
    double x = parent_work(n);
    int status;
    waitpid(pid, &status, 0);
    printf("%.3f\n", x);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 5;
}
