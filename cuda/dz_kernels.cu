// The kernels of the device codec (cuda/cuda_dz.cu): Blosc2's byte and bit shuffle, the run and
// Adler-32 checks of a batch of streams, and the assembly of an output out of segments; each
// queued on a stream by a launcher of dz_kernels.h.
#include "cuda/dz_kernels.h"

#include <cstdint>

namespace {

const int kThreads = 256;
const unsigned kMaxGrid = 65535;

unsigned grid_for(size_t n)
{
    size_t g = (n + kThreads - 1) / kThreads;
    return (unsigned)(g == 0 ? 1 : g > kMaxGrid ? kMaxGrid : g);
}

// Byte shuffle of every block (bsz bytes, the last one shorter) of len bytes: with n whole
// elements in a block, byte j of element i goes to j*n + i; the leftover bytes (fewer than ts, in
// the last block) stay. One thread per element (one index division per element, in 32 bits when
// the sizes allow: I is unsigned or size_t), its ts bytes read and written in a loop; the writes
// of a warp land on consecutive bytes of each plane (forward), the reads likewise (inverse).
// Needs bsz % ts == 0 (Blosc2's block sizes are multiples of the type size).
template <typename I>
__global__ void k_byte_shuffle(const uint8_t *in, uint8_t *out, I len, I bsz, I ts, int inverse)
{
    const I per = bsz / ts, nu = (len + ts - 1) / ts;
    for (I u = blockIdx.x * (I)blockDim.x + threadIdx.x; u < nu; u += (I)gridDim.x * blockDim.x) {
        I k = u / per, i = u - k * per, b0 = k * bsz;
        I blen = len - b0 < bsz ? len - b0 : bsz, n = blen / ts;
        const uint8_t *s = in + b0;
        uint8_t *d = out + b0;
        if (i >= n) { // the leftover bytes of the last block
            for (I q = n * ts; q < blen; q++) d[q] = s[q];
            continue;
        }
        if (!inverse)
            for (I j = 0; j < ts; j++) d[j * n + i] = s[i * ts + j];
        else
            for (I j = 0; j < ts; j++) d[i * ts + j] = s[j * n + i];
    }
}

// 4x4 byte transpose: out[j] byte e = byte j of word e (words little-endian).
__device__ void transpose4(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t *o)
{
    uint32_t t0 = __byte_perm(a, b, 0x5140), t1 = __byte_perm(a, b, 0x7362);
    uint32_t t2 = __byte_perm(c, d, 0x5140), t3 = __byte_perm(c, d, 0x7362);
    o[0] = __byte_perm(t0, t2, 0x5410);
    o[1] = __byte_perm(t0, t2, 0x7632);
    o[2] = __byte_perm(t1, t3, 0x5410);
    o[3] = __byte_perm(t1, t3, 0x7632);
}

// k_byte_shuffle for type sizes 4 and 8 (TS), the buffers 16-byte aligned, bsz a multiple of
// 4 * TS, len < 2^31: one thread per 4 elements, their 4 * TS bytes read with 16-byte loads (or
// written with 16-byte stores, inverse), transposed in registers (__byte_perm), each plane's 4
// bytes written (read) as one word: a warp's stores (loads) are 128 contiguous bytes a plane. In
// a block whose element count is not a multiple of 4 (the last one) the elements go byte by
// byte; the unit after a block's groups copies its leftover bytes.
template <int TS>
__global__ void k_byte_shuffle_v(const uint8_t *in, uint8_t *out, unsigned len, unsigned bsz,
                                 int inverse)
{
    const unsigned per = bsz / TS / 4 + 1, nb = (len + bsz - 1) / bsz;
    for (unsigned u = blockIdx.x * blockDim.x + threadIdx.x; u < nb * per;
         u += gridDim.x * blockDim.x) {
        unsigned k = u / per, g = u - k * per, b0 = k * bsz;
        unsigned blen = len - b0 < bsz ? len - b0 : bsz, n = blen / TS, i0 = 4 * g;
        const uint8_t *s = in + b0;
        uint8_t *d = out + b0;
        if (i0 >= n) {
            if (g == (n + 3) / 4)
                for (unsigned q = n * TS; q < blen; q++) d[q] = s[q];
            continue;
        }
        if (n % 4) { // the last block, short: byte by byte
            for (unsigned i = i0; i < i0 + 4 && i < n; i++)
                for (unsigned j = 0; j < TS; j++) {
                    if (!inverse) d[j * n + i] = s[i * TS + j];
                    else d[i * TS + j] = s[j * n + i];
                }
            continue;
        }
        uint32_t w[TS], p[TS]; // w: the 4 elements' words; p: the TS plane words
        if (!inverse) {
            const uint4 *v = (const uint4 *)(s + (size_t)i0 * TS);
            for (int q = 0; q < TS / 4; q++) {
                uint4 x = v[q];
                w[4 * q] = x.x, w[4 * q + 1] = x.y, w[4 * q + 2] = x.z, w[4 * q + 3] = x.w;
            }
            for (int h = 0; h < TS / 4; h++) // planes 4h..4h+3: word h of each element
                transpose4(w[h], w[h + TS / 4], w[h + 2 * (TS / 4)], w[h + 3 * (TS / 4)], p + 4 * h);
            for (int j = 0; j < TS; j++) *(uint32_t *)(d + (size_t)j * n + i0) = p[j];
        } else {
            for (int j = 0; j < TS; j++) p[j] = *(const uint32_t *)(s + (size_t)j * n + i0);
            uint32_t e[TS];
            for (int h = 0; h < TS / 4; h++) transpose4(p[4 * h], p[4 * h + 1], p[4 * h + 2], p[4 * h + 3], e + 4 * h);
            // e[4h + m]: word h of element m
            for (int m = 0; m < 4; m++)
                for (int h = 0; h < TS / 4; h++) w[m * (TS / 4) + h] = e[4 * h + m];
            uint4 *v = (uint4 *)(d + (size_t)i0 * TS);
            for (int q = 0; q < TS / 4; q++)
                v[q] = make_uint4(w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3]);
        }
    }
}

