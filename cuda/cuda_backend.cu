// The CUDA backend of lib/memspace (the table of lib/memspace/devops.h). This folder is the only
// code of libgpubp that includes CUDA headers.
//
// One context per open file: its own stream (created with default flags, so it is ordered after
// work queued on the legacy default stream), the device that was current when it was created,
// and a small device scratch area for the min/max reduction. Every CUDA call is checked; a
// failure is recorded with gbp_error(GPUBP_ERR_DEVICE, cudaError_t, message naming the call).
#include <cuda_runtime.h>

#include <link.h>
#include <sys/mman.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "common/common.h"
#include "memspace/devops.h"
}

#include "cuda/cuda_dz.h"

namespace {

int cuda_fail(cudaError_t e, const char *what)
{
    return gbp_error(e == cudaErrorMemoryAllocation ? GPUBP_ERR_NOMEM : GPUBP_ERR_DEVICE, (int)e,
                     "CUDA: %s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

#define CU_CHECK(call, what)                          \
    do {                                              \
        cudaError_t cu_e_ = (call);                   \
        if (cu_e_ != cudaSuccess) return cuda_fail(cu_e_, what); \
    } while (0)

const int kThreads = 256;
const int kMaxBlocks = 1024;
const size_t kScratch = 64 * 1024;

struct cu_ctx {
    int device;
    cudaStream_t stream;
    unsigned char *scratch; // partials, then the accumulator, then the result
    int mm_have;
    unsigned long long mm_index; // packed index of the next region's first element
    cudaStream_t user;
    cudaEvent_t user_ev, lib_ev;
    size_t max_pitch;
};

// ---- min/max reduction ----------------------------------------------------------------------
struct cf { float x, y; };
struct cd { double x, y; };

template <typename V> struct key_of {
    typedef V K;
    static const bool cplx = false;
    __device__ static K key(const V &v) { return v; }
};
template <> struct key_of<cf> {
    typedef float K;
    static const bool cplx = true;
    // no contraction into an FMA: the same rounding as the host's x*x + y*y
    __device__ static float key(const cf &v) { return __fadd_rn(__fmul_rn(v.x, v.x), __fmul_rn(v.y, v.y)); }
};
template <> struct key_of<cd> {
    typedef double K;
    static const bool cplx = true;
    __device__ static double key(const cd &v) { return __dadd_rn(__dmul_rn(v.x, v.x), __dmul_rn(v.y, v.y)); }
};

const unsigned long long kNone = ULLONG_MAX;

template <typename V> struct mm {
    V mn, mx;
    unsigned long long imn, imx; // packed index; kNone: empty
};

// min: the first smallest; max: the last largest (real) or the first largest (complex), as the
// host's sequential loop in lib/common/types.c.
template <typename V> __device__ void combine(mm<V> &a, const mm<V> &b)
{
    typedef key_of<V> KT;
    if (b.imn != kNone) {
        if (a.imn == kNone) {
            a.mn = b.mn; a.imn = b.imn;
        } else {
            typename KT::K ka = KT::key(a.mn), kb = KT::key(b.mn);
            if (kb < ka || (!(ka < kb) && b.imn < a.imn)) { a.mn = b.mn; a.imn = b.imn; }
        }
    }
    if (b.imx != kNone) {
        if (a.imx == kNone) {
            a.mx = b.mx; a.imx = b.imx;
        } else {
            typename KT::K ka = KT::key(a.mx), kb = KT::key(b.mx);
            bool later = KT::cplx ? b.imx < a.imx : b.imx > a.imx;
            if (ka < kb || (!(kb < ka) && later)) { a.mx = b.mx; a.imx = b.imx; }
        }
    }
}

template <typename V> __device__ void block_reduce(mm<V> &t, mm<V> *sh)
{
    sh[threadIdx.x] = t;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            mm<V> a = sh[threadIdx.x];
            combine(a, sh[threadIdx.x + s]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
}

template <typename V>
__global__ void mm_partial(const unsigned char *base, size_t wel, size_t h, size_t n, size_t pitch,
                           size_t slice, unsigned long long ibase, mm<V> *partials)
{
    __shared__ mm<V> sh[kThreads];
    mm<V> t;
    t.imn = t.imx = kNone;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
        const unsigned char *p;
        if (wel == n) {
            p = base + e * sizeof(V);
        } else {
            size_t x = e % wel, r = e / wel, y = r % h, z = r / h;
            p = base + z * slice + y * pitch + x * sizeof(V);
        }
        mm<V> one;
        one.mn = one.mx = *(const V *)p;
        one.imn = one.imx = ibase + e;
        combine(t, one);
    }
    block_reduce(t, sh);
    if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

template <typename V>
__global__ void mm_final(const mm<V> *partials, int np, mm<V> *acc, int have, unsigned char *result)
{
    __shared__ mm<V> sh[kThreads];
    mm<V> t;
    t.imn = t.imx = kNone;
    for (int i = threadIdx.x; i < np; i += blockDim.x) combine(t, partials[i]);
    block_reduce(t, sh);
    if (threadIdx.x == 0) {
        mm<V> a = sh[0];
        if (have) {
            mm<V> prev = *acc;
            combine(prev, a);
            a = prev;
        }
        *acc = a;
        memcpy(result, &a.mn, sizeof(V));
        memcpy(result + sizeof(V), &a.mx, sizeof(V));
    }
}

template <typename V>
int mm_region_t(cu_ctx *c, const void *dptr, size_t width, size_t height, size_t depth,
                size_t pitch, size_t slice)
{
    size_t wel = width / sizeof(V), n = wel * height * depth;
    if (n == 0) return GPUBP_OK;
    size_t nb = (n + kThreads - 1) / kThreads;
    int blocks = nb > (size_t)kMaxBlocks ? kMaxBlocks : (int)nb;
    mm<V> *partials = (mm<V> *)c->scratch;
    mm<V> *acc = partials + kMaxBlocks;
    unsigned char *result = (unsigned char *)(acc + 1);
    mm_partial<V><<<blocks, kThreads, 0, c->stream>>>((const unsigned char *)dptr, wel, height, n,
                                                      pitch, slice, c->mm_index, partials);
    CU_CHECK(cudaGetLastError(), "launch of the min/max kernel");
    mm_final<V><<<1, kThreads, 0, c->stream>>>(partials, blocks, acc, c->mm_have, result);
    CU_CHECK(cudaGetLastError(), "launch of the min/max merge kernel");
    c->mm_have = 1;
    c->mm_index += n;
    return GPUBP_OK;
}

template <typename V> size_t result_offset() { return sizeof(mm<V>) * (kMaxBlocks + 1); }

size_t result_off(int type)
{
    switch (type) {
    case GPUBP_TYPE_INT8: case GPUBP_TYPE_CHAR: return result_offset<signed char>();
    case GPUBP_TYPE_UINT8: return result_offset<unsigned char>();
    case GPUBP_TYPE_INT16: return result_offset<int16_t>();
    case GPUBP_TYPE_UINT16: return result_offset<uint16_t>();
    case GPUBP_TYPE_INT32: return result_offset<int32_t>();
    case GPUBP_TYPE_UINT32: return result_offset<uint32_t>();
    case GPUBP_TYPE_INT64: return result_offset<long long>();
    case GPUBP_TYPE_UINT64: return result_offset<unsigned long long>();
    case GPUBP_TYPE_FLOAT: return result_offset<float>();
    case GPUBP_TYPE_DOUBLE: return result_offset<double>();
    case GPUBP_TYPE_FLOAT_COMPLEX: return result_offset<cf>();
    case GPUBP_TYPE_DOUBLE_COMPLEX: return result_offset<cd>();
    default: return 0;
    }
}

// ---- the table --------------------------------------------------------------------------------
int cu_open(void **out)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, (int)e, "CUDA: no usable device: %s",
                         cudaGetErrorString(e));
    }
    if (n == 0) return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "CUDA: no device");
    cu_ctx *c = (cu_ctx *)gbp_calloc(1, sizeof *c);
    if (!c) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (CUDA context)");
    int rc = GPUBP_OK;
    int mp = 0;
    if ((e = cudaGetDevice(&c->device)) != cudaSuccess) rc = cuda_fail(e, "cudaGetDevice");
    else if ((e = cudaStreamCreate(&c->stream)) != cudaSuccess) rc = cuda_fail(e, "cudaStreamCreate");
    else if ((e = cudaMalloc((void **)&c->scratch, kScratch)) != cudaSuccess)
        rc = cuda_fail(e, "cudaMalloc (reduction scratch)");
    else if ((e = cudaDeviceGetAttribute(&mp, cudaDevAttrMaxPitch, c->device)) != cudaSuccess)
        rc = cuda_fail(e, "cudaDeviceGetAttribute(MaxPitch)");
    if (rc) {
        if (c->scratch) cudaFree(c->scratch);
        if (c->stream) cudaStreamDestroy(c->stream);
        gbp_free(c);
        return rc;
    }
    c->max_pitch = (size_t)mp;
    *out = c;
    return GPUBP_OK;
}

