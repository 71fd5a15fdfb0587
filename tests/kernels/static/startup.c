/* What a statically linked program sees at its start, printed so that a
 * run under the native engine can be compared with a run of the program
 * itself: argc and argv, an environment variable, /proc/self/cmdline and
 * comm, the auxiliary vector's entries about the program (AT_PHDR, AT_PHENT,
 * AT_PHNUM, AT_ENTRY, AT_BASE, AT_EXECFN, AT_RANDOM, AT_PAGESZ, AT_SECURE),
 * a line of stdin, the heap (brk growing, shrinking and growing again with
 * zero pages; malloc of small and large blocks),
 * and the environment kept free of the engine's loading variable.
 *
 *   usage: startup STATUS [ARGS...]   build: -O2 -static [-static-pie]
 *
 * Exits with STATUS. Does no floating-point work: flop.total = 0.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const Elf64_Ehdr __ehdr_start;
extern char _start[];

static void show_file(const char *what, const char *path) {
    char buf[4096];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n < 0) n = 0;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0') buf[i] = ' ';
    buf[n] = '\0';
    printf("%s: %s\n", what, buf);
}

int main(int argc, char **argv) {
    printf("argc %d\n", argc);
    for (int i = 0; i < argc; i++) printf("argv[%d] %s\n", i, argv[i]);
    const char *v = getenv("STARTUP_VALUE");
    printf("STARTUP_VALUE %s\n", v ? v : "(unset)");
    printf("loading variable %s\n", getenv("FLOPSCOPE_NATIVE_STATIC") ? "seen" : "unseen");
    show_file("cmdline", "/proc/self/cmdline");
    show_file("comm", "/proc/self/comm");

    const char *phdr = (const char *)&__ehdr_start + __ehdr_start.e_phoff;
    printf("AT_PHDR %s\n", getauxval(AT_PHDR) == (uintptr_t)phdr ? "the program's" : "wrong");
    printf("AT_PHENT %lu AT_PHNUM %s\n", getauxval(AT_PHENT),
           getauxval(AT_PHNUM) == __ehdr_start.e_phnum ? "the program's" : "wrong");
    printf("AT_ENTRY %s\n", getauxval(AT_ENTRY) == (uintptr_t)_start ? "_start" : "wrong");
    printf("AT_BASE %lu\n", getauxval(AT_BASE));
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("AT_EXECFN %s\n", execfn ? execfn : "(none)");
    const unsigned char *random = (const unsigned char *)getauxval(AT_RANDOM);
    int nonzero = 0;
    for (int i = 0; random && i < 16; i++) nonzero |= random[i];
    printf("AT_RANDOM %s\n", nonzero ? "16 bytes" : "missing");
    printf("AT_PAGESZ %lu AT_SECURE %lu\n", getauxval(AT_PAGESZ), getauxval(AT_SECURE));

    char line[256] = "";
    if (!fgets(line, sizeof line, stdin)) strcpy(line, "(none)\n");
    printf("stdin %s", line);

    /* brk itself (musl's sbrk only reads the break). */
    long grow = 16l << 20;
    char *b0 = (char *)syscall(SYS_brk, 0);
    int ok = (char *)syscall(SYS_brk, b0 + grow) == b0 + grow;
    if (ok) {
        memset(b0, 0x5a, grow);
        ok = (char *)syscall(SYS_brk, b0) == b0 && (char *)syscall(SYS_brk, b0 + grow) == b0 + grow;
        for (long i = 0; ok && i < grow; i += 4096) ok = b0[i] == 0;
        ok = ok && (char *)syscall(SYS_brk, b0) == b0;
    }
    printf("brk grows, shrinks, grows zeroed: %s\n", ok ? "yes" : "no");
    void *small[1000];
    for (int i = 0; i < 1000; i++) memset(small[i] = malloc(1000), i, 1000);
    char *big = malloc(64l << 20);
    memset(big, 1, 64l << 20);
    for (int i = 0; i < 1000; i++) free(small[i]);
    free(big);
    printf("malloc: fine\n");
    return atoi(argv[1]);
}
