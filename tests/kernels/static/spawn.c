/* Runs a program in a child process: fork, then execv(ARGS...) in the
 * child; waits for it and exits with its status. No floating-point work of
 * its own (flop.total is the child's).
 *
 *   usage: spawn PROGRAM [ARGS...]      build: -O2 [-static]
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[1], argv + 1);
        perror("execv");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) return 126;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