void cu_close(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c) return;
    // errors at teardown have nowhere to go; the stream is drained first so nothing runs on
    // freed memory
    (void)cudaStreamSynchronize(c->stream);
    if (c->user_ev) (void)cudaEventDestroy(c->user_ev);
    if (c->lib_ev) (void)cudaEventDestroy(c->lib_ev);
    (void)cudaFree(c->scratch);
    (void)cudaStreamDestroy(c->stream);
    gbp_free(c);
}

// The CUDA runtime loads the driver library (libcuda.so.1) when it initialises; before that no
// device memory can exist in this process. Looking at the loaded objects costs microseconds and
// initialises nothing, so a host-only program never pays for a CUDA context.
int has_libcuda(struct dl_phdr_info *info, size_t, void *)
{
    return info->dlpi_name && std::strstr(info->dlpi_name, "libcuda.so") != nullptr;
}

std::atomic<int> cuda_seen(0);

int cu_present(void)
{
    if (cuda_seen.load(std::memory_order_relaxed)) return 1;
    int seen = dl_iterate_phdr(has_libcuda, nullptr);
    if (seen) cuda_seen.store(1, std::memory_order_relaxed);
    return seen;
}

int cu_bind(void *ctx)
{
    CU_CHECK(cudaSetDevice(((cu_ctx *)ctx)->device), "cudaSetDevice (I/O thread)");
    return GPUBP_OK;
}