// Bit shuffle (docs/format/blosc-zlib.md 4.2): of a block's whole elements the first m (a
// multiple of 8) become 8*ts planes of m/8 bytes; plane 8j+k holds bit k of byte j of every
// element, element i at bit i%8 of byte i/8. The bytes after them stay. One thread per output
// byte: forward, the 8 elements of one plane byte; inverse, the 8 planes of one element byte.
template <typename I>
__global__ void k_bit_shuffle(const uint8_t *in, uint8_t *out, I len, I bsz, I ts, int inverse)
{
    for (I q = blockIdx.x * (I)blockDim.x + threadIdx.x; q < len; q += (I)gridDim.x * blockDim.x) {
        I b0 = q / bsz * bsz, l = q - b0;
        I blen = len - b0 < bsz ? len - b0 : bsz, m = blen / ts / 8 * 8, pb = m / 8;
        if (l >= m * ts) {
            out[q] = in[q];
            continue;
        }
        const uint8_t *src = in + b0;
        unsigned v = 0;
        if (!inverse) { // l = plane * pb + g, plane = 8j + k
            I plane = l / pb, g = l - plane * pb, j = plane / 8, k = plane % 8;
            for (int e = 0; e < 8; e++) v |= ((src[(g * 8 + e) * ts + j] >> k) & 1u) << e;
        } else { // l = i*ts + j: byte j of element i
            I i = l / ts, j = l - i * ts;
            for (int k = 0; k < 8; k++)
                v |= ((src[(8 * j + k) * pb + i / 8] >> (i % 8)) & 1u) << k;
        }
        out[q] = (uint8_t)v;
    }
}

// Copies n bytes from s to d, the threads of one block (or of several: `first` and `step` over
// the bytes) together: the bytes before d's first 4-byte boundary one by one, then aligned 4-byte
// stores, each word loaded with one aligned load (s aligned the same way) or two and a funnel
// shift (loads stay inside the 4-byte words that hold the source bytes), the tail one by one.
__device__ void copy_bytes(uint8_t *d, const uint8_t *s, unsigned n, unsigned first, unsigned step)
{
    unsigned head = (unsigned)((4 - ((uintptr_t)d & 3)) & 3);
    if (head > n) head = n;
    for (unsigned i = first; i < head; i += step) d[i] = s[i];
    unsigned nw = (n - head) / 4;
    uint32_t *dw = (uint32_t *)(d + head);
    const uint8_t *sb = s + head;
    unsigned r = (unsigned)((uintptr_t)sb & 3);
    if (r == 0) {
        const uint32_t *sw = (const uint32_t *)sb;
        for (unsigned w = first; w < nw; w += step) dw[w] = sw[w];
    } else {
        const uint32_t *sa = (const uint32_t *)(sb - r); // the word holding sb[0]
        // word w needs sb[4w .. 4w+3], in sa[w] and sa[w + 1]; sa[w + 1] ends at sb[4w + 7 - r],
        // inside the source when 4w + 7 - r < n - head
        for (unsigned w = first; w < nw; w += step) {
            if ((size_t)4 * w + 7 - r < (size_t)(n - head)) {
                dw[w] = __funnelshift_r(sa[w], sa[w + 1], 8 * r);
            } else {
                const uint8_t *b = sb + 4 * w;
                dw[w] = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                        (uint32_t)b[3] << 24;
            }
        }
    }
    for (unsigned i = head + 4 * nw + first; i < n; i += step) d[i] = s[i];
}

