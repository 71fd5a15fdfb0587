namespace ns {

template <typename T> struct Box {
    T v;
    __attribute__((noipa)) T get() const; // noipa: no .isra clone
};

template <typename T> T Box<T>::get() const // LINE:get_def
{
    return v * 2;
}

struct Shape {
    virtual double area() const = 0;
    virtual ~Shape() = default;
};

struct Square : Shape {
    double s;
    explicit Square(double s) : s(s) {}
    double area() const override; // LINE:area_decl
    __attribute__((noipa)) double perimeter() const { return 4 * s; } // LINE:perimeter
};

double Square::area() const { return s * s; } // LINE:area_def

} // namespace ns

__attribute__((noinline)) double total(const ns::Shape &shape) { return shape.area(); }

int main(int argc, char **)
{
    ns::Box<int> box{argc};
    ns::Square square(argc);
    volatile double sink = box.get() + total(square) + square.perimeter();
    (void)sink;
    return 0;
}
