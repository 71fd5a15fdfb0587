/* Programs exec'd with an environment of the program's own, which lacks the
 * engine's variables (LD_PRELOAD, FLOPSCOPE_*): both are still counted.
 *
 *   usage: exec_env            build: -O2 -I crates/markers/include
 *
 * The parent forks twice. The first child execs this program with only
 * PATH in its environment; the second clears its environment and runs
 * `sh -c 'exec THIS work'`. Each exec'd copy ("work") runs the region
 * "work": 1000 x (y * y + x): 2000 FLOP, so 4000 in the job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "work") == 0) {
        volatile double y = 0.5;
        double x = 0;
        FLOPSCOPE_REGION_BEGIN("work");
        for (int i = 0; i < 1000; i++) x += y * y;
        FLOPSCOPE_REGION_END("work");
        printf("%g\n", x);
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 2;
    self[n] = 0;
    if (fork() == 0) {
        char *env[] = {"PATH=/usr/bin:/bin", NULL};
        char *args[] = {"exec_env", "work", NULL};
        execve(self, args, env);
        _exit(127);
    }
    wait(NULL);
    if (fork() == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "exec '%s' work", self);
        clearenv();
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    wait(NULL);
    return 0;
}
