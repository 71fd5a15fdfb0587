/* fork: the child and the parent each spend argv[1] seconds of CPU time in
 * a function of their own; prints the child's pid. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

NOINLINE void child_work(double s) {
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}
NOINLINE void parent_work(double s) {
    BURN_FOR(CLOCK_PROCESS_CPUTIME_ID, s);
}

int main(int argc, char **argv) {
    double s = argc > 1 ? atof(argv[1]) : 0.2;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        child_work(s);
        exit(0);
    }
    parent_work(s);
    int status;
    waitpid(pid, &status, 0);
    printf("child %d\n", (int)pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
