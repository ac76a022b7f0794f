/* Header test: <gpubp/cuda.h> on its own, strict C11. It is declared in every build and includes
 * no CUDA header. (Calling gpubp_set_stream is left to the memspace tests until every build
 * exports it.) */
#include <gpubp/cuda.h>

#if defined(CUDART_VERSION) || defined(__CUDA_RUNTIME_H__) || defined(__DRIVER_TYPES_H__)
#error "<gpubp/cuda.h> must not include CUDA headers"
#endif

const char *header_cuda_checks(void);

const char *header_cuda_checks(void)
{
    /* the declared signature, checked at compile time */
    int (*set_stream)(gpubp_file *, void *) = 0;
    (void)set_stream;
    return 0;
}
