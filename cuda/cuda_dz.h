// cuda/cuda_dz.cu, the device codec (its table is gbp_cuda_dzops, memspace/dz_stub.h), and what
// it needs of cuda_backend.cu.
#ifndef GBP_CUDA_DZ_H
#define GBP_CUDA_DZ_H

// The cudaStream_t of a backend context (the library's stream of one file).
void *gbp_cuda_stream_of(void *ctx);

#endif // GBP_CUDA_DZ_H
