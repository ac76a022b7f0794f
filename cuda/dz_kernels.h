// cuda/dz_kernels.cu: the kernels of the device codec (cuda/cuda_dz.cu), queued on stream st;
// each returns the launch's error (cudaGetLastError).
#ifndef GBP_DZ_KERNELS_H
#define GBP_DZ_KERNELS_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

extern "C" {
#include "common/dzops.h"
}

// internal segment kind of gbp_dzk_assemble: fill with inl[0]
const uint8_t kSegFill = 7;

// Blosc2's byte shuffle (filter 1) or bit shuffle (2) of the blocks of bsz bytes of len bytes,
// elements of ts bytes, or the inverse (docs/format/blosc-zlib.md 4). Byte shuffle needs
// bsz % ts == 0.
cudaError_t gbp_dzk_shuffle(int filter, const uint8_t *in, uint8_t *out, size_t len, size_t bsz,
                            size_t ts, int inverse, cudaStream_t st);
// run[i] of the n streams (ptr[i], len[i]: device arrays): the byte value when every byte of the
// stream is that value, else -1.
cudaError_t gbp_dzk_runs(const uint8_t *const *ptr, const size_t *len, int16_t *run, size_t n,
                         cudaStream_t st);
// The Adler-32 of each of the n streams into adler[i] (when not NULL); with stored (decode),
// status[i] becomes -1 unless it equals the big-endian value at stored[i].
cudaError_t gbp_dzk_adler(const uint8_t *const *ptr, const size_t *len, uint32_t *adler,
                          const uint8_t *const *stored, int *status, size_t n, cudaStream_t st);
// Writes the nseg segments (device array; maxlen: the longest) into out: GBP_SEG_CODED from the
// coded stream src at coded + src * slot (wrap: zlib made by nvCOMP deflate: 78 01, the deflate
// bytes, the Adler-32 adler[src]), kSegFill with inl[0].
cudaError_t gbp_dzk_assemble(const gbp_dz_seg *seg, size_t nseg, size_t maxlen, uint8_t *out,
                             const uint8_t *coded, size_t slot, int wrap, const uint32_t *adler,
                             cudaStream_t st);

#endif // GBP_DZ_KERNELS_H
