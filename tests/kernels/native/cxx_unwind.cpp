/* C++ control flow through the code cache: virtual calls (indirect calls),
 * std::function (a call through a stored pointer), and exceptions thrown
 * from a virtual function and caught in the caller (the unwinder walks the
 * program's own return addresses and jumps to the landing pad).
 *
 *   usage: cxx_unwind N          build: g++ -O2 (any x86-64 flags)
 *
 * Iteration i (0 <= i < N) calls shapes[i % 2]->step(acc, i): y = acc * a + b
 * (2 fp64 FLOP, or one FMA: also 2), which throws Boom{y} when i % 7 == 0;
 * the catch sets acc = y * 0.5 (1 FLOP); otherwise acc = y. Then
 * acc = bump(acc) through a std::function: acc + 1.0 (1 FLOP).
 *
 *   flop.fp64 = 3 N + ceil(N / 7)
 *   stdout: the bits of acc in hex (printing a double would do fp work)
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include "../kernel.h"

struct Boom {
    double y;
};

struct Shape {
    virtual ~Shape() = default;
    virtual double step(double x, long i) const = 0;
};

struct Grow final : Shape {
    double step(double x, long i) const override {
        double y = x * 1.5 + 0.25;
        if (i % 7 == 0) throw Boom{y};
        return y;
    }
};

struct Shrink final : Shape {
    double step(double x, long i) const override {
        double y = x * 0.5 - 0.125;
        if (i % 7 == 0) throw Boom{y};
        return y;
    }
};

int main(int argc, char **argv) {
    long n = arg_long(argc, argv, 1);
    std::unique_ptr<Shape> shapes[2] = {std::make_unique<Grow>(), std::make_unique<Shrink>()};
    // The compiler cannot see which shape is called: the index comes from
    // memory it must assume changed.
    volatile long pick = 0;
    std::function<double(double)> bump = [](double x) { return x + 1.0; };
    double acc = 1.0;
    for (long i = 0; i < n; i++) {
        pick = i % 2;
        try {
            acc = shapes[pick]->step(acc, i);
        } catch (const Boom &e) {
            acc = e.y * 0.5;
        }
        acc = bump(acc);
        escape(&acc);
    }
    uint64_t bits;
    std::memcpy(&bits, &acc, sizeof bits);
    std::printf("%016llx\n", (unsigned long long)bits);
    return 0;
}
