double helper(double x);

__attribute__((noipa)) double accumulate(const double *v, int n) // LINE:acc_decl
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += helper(v[i]); // LINE:acc_call
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = i + argc;
    volatile double sink = accumulate(v, 64);
    (void)sink;
    return 0;
}
