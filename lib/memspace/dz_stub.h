/* lib/memspace/dz_stub.c (a build without CUDA) or cuda/cuda_dz.cu (with CUDA, which replaces
 * it): the CUDA backend's batched device codec (common/dzops.h). */
#ifndef GBP_DZ_STUB_H
#define GBP_DZ_STUB_H

#include "common/dzops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend's batched codec (cuda/cuda_dz.cu: nvCOMP loaded at run time), NULL in a build
 * without CUDA. */
const gbp_dzops *gbp_cuda_dzops(void);

#ifdef __cplusplus
}
#endif

#endif /* GBP_DZ_STUB_H */
