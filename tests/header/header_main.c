/* Header test driver: runs the checks of header_c11.c and header_cuda.c and prints the first
 * failure. */
#include <stdio.h>

#include "header/header_c11.h"
#include "header/header_cuda.h"
#include "header/header_version.h"

int main(void)
{
    const char *why = header_c11_checks(header_version_string());
    if (!why) why = header_cuda_checks();
    if (why) {
        fprintf(stderr, "header_c11: %s\n", why);
        return 1;
    }
    printf("header_c11: ok\n");
    return 0;
}
