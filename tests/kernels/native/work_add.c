/* A library for dlopen_twice.c: work(N) does N scalar fp64 adds. */
static volatile double acc = 0.0, one = 1.0;

void work(long n) {
    for (long i = 0; i < n; i++) acc = acc + one;
}
