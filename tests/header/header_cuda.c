/* Header test: <gpubp/cuda.h> on its own, strict C11. It is declared in every build and includes
 * no CUDA header; without CUDA its calls return GPUBP_ERR_NOT_SUPPORTED. */
#include <gpubp/cuda.h>

#if defined(CUDART_VERSION) || defined(__CUDA_RUNTIME_H__) || defined(__DRIVER_TYPES_H__)
#error "<gpubp/cuda.h> must not include CUDA headers"
#endif

#include "header/header_cuda.h"

const char *header_cuda_checks(void)
{
    if (gpubp_set_stream(0, 0) != GPUBP_ERR_INVALID_ARG)
        return "gpubp_set_stream(NULL file) is not GPUBP_ERR_INVALID_ARG";
    return 0;
}
