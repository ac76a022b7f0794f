/* Header test driver: runs the checks of header_c11.c and header_cuda.c and prints the first
 * failure. */
#include <stdio.h>

const char *header_c11_checks(const char *version_h_string);
const char *header_version_string(void);
const char *header_cuda_checks(void);

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
