/* posix_spawn and posix_spawnp of programs that cannot be executed: the
 * error comes back from the call, as glibc reports it (its child passes
 * the exec error back through memory it shares with the parent), and a
 * program that exists is started.
 *
 *   usage: spawn_missing          build: -O2
 *
 * stdout: "posix_spawn missing: 2", "posix_spawn directory: 13",
 * "posix_spawnp missing: 2", "posix_spawnp true: 0 exit 0"; exit 0.
 * No floating-point work.
 */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;

int main(void) {
    pid_t pid;
    char *argv[] = {"x", NULL};
    printf("posix_spawn missing: %d\n",
           posix_spawn(&pid, "/nonexistent-flopscope/program", NULL, NULL, argv, environ));
    printf("posix_spawn directory: %d\n", posix_spawn(&pid, "/usr", NULL, NULL, argv, environ));
    printf("posix_spawnp missing: %d\n",
           posix_spawnp(&pid, "nonexistent-flopscope-program", NULL, NULL, argv, environ));
    char *t[] = {"true", NULL};
    int r = posix_spawnp(&pid, "true", NULL, NULL, t, environ);
    int status = -1;
    if (r == 0) waitpid(pid, &status, 0);
    printf("posix_spawnp true: %d exit %d\n", r, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
