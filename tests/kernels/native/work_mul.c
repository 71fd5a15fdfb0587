/* A library for dlopen_twice.c: work(N) does N scalar fp64 multiplies. */
static volatile double acc = 1.0, factor = 1.0000001;

void work(long n) {
    for (long i = 0; i < n; i++) acc = acc * factor;
}