// run[i]: the byte value when every byte of stream i is that value, else -1. One block a stream;
// 16-byte loads where the stream is 16-byte aligned (the bytes before and after one by one).
__global__ void k_runs(const uint8_t *const *ptr, const size_t *len, int16_t *run)
{
    const uint8_t *s = ptr[blockIdx.x];
    size_t n = len[blockIdx.x];
    uint8_t first = n ? s[0] : 0;
    size_t head = (size_t)((16 - ((uintptr_t)s & 15)) & 15);
    if (head > n) head = n;
    size_t nw = (n - head) / 16;
    int differs = 0;
    for (size_t i = threadIdx.x; i < head && !differs; i += blockDim.x) differs = s[i] != first;
    const uint4 *w = (const uint4 *)(s + head);
    uint32_t rep = first * 0x01010101u;
    for (size_t i = threadIdx.x; i < nw && !differs; i += blockDim.x) {
        uint4 v = w[i];
        differs = ((v.x ^ rep) | (v.y ^ rep) | (v.z ^ rep) | (v.w ^ rep)) != 0;
    }
    for (size_t i = head + 16 * nw + threadIdx.x; i < n && !differs; i += blockDim.x)
        differs = s[i] != first;
    differs = __syncthreads_or(differs);
    if (threadIdx.x == 0) run[blockIdx.x] = (!differs && n) ? (int16_t)first : (int16_t)-1;
}

// Adler-32 of stream i (RFC 1950): A = 1 + sum d, B = n + sum (n - k) d_k (k from 0), mod 65521.
// One block a stream, each thread a contiguous run (a multiple of 16 bytes, read 16 bytes at a
// time where the stream is aligned), then a reduction. With `stored` (decode):
// status[i] becomes -1 unless it equals the big-endian value at stored[i].
__global__ void k_adler(const uint8_t *const *ptr, const size_t *len, uint32_t *adler,
                        const uint8_t *const *stored, int *status)
{
    const uint32_t M = 65521;
    const uint8_t *s = ptr[blockIdx.x];
    size_t n = len[blockIdx.x], per = ((n + blockDim.x - 1) / blockDim.x + 15) / 16 * 16;
    size_t lo = threadIdx.x * per, hi = lo + per < n ? lo + per : n;
    unsigned long long a = 0, b = 0;
    size_t k = lo;
    if (((uintptr_t)s & 15) == 0) // 16-byte loads: every thread's run starts aligned
        for (; k + 16 <= hi; k += 16) {
            uint4 v = *(const uint4 *)(s + k);
            uint32_t w[4] = {v.x, v.y, v.z, v.w};
            unsigned long long m = n - k;
            for (int q = 0; q < 16; q++) {
                uint32_t d = (w[q / 4] >> (8 * (q % 4))) & 0xffu;
                a += d;
                b += (m - (unsigned long long)q) * d;
            }
            if ((k & 4095) == 4080) { a %= M; b %= M; }
        }
    for (; k < hi; k++) {
        a += s[k];
        b += (unsigned long long)(n - k) * s[k];
        if ((k & 4095) == 4095) { a %= M; b %= M; }
    }
    __shared__ unsigned long long sa[kThreads], sb[kThreads];
    sa[threadIdx.x] = a % M;
    sb[threadIdx.x] = b % M;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            sa[threadIdx.x] = (sa[threadIdx.x] + sa[threadIdx.x + w]) % M;
            sb[threadIdx.x] = (sb[threadIdx.x] + sb[threadIdx.x + w]) % M;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        uint32_t A = (uint32_t)((1 + sa[0]) % M), B = (uint32_t)((n % M + sb[0]) % M);
        uint32_t v = B << 16 | A;
        if (adler) adler[blockIdx.x] = v;
        if (stored) {
            const uint8_t *q = stored[blockIdx.x];
            uint32_t want = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
            if (want != v) status[blockIdx.x] = -1;
        }
    }
}