int cu_query(void *ctx, const void *ptr, gpubp_memory_space *space)
{
    (void)ctx;
    cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e == cudaErrorInvalidValue) { // an unknown host pointer on old runtimes
        (void)cudaGetLastError();
        *space = GPUBP_MEM_HOST;
        return GPUBP_OK;
    }
    CU_CHECK(e, "cudaPointerGetAttributes");
    // managed memory counts as host, as ADIOS2 does
    *space = a.type == cudaMemoryTypeDevice ? GPUBP_MEM_GPU : GPUBP_MEM_HOST;
    return GPUBP_OK;
}

// Pinned memory: page-aligned host memory registered with cudaHostRegister, which is about ten
// times faster than cudaHostAlloc for the sizes of a staging pool (docs/design.md section 5 table).
// Slots of 2 MiB or more are aligned to 2 MiB and advised as transparent huge pages (where the
// kernel has them): fewer pages to pin, and fewer TLB entries for the copy engine's writes and
// the kernel's pwrite reads of the pool. GPUBP_PINNED_THP=0 keeps 4 KiB pages (a diagnostic).
static bool thp_wanted(size_t sz)
{
    const char *v = std::getenv("GPUBP_PINNED_THP");
    return sz >= ((size_t)2 << 20) && !(v && std::strcmp(v, "0") == 0);
}

int cu_host_alloc(void *ctx, void **p, size_t n)
{
    (void)ctx;
    size_t sz = (n + 4095) & ~(size_t)4095;
    void *q = nullptr;
    bool thp = thp_wanted(sz);
    int e = posix_memalign(&q, thp ? (size_t)2 << 20 : 4096, sz ? sz : 4096);
    if (e) return gbp_error(GPUBP_ERR_NOMEM, e, "pinned allocation of %zu bytes failed", n);
#ifdef MADV_HUGEPAGE
    if (thp) (void)madvise(q, sz, MADV_HUGEPAGE); // advice: refused where there are none
#endif
    cudaError_t ce = cudaHostRegister(q, sz ? sz : 4096, cudaHostRegisterPortable);
    if (ce != cudaSuccess) {
        std::free(q); // from posix_memalign above: this backend's pinned allocator
        return cuda_fail(ce, "cudaHostRegister (staging pool)");
    }
    *p = q;
    return GPUBP_OK;
}

