// Internal to cuda/: what cuda_dz.cu (the device codec) needs of cuda_backend.cu.
#ifndef GBP_CUDA_INTERNAL_H
#define GBP_CUDA_INTERNAL_H

// The cudaStream_t of a backend context (the library's stream of one file).
void *gbp_cuda_stream_of(void *ctx);

#endif // GBP_CUDA_INTERNAL_H
