/* A program that runs itself again through a descriptor instead of a
 * path, in a forked child, as some launchers and sandboxes do:
 *
 *   usage: exec_by_fd HOW N      build: -O2
 *
 * HOW: `fexecve` (a descriptor of its own executable), `memfd` (a copy of
 * it in a memfd: no path names the file), `execveat` (its directory's
 * descriptor and its file name), `raw` (a raw execve system call, as Go
 * and statically linked programs make, of its own path), `rawfail` (a raw
 * execve of a missing file, which fails: the child then adds the N
 * doubles itself, outside any region). The child adds N doubles in the
 * region "child"; the parent adds none and waits. FLOP: N fp64 adds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "flopscope.h"
#include "../adds.h"

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
    if (n < 0 || n > ADDS_MAX)
        return 2;
    if (strcmp(argv[1], "child") == 0) {
        FLOPSCOPE_REGION_BEGIN("child");
        volatile double s = sum(adds_data, n);
        (void)s;
        FLOPSCOPE_REGION_END("child");
        return 0;
    }
    int raw = strncmp(argv[1], "raw", 3) == 0;
    const char *name = NULL;
    int fd = raw ? -1 : target(argv[1], argv[0], &name);
    if (fd < 0 && !raw)
        return 3;
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 3;
    self[len] = 0;
    pid_t pid = fork();
    if (pid < 0)
        return 4;
    if (pid == 0) {
        char *args[] = {argv[0], "child", argv[2], NULL};
        if (strcmp(argv[1], "rawfail") == 0) {
            syscall(SYS_execve, "/nonexistent/program", args, environ);
            volatile double s = sum(adds_data, n);
            (void)s;
            _exit(0);
        }
        if (raw)
            syscall(SYS_execve, self, args, environ);
        else if (name)
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
