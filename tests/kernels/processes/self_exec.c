/* A program that runs itself again through /proc/self/exe, as programs
 * that re-execute themselves do (a fork, then an exec of /proc/self/exe
 * with other arguments); the parent waits for it.
 *
 *   usage: self_exec P C        build: -O2
 *
 * The parent adds P doubles in the region "parent", the re-executed child
 * C doubles in the region "child": P + C fp64 adds in all.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"
#include "../adds.h"

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        long c = atol(argv[2]);
        if (c < 0 || c > ADDS_MAX)
            return 2;
        FLOPSCOPE_REGION_BEGIN("child");
        volatile double s = sum(adds_data, c);
        (void)s;
        FLOPSCOPE_REGION_END("child");
        return 0;
    }
    if (argc != 3)
        return 2;
    long p = atol(argv[1]);
    if (p < 0 || p > ADDS_MAX)
        return 2;
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        char *args[] = {argv[0], "child", argv[2], NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    FLOPSCOPE_REGION_BEGIN("parent");
    volatile double s = sum(adds_data, p);
    (void)s;
    FLOPSCOPE_REGION_END("parent");
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 4;
    return 0;
}
