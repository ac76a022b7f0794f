/* A build without CUDA: no device codec (cuda/cuda_dz.cu replaces this file). */
#include "memspace/dz_stub.h"

const gbp_dzops *gbp_cuda_dzops(void) { return NULL; }