// Writes the segments, gridDim.y blocks a segment (blockIdx.x). CODED: coded stream src (at coded + src * slot);
// with wrap (zlib made by nvCOMP deflate) the segment is 78 01, the deflate bytes, the Adler-32.
__global__ void k_assemble(const gbp_dz_seg *seg, uint8_t *out, const uint8_t *coded, size_t slot,
                           int wrap, const uint32_t *adler)
{
    const gbp_dz_seg g = seg[blockIdx.x];
    uint8_t *d = out + g.dst;
    if (g.kind == GBP_SEG_INLINE) {
        if (blockIdx.y == 0 && threadIdx.x < g.len) d[threadIdx.x] = g.inl[threadIdx.x];
        return;
    }
    unsigned first = blockIdx.y * blockDim.x + threadIdx.x, step = gridDim.y * blockDim.x;
    if (g.kind == GBP_SEG_ZERO || g.kind == kSegFill) {
        uint8_t v = g.kind == kSegFill ? g.inl[0] : 0;
        for (unsigned i = first; i < g.len; i += step) d[i] = v;
        return;
    }
    const uint8_t *s = g.kind == GBP_SEG_DEV ? (const uint8_t *)(uintptr_t)g.src
                                             : coded + g.src * slot;
    unsigned n = g.len;
    if (g.kind == GBP_SEG_CODED && wrap) {
        if (first == 0) {
            uint32_t a = adler[g.src];
            d[0] = 0x78;
            d[1] = 0x01;
            d[n - 4] = (uint8_t)(a >> 24);
            d[n - 3] = (uint8_t)(a >> 16);
            d[n - 2] = (uint8_t)(a >> 8);
            d[n - 1] = (uint8_t)a;
        }
        d += 2;
        n -= 6;
    }
    copy_bytes(d, s, n, first, step);
}

} // namespace

cudaError_t gbp_dzk_shuffle(int filter, const uint8_t *in, uint8_t *out, size_t len, size_t bsz,
                            size_t ts, int inverse, cudaStream_t st)
{
    bool narrow = len < ((size_t)1 << 31); // every index (and index * 8) fits in 32 bits
    bool vec = narrow && (ts == 4 || ts == 8) && bsz % (4 * ts) == 0 &&
               ((uintptr_t)in | (uintptr_t)out) % 16 == 0;
    if (filter == 1 && vec && ts == 4)
        k_byte_shuffle_v<4><<<grid_for(len / 16 + len / bsz + 1), kThreads, 0, st>>>(
            in, out, (unsigned)len, (unsigned)bsz, inverse);
    else if (filter == 1 && vec)
        k_byte_shuffle_v<8><<<grid_for(len / 32 + len / bsz + 1), kThreads, 0, st>>>(
            in, out, (unsigned)len, (unsigned)bsz, inverse);
    else if (filter == 1 && narrow)
        k_byte_shuffle<unsigned><<<grid_for(len / ts + 1), kThreads, 0, st>>>(
            in, out, (unsigned)len, (unsigned)bsz, (unsigned)ts, inverse);
    else if (filter == 1)
        k_byte_shuffle<size_t><<<grid_for(len / ts + 1), kThreads, 0, st>>>(in, out, len, bsz, ts,
                                                                             inverse);
    else if (narrow)
        k_bit_shuffle<unsigned><<<grid_for(len), kThreads, 0, st>>>(
            in, out, (unsigned)len, (unsigned)bsz, (unsigned)ts, inverse);
    else
        k_bit_shuffle<size_t><<<grid_for(len), kThreads, 0, st>>>(in, out, len, bsz, ts, inverse);
    return cudaGetLastError();
}

cudaError_t gbp_dzk_runs(const uint8_t *const *ptr, const size_t *len, int16_t *run, size_t n,
                         cudaStream_t st)
{
    k_runs<<<(unsigned)n, kThreads, 0, st>>>(ptr, len, run);
    return cudaGetLastError();
}

cudaError_t gbp_dzk_adler(const uint8_t *const *ptr, const size_t *len, uint32_t *adler,
                          const uint8_t *const *stored, int *status, size_t n, cudaStream_t st)
{
    k_adler<<<(unsigned)n, kThreads, 0, st>>>(ptr, len, adler, stored, status);
    return cudaGetLastError();
}

cudaError_t gbp_dzk_assemble(const gbp_dz_seg *seg, size_t nseg, size_t maxlen, uint8_t *out,
                             const uint8_t *coded, size_t slot, int wrap, const uint32_t *adler,
                             cudaStream_t st)
{
    /* blocks a segment: one for every 64 KiB of the longest, 1 .. 1024 */
    size_t y = maxlen / 65536 + 1;
    dim3 grid(1, (unsigned)(y > 1024 ? 1024 : y));
    for (size_t done = 0; done < nseg; done += 1u << 30) {
        size_t k = nseg - done < (1u << 30) ? nseg - done : (1u << 30);
        grid.x = (unsigned)k;
        k_assemble<<<grid, kThreads, 0, st>>>(seg + done, out, coded, slot, wrap, adler);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