void cu_host_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)n;
    if (!p) return;
    (void)cudaHostUnregister(p); // nothing to report at teardown
    std::free(p);
}

int cu_dev_alloc(void *ctx, void **p, size_t n)
{
    (void)ctx;
    CU_CHECK(cudaMalloc(p, n ? n : 1), "cudaMalloc");
    return GPUBP_OK;
}

void cu_dev_free(void *ctx, void *p)
{
    (void)ctx;
    if (p) (void)cudaFree(p);
}

cudaMemcpyKind kind_of(gbp_copy_kind k)
{
    switch (k) {
    case GBP_COPY_D2H: return cudaMemcpyDeviceToHost;
    case GBP_COPY_H2D: return cudaMemcpyHostToDevice;
    case GBP_COPY_D2D: return cudaMemcpyDeviceToDevice;
    default: return cudaMemcpyHostToHost;
    }
}

int copy2d(cu_ctx *c, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
           size_t height, cudaMemcpyKind k)
{
    if (height == 1) {
        CU_CHECK(cudaMemcpyAsync(dst, src, width, k, c->stream), "cudaMemcpyAsync");
        return GPUBP_OK;
    }
    if (spitch <= c->max_pitch && dpitch <= c->max_pitch) {
        CU_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, k, c->stream),
                 "cudaMemcpy2DAsync");
        return GPUBP_OK;
    }
    for (size_t y = 0; y < height; y++) // pitches beyond the device's limit: row by row
        CU_CHECK(cudaMemcpyAsync((unsigned char *)dst + y * dpitch,
                                 (const unsigned char *)src + y * spitch, width, k, c->stream),
                 "cudaMemcpyAsync (row)");
    return GPUBP_OK;
}

int cu_copy_async(void *ctx, const gbp_copy3d *k)
{
    cu_ctx *c = (cu_ctx *)ctx;
    cudaMemcpyKind kind = kind_of(k->kind);
    size_t w = k->width, h = k->height, d = k->depth;
    size_t sp = k->spitch, ss = k->sslice, dp = k->dpitch, ds = k->dslice;
    if (h == 1) { // slices of one row: rows strided by the slice pitch
        h = d; sp = ss; dp = ds; d = 1;
    }
    if (h == 1) { sp = dp = w; }
    if (d == 1) return copy2d(c, k->dst, dp, k->src, sp, w, h, kind);
    bool fits = sp <= c->max_pitch && dp <= c->max_pitch && sp && dp && ss % sp == 0 &&
                ds % dp == 0 && ss / sp >= h && ds / dp >= h;
    if (fits) {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcPtr = make_cudaPitchedPtr(const_cast<void *>(k->src), sp, w, ss / sp);
        p.dstPtr = make_cudaPitchedPtr(k->dst, dp, w, ds / dp);
        p.extent = make_cudaExtent(w, h, d);
        p.kind = kind;
        CU_CHECK(cudaMemcpy3DAsync(&p, c->stream), "cudaMemcpy3DAsync");
        return GPUBP_OK;
    }
    for (size_t z = 0; z < d; z++) {
        int rc = copy2d(c, (unsigned char *)k->dst + z * ds, dp,
                        (const unsigned char *)k->src + z * ss, sp, w, h, kind);
        if (rc) return rc;
    }
    return GPUBP_OK;
}

int cu_mm_begin(void *ctx, int type)
{
    (void)type;
    cu_ctx *c = (cu_ctx *)ctx;
    c->mm_have = 0;
    c->mm_index = 0;
    return GPUBP_OK;
}

