/* Source of the test report in tests/hot/mod.rs: its loops and lines
 * point here (the numbers matter: keep the lines where they are). */
#include <math.h>

static inline double sq(double v) {
    return v * v;
}

void dgemm_block(int n, const double *a, const double *b, double *c) {
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < n; k++) {
            double aik = a[i * n + k];
            for (int j = 0; j < n; j++) {
                c[i * n + j] += aik * b[k * n + j];
            }
        }
    }
}

void stream_triad(int n, double *a, const double *b, const double *c, double s) {
    for (int i = 0; i < n; i++) {
        a[i] = b[i] + s * c[i];
    }
}

double norm(int n, const double *a) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        s += sq(a[i]);
    }
    return sqrt(s);
}

void smooth(int n, double *a) {
    for (int i = 1; i < n - 1; i++) {
        a[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
    }
}

void relax(int n, double *a) {
    for (int i = 1; i < n - 1; i++) {
        a[i] = 0.5 * (a[i - 1] + a[i + 1]);
    }
}

int main(void) {
    /* "x < y" && 'z' & escaped */
    return 0;
}
