/* Forks while another thread keeps the engine translating: a child must
 * not inherit a lock that thread held at the moment of the fork.
 *
 *   usage: fork_busy K M          build: -O2 -pthread -fno-math-errno
 *
 * A second thread rewrites and calls a small function on a page of its
 * own until the main thread is done (`mov eax, imm; ret`, a new immediate
 * each time: no FP work, and a translation after every write). The main
 * thread forks K children, one after the other; each sums M square roots
 * and exits 0. A child not done within 10 s is killed and the program
 * exits 3 (it hung).
 *
 *   flop.fp64 = 2 K M (the children's): flop_by_op.sqrt = K M, add = K M
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../kernel.h"

static unsigned char *page;
static atomic_int done;

static void *rewriter(void *arg) {
    (void)arg;
    int (*f)(void) = (int (*)(void))page;
    volatile int sink = 0;
    for (unsigned v = 0; !atomic_load(&done); v++) {
        unsigned char code[] = {0xb8, v & 0xff, (v >> 8) & 0xff, 0, 0, 0xc3};
        memcpy(page, code, sizeof code);
        sink += f();
    }
    return NULL;
}

/* Waits up to 10 s for `pid`; 0 when it exited 0. */
static int reap(pid_t pid) {
    for (int ms = 0; ms < 10000; ms++) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
        if (r < 0) return 1;
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 3;
}

int main(int argc, char **argv) {
    long k = arg_long(argc, argv, 1), m = arg_long(argc, argv, 2);
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, rewriter, NULL)) return 2;
    int failed = 0;
    for (long i = 0; i < k && !failed; i++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            volatile REAL s = 0;
            for (long j = 0; j < m; j++) s += SQRT((REAL)j);
            _exit(0);
        }
        failed = reap(pid);
    }
    atomic_store(&done, 1);
    pthread_join(t, NULL);
    return failed;
}