int cu_mm_region(void *ctx, int type, const void *dptr, size_t width, size_t height, size_t depth,
                 size_t pitch, size_t slice)
{
    cu_ctx *c = (cu_ctx *)ctx;
    switch (type) {
    case GPUBP_TYPE_INT8: case GPUBP_TYPE_CHAR:
        return mm_region_t<signed char>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_UINT8: return mm_region_t<unsigned char>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_INT16: return mm_region_t<int16_t>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_UINT16: return mm_region_t<uint16_t>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_INT32: return mm_region_t<int32_t>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_UINT32: return mm_region_t<uint32_t>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_INT64: return mm_region_t<long long>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_UINT64:
        return mm_region_t<unsigned long long>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_FLOAT: return mm_region_t<float>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_DOUBLE: return mm_region_t<double>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_FLOAT_COMPLEX: return mm_region_t<cf>(c, dptr, width, height, depth, pitch, slice);
    case GPUBP_TYPE_DOUBLE_COMPLEX: return mm_region_t<cd>(c, dptr, width, height, depth, pitch, slice);
    default: return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "CUDA min/max: type %d has no min/max", type);
    }
}

int cu_mm_end(void *ctx, int type, void *out)
{
    cu_ctx *c = (cu_ctx *)ctx;
    size_t el = gbp_type_size(type);
    if (!c->mm_have) return GPUBP_OK;
    CU_CHECK(cudaMemcpyAsync(out, c->scratch + result_off(type), 2 * el, cudaMemcpyDeviceToHost,
                             c->stream), "cudaMemcpyAsync (min/max result)");
    return GPUBP_OK;
}

int cu_event_create(void *ctx, void **ev)
{
    (void)ctx;
    cudaEvent_t e;
    // blocking sync: an I/O thread waiting for a copy sleeps instead of spinning on a core
    CU_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync),
             "cudaEventCreateWithFlags");
    *ev = (void *)e;
    return GPUBP_OK;
}

void cu_event_destroy(void *ctx, void *ev)
{
    (void)ctx;
    if (ev) (void)cudaEventDestroy((cudaEvent_t)ev);
}

int cu_event_record(void *ctx, void *ev)
{
    CU_CHECK(cudaEventRecord((cudaEvent_t)ev, ((cu_ctx *)ctx)->stream), "cudaEventRecord");
    return GPUBP_OK;
}

int cu_event_wait(void *ctx, void *ev)
{
    (void)ctx;
    CU_CHECK(cudaEventSynchronize((cudaEvent_t)ev), "cudaEventSynchronize (staging slot)");
    return GPUBP_OK;
}

int cu_sync(void *ctx)
{
    CU_CHECK(cudaStreamSynchronize(((cu_ctx *)ctx)->stream), "cudaStreamSynchronize");
    return GPUBP_OK;
}

int cu_set_user_stream(void *ctx, void *stream)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (stream && !c->user_ev) {
        CU_CHECK(cudaEventCreateWithFlags(&c->user_ev, cudaEventDisableTiming), "cudaEventCreate");
        CU_CHECK(cudaEventCreateWithFlags(&c->lib_ev, cudaEventDisableTiming), "cudaEventCreate");
    }
    c->user = (cudaStream_t)stream;
    return GPUBP_OK;
}

int cu_fence(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c->user) return GPUBP_OK;
    CU_CHECK(cudaEventRecord(c->user_ev, c->user), "cudaEventRecord (user stream)");
    CU_CHECK(cudaStreamWaitEvent(c->stream, c->user_ev, 0), "cudaStreamWaitEvent (user stream)");
    return GPUBP_OK;
}

int cu_signal(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c->user) return GPUBP_OK;
    CU_CHECK(cudaEventRecord(c->lib_ev, c->stream), "cudaEventRecord (library stream)");
    CU_CHECK(cudaStreamWaitEvent(c->user, c->lib_ev, 0), "cudaStreamWaitEvent (library stream)");
    return GPUBP_OK;
}

const gbp_devops cu_ops = {
    "CUDA",
    cu_open, cu_close, cu_bind, cu_present, cu_query,
    cu_host_alloc, cu_host_free, cu_dev_alloc, cu_dev_free,
    cu_copy_async,
    cu_mm_begin, cu_mm_region, cu_mm_end,
    cu_event_create, cu_event_destroy, cu_event_record, cu_event_wait,
    cu_sync,
    cu_set_user_stream, cu_fence, cu_signal,
    NULL, // check_idle: the simulated device's alone
};

} // namespace

extern "C" const gbp_devops *gbp_cuda_ops(void) { return &cu_ops; }

void *gbp_cuda_stream_of(void *ctx) { return ((cu_ctx *)ctx)->stream; }
