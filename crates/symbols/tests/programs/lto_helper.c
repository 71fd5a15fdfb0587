/* Inlined into lto_main.c by link-time optimisation. */
double helper(double x) // LINE:helper_decl
{
    return x * x + 1.0; // LINE:helper_body
}
