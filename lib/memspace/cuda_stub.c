/* A build without CUDA: there is no CUDA backend, so GPU memory is GPUBP_ERR_NOT_SUPPORTED
 * (memspace.c says so when gbp_cuda_ops() is NULL). cuda/ replaces this file when CUDA is built. */
#include "memspace/devops.h"

const gbp_devops *gbp_cuda_ops(void) { return NULL; }
