/* What the native engine refuses, clearly, rather than run wrongly:
 *   refused gsbase      reads and writes the gs base with RDGSBASE and
 *                       WRGSBASE (build with -mfsgsbase; where the kernel
 *                       allows them), the register the engine's counters use;
 *   refused seccomp     installs a seccomp filter (one that allows every
 *                       system call), which would judge the engine's own.
 * Natively each exits 0 (gsbase: if the processor and kernel allow the
 * instructions, else the kernel kills it with SIGILL). */
#include <immintrin.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static char area[64];

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "gsbase") == 0) {
        unsigned long long old = _readgsbase_u64();
        _writegsbase_u64((unsigned long long)area);
        _writegsbase_u64(old);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "seccomp") == 0) {
        struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
        struct sock_fprog prog = {1, allow};
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : 1;
    }
    return 64;
}
