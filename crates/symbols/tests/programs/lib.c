/* A shared library: an exported function and a static one. */

static __attribute__((noinline)) double lib_kernel(double x) // LINE:kernel_decl
{
    return x * 3.0; // LINE:kernel_body
}

double lib_entry(double x)
{
    return lib_kernel(x) + 1.0;
}

void *lib_kernel_address(void)
{
    return (void *)&lib_kernel;
}

/* A call through the PLT: the library then has PLT stubs, which must not
 * hide its .dynsym names once it is stripped. */
#include <stdlib.h>
const char *lib_home(void)
{
    return getenv("HOME");
}
