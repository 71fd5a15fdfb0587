#include <stdlib.h>

static inline __attribute__((always_inline)) double square(double x) // LINE:square_decl
{
    return x * x; // LINE:square_body
}

__attribute__((noinline)) double sum_squares(const double *v, int n) // LINE:sum_decl
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += square(v[i]); // LINE:sum_call
    return s;
}

__attribute__((noinline)) void scale(double *v, int n, double a)
{
#pragma omp parallel for
    for (int i = 0; i < n; i++)
        v[i] *= a; // LINE:omp_body
}

int main(int argc, char **argv)
{
    (void)argv;
    int n = argc + 1000;
    double *v = malloc(n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = i;
    scale(v, n, 0.5);
    volatile double sink = sum_squares(v, n);
    (void)sink;
    free(v);
    return 0;
}
