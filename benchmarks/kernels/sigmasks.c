/* Signal masks changed in a loop: N pairs of pthread_sigmask (block one
 * signal, then restore the mask before), each a system call the native
 * engine's dispatcher performs (it keeps SIGSEGV out of every mask).
 *
 *   usage: sigmasks N           build: -O2
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    for (long i = 0; i < n; i++) {
        pthread_sigmask(SIG_BLOCK, &set, &old);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return 0;
}
