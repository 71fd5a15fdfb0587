/* A program that runs itself again through a descriptor instead of a
 * path, in a forked child, as some launchers and sandboxes do:
 *
 *   usage: exec_by_fd HOW N      build: -O2
 *
 * HOW: `fexecve` (a descriptor of its own executable), `memfd` (a copy of
 * it in a memfd: no path names the file), `execveat` (its directory's
 * descriptor and its file name). The child adds N doubles in the region
 * "child"; the parent adds none and waits. FLOP: N fp64 adds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"

static double data[4096];

__attribute__((noinline)) static double sum(const double *x, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++)
        s += x[i];
    return s;
}

/* The descriptor to exec, and the name to give execveat (NULL: fexecve). */
static int target(const char *how, const char *self, const char **name) {
    *name = NULL;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || strcmp(how, "fexecve") == 0)
        return fd;
    if (strcmp(how, "memfd") == 0) {
        struct stat st;
        int copy = memfd_create("exec_by_fd", MFD_CLOEXEC);
        if (copy < 0 || fstat(fd, &st) != 0 || sendfile(copy, fd, NULL, st.st_size) != st.st_size)
            return -1;
        close(fd);
        return copy;
    }
    close(fd);
    static char dir[4096], base[4096];
    if (strlen(self) >= sizeof dir)
        return -1;
    strcpy(dir, self);
    strcpy(base, self);
    *name = basename(base);
    return open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    if (n < 0 || n > 4096)
        return 2;
    if (strcmp(argv[1], "child") == 0) {
        FLOPSCOPE_REGION_BEGIN("child");
        volatile double s = sum(data, n);
        (void)s;
        FLOPSCOPE_REGION_END("child");
        return 0;
    }
    const char *name;
    int fd = target(argv[1], argv[0], &name);
    if (fd < 0)
        return 3;
    pid_t pid = fork();
    if (pid < 0)
        return 4;
    if (pid == 0) {
        char *args[] = {argv[0], "child", argv[2], NULL};
        if (name)
            execveat(fd, name, args, environ, 0);
        else
            fexecve(fd, args, environ);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 5;
    return 0;
}
