// C++ for attribution: a class template instantiated twice and virtual
// calls, under their demangled names.
//
//   usage: shapes N REPS          build: -O2 -g
//
// Per repetition: Axpy<double>::run and Axpy<float>::run, 2N FLOP each
// (a multiply and an add per element; an FMA with -mfma); N calls of
// Square::area (1 multiply) and N of Circle::area (2 multiplies) through a
// Shape pointer.
#include <cstdio>
#include <cstdlib>
#include <vector>

template <typename T> struct Axpy {
    __attribute__((noinline)) static void run(const T *x, T *y, T a, int n) {
        for (int i = 0; i < n; i++) { // LOOP axpy
            y[i] += a * x[i];
        }
    }
};

struct Shape {
    virtual ~Shape() = default;
    virtual double area(double s) const = 0;
};
struct Square : Shape {
    __attribute__((noinline)) double area(double s) const override { return s * s; }
};
struct Circle : Shape {
    __attribute__((noinline)) double area(double s) const override { return 3.25 * s * s; }
};

int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    int reps = argc > 2 ? std::atoi(argv[2]) : 2;
    std::vector<double> xd(n, 0.5), yd(n, 0.0);
    std::vector<float> xf(n, 0.5f), yf(n, 0.0f);
    Square sq;
    Circle ci;
    Shape *volatile shapes[2] = {&sq, &ci};
    double acc = 0.0;
    long hits = 0;
    for (int r = 0; r < reps; r++) {
        Axpy<double>::run(xd.data(), yd.data(), 1.5, n);
        Axpy<float>::run(xf.data(), yf.data(), 1.5f, n);
        for (int i = 0; i < n; i++) {
            Shape *a = shapes[0], *b = shapes[1];
            double s = a->area(0.5);
            double t = b->area(0.5);
            hits += (s == t);
            if (i == 0) acc = s;
        }
    }
    std::printf("shapes: n=%d reps=%d %ld %d\n", n, reps, hits, acc > 0.0);
    return 0;
}
