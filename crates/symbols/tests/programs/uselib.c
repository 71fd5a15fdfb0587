#include <stdio.h>

double lib_entry(double x);
void *lib_kernel_address(void);

int main(void)
{
    printf("lib_kernel=%p\n", lib_kernel_address());
    printf("lib_entry=%p\n", (void *)&lib_entry);
    return lib_entry(1.0) == 4.0 ? 0 : 1;
}
