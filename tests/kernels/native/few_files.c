/* A program that lowers its limit on open files to 3 (stdin, stdout and
 * stderr are open: no descriptor left), then forks a child that adds N
 * doubles in the region "child" and exits; the parent waits.
 *
 *   usage: few_files soft|both N       build: -O2
 *
 * `soft`: only the soft limit is lowered (the hard one stays), `both`:
 * both are (as `ulimit -n 3` does), so nothing can raise it again.
 * FLOP: N fp64 adds in the child's region "child", none in the parent.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"
#include "../adds.h"

int main(int argc, char **argv) {
    int both = argc > 1 && strcmp(argv[1], "both") == 0;
    long n = argc > 2 ? atol(argv[2]) : 1000;
    if (n < 0 || n > ADDS_MAX)
        return 2;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return 3;
    lim.rlim_cur = 3;
    if (both)
        lim.rlim_max = 3;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
        return 4;
    pid_t pid = fork();
    if (pid < 0)
        return 5;
    if (pid == 0) {
        FLOPSCOPE_REGION_BEGIN("child");
        volatile double s = sum(adds_data, n);
        (void)s;
        FLOPSCOPE_REGION_END("child");
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 6;
    return 0;
}
