// The batched device codec of the CUDA backend (common/dzops.h): Blosc2's byte and bit shuffle
// as kernels, and nvCOMP's batched LZ4, zstd and deflate, loaded at run time with dlopen
// ("libnvcomp.so.6", or the path in GPUBP_NVCOMP_LIBRARY), so that a libgpubp built with the
// nvCOMP headers runs where the library is absent (the CPU codecs are used then, and
// unavailable() says why). Never linked, never redistributed.
//
// A context has its own stream, ordered after the library's stream when it starts work on data
// the library stream produced (the user's stream fence, uploads) and before it where the library
// stream reads what it produced (the assembled output, the decoded block), so that coding a
// piece overlaps the copies of the previous one.
//
// zlib streams: nvCOMP deflate writes raw deflate (RFC 1951); a Blosc2 zlib stream is the zlib
// format (RFC 1950): the 2-byte header 78 01 and the Adler-32 of the data, big-endian, after it,
// both added here (the Adler-32 by a kernel). Decoding strips them and checks the Adler-32.
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "common/common.h"
#include "common/dzops.h"
#include "memspace/dz_stub.h"
#include "memspace/mem_dz.h"
}

#include "cuda/cuda_dz.h"
#include "cuda/dz_kernels.h"

#ifdef GPUBP_HAVE_NVCOMP
#include <nvcomp/deflate.h>
#include <nvcomp/lz4.h>
#include <nvcomp/zstd.h>
#endif

namespace {

// Blosc2 codec codes (lib/compress GBP_BLOSC_*)
const int kLZ4 = 1, kLZ4HC = 2, kZLIB = 4, kZSTD = 5;
#ifdef GPUBP_HAVE_NVCOMP
const size_t kAlign = 16; // every nvCOMP buffer: at least its required alignment (4 or 8)
#endif

int dz_fail(cudaError_t e, const char *what)
{
    return gbp_error(e == cudaErrorMemoryAllocation ? GPUBP_ERR_NOMEM : GPUBP_ERR_DEVICE, (int)e,
                     "CUDA (device codec): %s failed: %s (%s)", what, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

#define DZ_CHECK(call, what)                                   \
    do {                                                       \
        cudaError_t dz_e_ = (call);                            \
        if (dz_e_ != cudaSuccess) return dz_fail(dz_e_, what); \
    } while (0)

#ifdef GPUBP_HAVE_NVCOMP
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
#endif

// ---- nvCOMP, loaded at run time ------------------------------------------------------------------

#ifdef GPUBP_HAVE_NVCOMP
// The six entry points of one batched codec, with its option types.
template <typename CO, typename DO> struct api {
    nvcompStatus_t (*ctemp)(size_t, size_t, CO, size_t *, size_t, cudaStream_t);
    nvcompStatus_t (*cmax)(size_t, CO, size_t *);
    nvcompStatus_t (*comp)(const void *const *, const size_t *, size_t, size_t, void *, size_t,
                           void *const *, size_t *, CO, nvcompStatus_t *, cudaStream_t);
    nvcompStatus_t (*dtemp)(size_t, size_t, DO, size_t *, size_t, cudaStream_t);
    nvcompStatus_t (*decomp)(const void *const *, const size_t *, const size_t *, size_t *, size_t,
                             void *const, size_t, void *const *, DO, nvcompStatus_t *,
                             cudaStream_t);
    // optional (NULL: every buffer kAlign-aligned, as before nvCOMP said its needs)
    nvcompStatus_t (*dalign)(DO, nvcompAlignmentRequirements_t *);
};
typedef api<nvcompBatchedLZ4CompressOpts_t, nvcompBatchedLZ4DecompressOpts_t> lz4_api;
typedef api<nvcompBatchedZstdCompressOpts_t, nvcompBatchedZstdDecompressOpts_t> zstd_api;
typedef api<nvcompBatchedDeflateCompressOpts_t, nvcompBatchedDeflateDecompressOpts_t> deflate_api;

struct nvlib {
    pthread_once_t once;
    void *h;
    char why[400];
    lz4_api lz4;
    zstd_api zstd;
    deflate_api deflate;
};
nvlib g_nv = {PTHREAD_ONCE_INIT, NULL, "", {}, {}, {}};

template <typename F> bool sym(void *h, const char *name, F *f, char *why, size_t wl)
{
    void *p = dlsym(h, name);
    if (!p) {
        snprintf(why, wl, "%s has no %s", "libnvcomp", name);
        return false;
    }
    memcpy(f, &p, sizeof p);
    return true;
}

#define NV_API(a, C)                                                                         \
    (sym(h, "nvcompBatched" C "CompressGetTempSize", &a.ctemp, g_nv.why, sizeof g_nv.why) &&  \
     sym(h, "nvcompBatched" C "CompressGetMaxOutputChunkSize", &a.cmax, g_nv.why,            \
         sizeof g_nv.why) &&                                                                  \
     sym(h, "nvcompBatched" C "CompressAsync", &a.comp, g_nv.why, sizeof g_nv.why) &&         \
     sym(h, "nvcompBatched" C "DecompressGetTempSize", &a.dtemp, g_nv.why, sizeof g_nv.why) && \
     sym(h, "nvcompBatched" C "DecompressAsync", &a.decomp, g_nv.why, sizeof g_nv.why))

void nv_load(void)
{
    const char *path = getenv("GPUBP_NVCOMP_LIBRARY");
    if (!path || !*path) path = "libnvcomp.so.6";
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(g_nv.why, sizeof g_nv.why,
                 "nvCOMP is not loaded (dlopen %s: %s; set GPUBP_NVCOMP_LIBRARY to its path)", path,
                 e ? e : "failed");
        return;
    }
    if (NV_API(g_nv.lz4, "LZ4") && NV_API(g_nv.zstd, "Zstd") && NV_API(g_nv.deflate, "Deflate")) {
        g_nv.h = h;
        char none[8];
        sym(h, "nvcompBatchedLZ4DecompressGetRequiredAlignments", &g_nv.lz4.dalign, none, 0);
        sym(h, "nvcompBatchedZstdDecompressGetRequiredAlignments", &g_nv.zstd.dalign, none, 0);
        sym(h, "nvcompBatchedDeflateDecompressGetRequiredAlignments", &g_nv.deflate.dalign, none,
            0);
        return;
    }
    dlclose(h);
}

const char *nv_why(void)
{
    pthread_once(&g_nv.once, nv_load);
    return g_nv.h ? NULL : g_nv.why;
}

int nv_fail(nvcompStatus_t s, const char *what)
{
    return gbp_error(s == nvcompErrorCudaError ? GPUBP_ERR_DEVICE : GPUBP_ERR_CODEC, (int)s,
                     "nvCOMP: %s failed (nvcompStatus_t %d)", what, (int)s);
}

#define NV_CHECK(call, what)                                 \
    do {                                                     \
        nvcompStatus_t nv_s_ = (call);                       \
        if (nv_s_ != nvcompSuccess) return nv_fail(nv_s_, what); \
    } while (0)

// nvCOMP deflate's algorithm for a Blosc2 level (docs/compression.md, "zlib: the default and the
// faster modes"), batch k of a put: GPUBP_NVCOMP_DEFLATE_ALGO (0..5) when set; else level 1
// alternates 2 ("beats zlib level 1 on ratio") and 1 ("high throughput") batch by batch, the
// even batches 2 (a put of one batch codes as before); levels 2-5 take 2, 6-9 4.
int deflate_algo(int level, unsigned k)
{
    const char *e = getenv("GPUBP_NVCOMP_DEFLATE_ALGO");
    if (e && *e >= '0' && *e <= '5' && !e[1]) return *e - '0';
    if (level <= 1) return (k & 1) ? 1 : 2;
    return level <= 5 ? 2 : 4;
}
#endif // GPUBP_HAVE_NVCOMP

// ---- the per-file state ----------------------------------------------------------------------------

struct dbuf {
    void *p;
    size_t cap;
};

// Grows b to n bytes of device memory (host: pinned host memory); the old contents are lost.
int grow_buf(dbuf *b, size_t n, bool host)
{
    if (n <= b->cap) return GPUBP_OK;
    if (b->p) host ? cudaFreeHost(b->p) : cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
    cudaError_t e = host ? cudaMallocHost(&b->p, n) : cudaMalloc(&b->p, n);
    if (e != cudaSuccess) return dz_fail(e, host ? "cudaMallocHost (device codec staging)"
                                                 : "cudaMalloc (device codec scratch)");
    b->cap = n;
    return GPUBP_OK;
}

int dgrow(dbuf *b, size_t n) { return grow_buf(b, n, false); }
int hgrow(dbuf *b, size_t n) { return grow_buf(b, n, true); }

// A channel of segment lists uploaded for the assembly kernel on one stream: a pinned staging
// buffer, its device copy, and the event after the last upload out of the staging buffer.
struct segch {
    dbuf d, h;
    cudaEvent_t ev;
    int pending;
};

struct cz {
    void *dctx;
    cudaStream_t lib, st;
    cudaEvent_t ev_lib, ev_me;
    // the assemblies of encoded pieces run on a stream of their own (ast), so that the writes out
    // of piece k start once k is assembled, not after piece k + 1 (queued on st before k's
    // assembly) is coded; st waits for the last assembly before it overwrites what one reads
    cudaStream_t ast;
    cudaEvent_t ev_asm, ev_st;
    cudaEvent_t asm_dep; // what the next assembly waits for: the coded set's results, or NULL: st
    int asm_pending;     // ev_asm recorded since st last waited for it
    segch sch[2];        // segment uploads: on st (gather, decode) and on ast (assemblies)
    // per coded set (encode_launch; decode uses set 0): device, then pinned host buffers
    dbuf coded[2], arr[2], adler[2], ain[2], h_arr[2], h_res[2];
    dbuf tmp, aout;
    size_t slot[2];           // coded stream stride of the set's last encode
    int wrap[2];              // its streams need the zlib wrapping
    cudaEvent_t ev_res[2];    // its results are in h_res
    size_t n_res[2];          // its streams, their lengths and the caller's result arrays
    const size_t *len_res[2];
    int16_t *run_res[2];
    size_t *clen_res[2];
    int cur;                  // the set of the last encode_wait (assembly's coded streams)
    unsigned zbatch;          // zlib batches launched since the put began (deflate_algo)
    int device;               // where its buffers are (adopt)
};

void cz_close(void *vz)
{
    cz *z = (cz *)vz;
    if (!z) return;
    if (z->st) cudaStreamSynchronize(z->st);
    if (z->ast) cudaStreamSynchronize(z->ast);
    dbuf *d[] = {&z->coded[0], &z->coded[1], &z->arr[0], &z->arr[1],     &z->adler[0],
                 &z->adler[1],  &z->ain[0],   &z->ain[1], &z->tmp,        &z->aout,
                 &z->sch[0].d,  &z->sch[1].d};
    for (dbuf *b : d)
        if (b->p) cudaFree(b->p);
    dbuf *h[] = {&z->h_arr[0], &z->h_arr[1], &z->h_res[0], &z->h_res[1], &z->sch[0].h,
                 &z->sch[1].h};
    for (dbuf *b : h)
        if (b->p) cudaFreeHost(b->p);
    for (cudaEvent_t e : z->ev_res)
        if (e) cudaEventDestroy(e);
    if (z->ev_lib) cudaEventDestroy(z->ev_lib);
    if (z->ev_me) cudaEventDestroy(z->ev_me);
    for (cudaEvent_t e : {z->sch[0].ev, z->sch[1].ev, z->ev_asm, z->ev_st})
        if (e) cudaEventDestroy(e);
    if (z->st) cudaStreamDestroy(z->st);
    if (z->ast) cudaStreamDestroy(z->ast);
    gbp_free(z);
}

int cz_open(void *dctx, void **out)
{
    cz *z = (cz *)gbp_calloc(1, sizeof *z);
    if (!z) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (device codec state)");
    z->dctx = dctx;
    z->lib = (cudaStream_t)gbp_cuda_stream_of(dctx);
    int rc = GPUBP_OK;
    cudaError_t e = cudaGetDevice(&z->device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&z->st, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&z->ev_lib, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&z->ev_me, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&z->ast, cudaStreamNonBlocking);
    for (cudaEvent_t *p : {&z->sch[0].ev, &z->sch[1].ev, &z->ev_asm, &z->ev_st})
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(p, cudaEventDisableTiming);
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        e = cudaEventCreateWithFlags(&z->ev_res[k], cudaEventDisableTiming);
    if (e != cudaSuccess) rc = dz_fail(e, "creating the device codec's stream");
    if (rc != GPUBP_OK) {
        cz_close(z);
        return rc;
    }
    *out = z;
    return GPUBP_OK;
}

// The codec's stream waits for the work queued so far on the library's stream.
int after_lib(cz *z)
{
    DZ_CHECK(cudaEventRecord(z->ev_lib, z->lib), "cudaEventRecord (library stream)");
    DZ_CHECK(cudaStreamWaitEvent(z->st, z->ev_lib, 0), "cudaStreamWaitEvent (codec stream)");
    return GPUBP_OK;
}

int st_after_asm(cz *z);

// The library's stream waits for the work queued so far on the codec's stream.
int lib_after(cz *z)
{
    DZ_CHECK(cudaEventRecord(z->ev_me, z->st), "cudaEventRecord (codec stream)");
    DZ_CHECK(cudaStreamWaitEvent(z->lib, z->ev_me, 0), "cudaStreamWaitEvent (library stream)");
    return GPUBP_OK;
}

#ifdef GPUBP_HAVE_NVCOMP
int wait_me(cz *z)
{
    DZ_CHECK(cudaStreamSynchronize(z->st), "cudaStreamSynchronize (codec stream)");
    return GPUBP_OK;
}
#endif

const char *cz_unavailable(int codec)
{
    if (codec != kLZ4 && codec != kLZ4HC && codec != kZLIB && codec != kZSTD)
        return codec == 0 ? "blosclz has no device codec" : "unknown codec";
#ifdef GPUBP_HAVE_NVCOMP
    return nv_why();
#else
    return "this libgpubp was built without the nvCOMP headers (cmake -DNVCOMP_ROOT=...)";
#endif
}

int cz_filter(void *vz, int filter, int inverse, const void *in, void *out, size_t len,
              size_t bsz, size_t ts)
{
    cz *z = (cz *)vz;
    if (len == 0) return GPUBP_OK;
    GBP_RETURN_ERROR_IF(bsz == 0 || ts == 0 || (filter != 1 && filter != 2),
                        GPUBP_ERR_INVALID_ARG, "device filter %d, block size %zu", filter, bsz);
    GBP_RETURN_ERROR_IF(filter == 1 && bsz % ts != 0, GPUBP_ERR_INVALID_ARG,
                        "device byte shuffle: block size %zu, type size %zu", bsz, ts);
    GBP_FORWARD_IF_ERROR(st_after_asm(z)); // out may be a buffer an assembly reads
    DZ_CHECK(gbp_dzk_shuffle(filter, (const uint8_t *)in, (uint8_t *)out, len, bsz, ts, inverse,
                             z->st),
             "the shuffle kernel");
    return inverse ? lib_after(z) : GPUBP_OK;
}

#ifdef GPUBP_HAVE_NVCOMP
// The arrays of a batch of n streams, in z->arr (device) and z->h_arr (pinned host), 8 bytes an
// entry: in ptrs, in sizes, out ptrs, out sizes, out capacities, aux ptrs, statuses; then the runs.
struct batch_view {
    void **in_p;
    size_t *in_n;
    void **out_p;
    size_t *out_n;
    size_t *out_cap;
    const uint8_t **aux;
    int *status; // nvcompStatus_t, 8 bytes apart... kept as int64 slots below
    int16_t *run;
};

batch_view view(void *base, size_t n)
{
    batch_view v;
    uint8_t *b = (uint8_t *)base;
    v.in_p = (void **)b;
    v.in_n = (size_t *)(b + 8 * n);
    v.out_p = (void **)(b + 16 * n);
    v.out_n = (size_t *)(b + 24 * n);
    v.out_cap = (size_t *)(b + 32 * n);
    v.aux = (const uint8_t **)(b + 40 * n);
    v.status = (int *)(b + 48 * n); // n ints (4 bytes each) in an area of 8 n bytes
    v.run = (int16_t *)(b + 56 * n);
    return v;
}

size_t batch_bytes(size_t n) { return 58 * n + 64; }

#endif // GPUBP_HAVE_NVCOMP

// Uploads the segments and writes them into out on the codec's stream.
// The segments into out on stream `s` through channel c (0: st, 1: ast).
int run_segments(cz *z, int c, uint8_t *out, const gbp_dz_seg *seg, size_t nseg)
{
    if (nseg == 0) return GPUBP_OK;
    segch *ch = &z->sch[c];
    cudaStream_t s = c ? z->ast : z->st;
    if (ch->pending) { // the previous upload out of the staging buffer must be done
        DZ_CHECK(cudaEventSynchronize(ch->ev), "cudaEventSynchronize (segments)");
        ch->pending = 0;
    }
    size_t bytes = nseg * sizeof *seg;
    GBP_FORWARD_IF_ERROR(hgrow(&ch->h, bytes));
    GBP_FORWARD_IF_ERROR(dgrow(&ch->d, bytes));
    memcpy(ch->h.p, seg, bytes);
    DZ_CHECK(cudaMemcpyAsync(ch->d.p, ch->h.p, bytes, cudaMemcpyHostToDevice, s),
             "cudaMemcpyAsync (segments)");
    DZ_CHECK(cudaEventRecord(ch->ev, s), "cudaEventRecord (segments)");
    ch->pending = 1;
    size_t maxlen = 0;
    for (size_t i = 0; i < nseg; i++)
        if (seg[i].len > maxlen) maxlen = seg[i].len;
    DZ_CHECK(gbp_dzk_assemble((const gbp_dz_seg *)ch->d.p, nseg, maxlen, out,
                              (const uint8_t *)z->coded[z->cur].p, z->slot[z->cur],
                              z->wrap[z->cur], (const uint32_t *)z->adler[z->cur].p, s),
             "the assembly kernel");
    return GPUBP_OK;
}

// The codec's stream waits for the assemblies queued so far (before it overwrites a coded set,
// a filtered piece or the decode buffers that one may read).
int st_after_asm(cz *z)
{
    if (!z->asm_pending) return GPUBP_OK;
    DZ_CHECK(cudaStreamWaitEvent(z->st, z->ev_asm, 0), "cudaStreamWaitEvent (codec stream)");
    z->asm_pending = 0;
    return GPUBP_OK;
}

// On the assembly stream, after the coded set's results (the set's coding is done: encode_wait
// waited for them) or, after a decode, after the work queued on the codec's stream so far.
int cz_assemble(void *vz, uint8_t *out, const gbp_dz_seg *seg, size_t nseg)
{
    cz *z = (cz *)vz;
    if (nseg == 0) return GPUBP_OK;
    cudaEvent_t dep = z->asm_dep;
    if (!dep) {
        DZ_CHECK(cudaEventRecord(z->ev_st, z->st), "cudaEventRecord (codec stream)");
        dep = z->ev_st;
    }
    DZ_CHECK(cudaStreamWaitEvent(z->ast, dep, 0), "cudaStreamWaitEvent (assembly stream)");
    GBP_FORWARD_IF_ERROR(run_segments(z, 1, out, seg, nseg));
    DZ_CHECK(cudaEventRecord(z->ev_asm, z->ast), "cudaEventRecord (assembly stream)");
    z->asm_pending = 1;
    // the library's copies out of `out` come after
    DZ_CHECK(cudaStreamWaitEvent(z->lib, z->ev_asm, 0), "cudaStreamWaitEvent (library stream)");
    return GPUBP_OK;
}

#ifdef GPUBP_HAVE_NVCOMP
// Copies stream i of a batch (src[i], len[i]) to dst + i * stride on the codec's stream (src[i]
// NULL: not stream i).
int gather(cz *z, uint8_t *dst, size_t stride, const uint8_t *const *src, const size_t *len,
           size_t n)
{
    gbp_dz_seg *seg = (gbp_dz_seg *)gbp_malloc((n ? n : 1) * sizeof *seg);
    if (!seg) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu segments)", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!src[i]) continue;
        memset(&seg[k], 0, sizeof seg[k]);
        seg[k].dst = i * stride;
        seg[k].src = (uint64_t)(uintptr_t)src[i];
        seg[k].len = (uint32_t)len[i];
        seg[k].kind = GBP_SEG_DEV;
        k++;
    }
    int rc = run_segments(z, 0, dst, seg, k);
    gbp_free(seg);
    return rc;
}

#endif // GPUBP_HAVE_NVCOMP

#ifdef GPUBP_HAVE_NVCOMP
template <typename CO, typename DO>
int nv_compress(cz *z, const api<CO, DO> &a, CO opts, size_t n, size_t maxlen, size_t total,
                const batch_view &d)
{
    size_t temp = 0;
    NV_CHECK(a.ctemp(n, maxlen, opts, &temp, total, z->st), "GetTempSize (compression)");
    GBP_FORWARD_IF_ERROR(dgrow(&z->tmp, temp ? temp : 1));
    NV_CHECK(a.comp((const void *const *)d.in_p, d.in_n, maxlen, n, z->tmp.p, temp,
                    (void *const *)d.out_p, d.out_n, opts, (nvcompStatus_t *)d.status, z->st),
             "batched compression");
    return GPUBP_OK;
}

template <typename CO, typename DO>
int nv_maxout(const api<CO, DO> &a, CO opts, size_t maxlen, size_t *out)
{
    NV_CHECK(a.cmax(maxlen, opts, out), "GetMaxOutputChunkSize");
    return GPUBP_OK;
}

// The input and output alignment nvCOMP needs for decompression (kAlign when it cannot say).
template <typename CO, typename DO>
void nv_dalign(const api<CO, DO> &a, DO opts, size_t *ain, size_t *aout)
{
    nvcompAlignmentRequirements_t r = {kAlign, kAlign, kAlign};
    if (a.dalign && a.dalign(opts, &r) != nvcompSuccess) r.input = r.output = kAlign;
    *ain = r.input ? r.input : 1;
    *aout = r.output ? r.output : 1;
}

template <typename CO, typename DO>
int nv_decompress(cz *z, const api<CO, DO> &a, DO opts, size_t n, size_t maxlen, size_t total,
                  const batch_view &d)
{
    size_t temp = 0;
    NV_CHECK(a.dtemp(n, maxlen, opts, &temp, total, z->st), "GetTempSize (decompression)");
    GBP_FORWARD_IF_ERROR(dgrow(&z->tmp, temp ? temp : 1));
    NV_CHECK(a.decomp((const void *const *)d.in_p, d.in_n, d.out_cap, d.out_n, n, z->tmp.p, temp,
                      (void *const *)d.out_p, opts, (nvcompStatus_t *)d.status, z->st),
             "batched decompression");
    return GPUBP_OK;
}
#endif

int cz_encode_launch(void *vz, int set, int codec, int level, const uint8_t *in, size_t n,
                     const size_t *off, const size_t *len, int16_t *run, size_t *clen)
{
    cz *z = (cz *)vz;
    GBP_RETURN_ERROR_IF(set < 0 || set > 1, GPUBP_ERR_INVALID_ARG, "coded set %d", set);
    z->n_res[set] = 0; // n once the results are queued
    if (n == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(st_after_asm(z)); // the set's buffers: read by its last assemblies
    const char *why = cz_unavailable(codec);
    GBP_RETURN_ERROR_IF(why, GPUBP_ERR_NOT_SUPPORTED, "%s", why);
#ifndef GPUBP_HAVE_NVCOMP
    (void)level; (void)in; (void)off; (void)len; (void)run; (void)clen;
    return GPUBP_ERR_NOT_SUPPORTED; /* unreachable: unavailable() gave a reason */
#else
    size_t maxlen = 0, total = 0;
    int aligned = (uintptr_t)in % kAlign == 0;
    for (size_t i = 0; i < n; i++) {
        if (len[i] > maxlen) maxlen = len[i];
        total += len[i];
        if (off[i] % kAlign) aligned = 0;
    }
    nvcompBatchedLZ4CompressOpts_t lo = nvcompBatchedLZ4CompressDefaultOpts;
    nvcompBatchedZstdCompressOpts_t zo = nvcompBatchedZstdCompressDefaultOpts;
    nvcompBatchedDeflateCompressOpts_t fo = nvcompBatchedDeflateCompressDefaultOpts;
    fo.algorithm = deflate_algo(level, z->zbatch);
    if (codec == kZLIB) z->zbatch++;
    size_t maxout = 0;
    if (codec == kZLIB) GBP_FORWARD_IF_ERROR(nv_maxout(g_nv.deflate, fo, maxlen, &maxout));
    else if (codec == kZSTD) GBP_FORWARD_IF_ERROR(nv_maxout(g_nv.zstd, zo, maxlen, &maxout));
    else GBP_FORWARD_IF_ERROR(nv_maxout(g_nv.lz4, lo, maxlen, &maxout));
    // the set's buffers are free: its last results were waited for (or never launched), and the
    // assemblies out of its coded streams were queued before this on the same stream
    z->slot[set] = round_up(maxout, kAlign);
    z->wrap[set] = codec == kZLIB;
    size_t inslot = round_up(maxlen, kAlign);
    GBP_FORWARD_IF_ERROR(dgrow(&z->coded[set], z->slot[set] * n));
    GBP_FORWARD_IF_ERROR(dgrow(&z->arr[set], batch_bytes(n)));
    GBP_FORWARD_IF_ERROR(hgrow(&z->h_arr[set], batch_bytes(n)));
    GBP_FORWARD_IF_ERROR(hgrow(&z->h_res[set], 16 * n + 16));
    GBP_FORWARD_IF_ERROR(dgrow(&z->adler[set], 4 * n + 4));
    if (!aligned) GBP_FORWARD_IF_ERROR(dgrow(&z->ain[set], inslot * n));
    batch_view h = view(z->h_arr[set].p, n), d = view(z->arr[set].p, n);
    for (size_t i = 0; i < n; i++) {
        h.aux[i] = in + off[i]; // the stream where it is
        h.in_p[i] = aligned ? (void *)(in + off[i]) : (void *)((uint8_t *)z->ain[set].p + i * inslot);
        h.in_n[i] = len[i];
        h.out_p[i] = (uint8_t *)z->coded[set].p + i * z->slot[set];
    }
    if (!aligned) GBP_FORWARD_IF_ERROR(gather(z, (uint8_t *)z->ain[set].p, inslot, h.aux, len, n));
    DZ_CHECK(cudaMemcpyAsync(z->arr[set].p, z->h_arr[set].p, 24 * n, cudaMemcpyHostToDevice, z->st),
             "cudaMemcpyAsync (batch arrays)");
    DZ_CHECK(gbp_dzk_runs((const uint8_t *const *)d.in_p, d.in_n, d.run, n, z->st), "the run kernel");
    if (codec == kZLIB) GBP_FORWARD_IF_ERROR(nv_compress(z, g_nv.deflate, fo, n, maxlen, total, d));
    else if (codec == kZSTD) GBP_FORWARD_IF_ERROR(nv_compress(z, g_nv.zstd, zo, n, maxlen, total, d));
    else GBP_FORWARD_IF_ERROR(nv_compress(z, g_nv.lz4, lo, n, maxlen, total, d));
    if (z->wrap[set]) {
        DZ_CHECK(gbp_dzk_adler((const uint8_t *const *)d.in_p, d.in_n, (uint32_t *)z->adler[set].p,
                               NULL, NULL, n, z->st),
                 "the Adler-32 kernel");
    }
    uint8_t *res = (uint8_t *)z->h_res[set].p;
    DZ_CHECK(cudaMemcpyAsync(res, d.out_n, 8 * n, cudaMemcpyDeviceToHost, z->st),
             "cudaMemcpyAsync (coded sizes)");
    DZ_CHECK(cudaMemcpyAsync(res + 8 * n, d.status, 4 * n, cudaMemcpyDeviceToHost, z->st),
             "cudaMemcpyAsync (statuses)");
    DZ_CHECK(cudaMemcpyAsync(res + 12 * n, d.run, 2 * n, cudaMemcpyDeviceToHost, z->st),
             "cudaMemcpyAsync (runs)");
    DZ_CHECK(cudaEventRecord(z->ev_res[set], z->st), "cudaEventRecord (coded sizes)");
    z->n_res[set] = n;
    z->len_res[set] = len;
    z->run_res[set] = run;
    z->clen_res[set] = clen;
    return GPUBP_OK;
#endif
}

int cz_encode_wait(void *vz, int set)
{
    cz *z = (cz *)vz;
    GBP_RETURN_ERROR_IF(set < 0 || set > 1, GPUBP_ERR_INVALID_ARG, "coded set %d", set);
    z->cur = set;
    z->asm_dep = z->ev_res[set]; // the assemblies out of this set come after its coding
    size_t n = z->n_res[set];
    if (n == 0) return GPUBP_OK;
    z->n_res[set] = 0;
    DZ_CHECK(cudaEventSynchronize(z->ev_res[set]), "cudaEventSynchronize (coded sizes)");
#ifdef GPUBP_HAVE_NVCOMP
    const uint8_t *res = (const uint8_t *)z->h_res[set].p;
    const size_t *len = z->len_res[set];
    for (size_t i = 0; i < n; i++) {
        size_t c;
        int st;
        memcpy(&c, res + 8 * i, 8);
        memcpy(&st, res + 8 * n + 4 * i, 4);
        memcpy(&z->run_res[set][i], res + 12 * n + 2 * i, 2);
        c += z->wrap[set] ? 6 : 0;
        z->clen_res[set][i] = st == nvcompSuccess && c < len[i] ? c : 0; // else stored raw
    }
#endif
    return GPUBP_OK;
}

#ifndef GPUBP_HAVE_NVCOMP
int cz_decode(void *vz, int codec, const uint8_t *in, uint8_t *out, const gbp_dz_dstream *s,
              size_t n)
{
    (void)vz; (void)in; (void)out; (void)s; (void)n;
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s", cz_unavailable(codec));
}
#else
// Codec streams are decoded where they are (in) into their place (out) when nvCOMP's alignment
// allows, else gathered into aligned slots of z->ain and decoded into slots of z->aout, from
// which the placement kernel copies them, with the stored streams and the runs.
int cz_decode(void *vz, int codec, const uint8_t *in, uint8_t *out, const gbp_dz_dstream *s,
              size_t n)
{
    cz *z = (cz *)vz;
    z->asm_dep = NULL; // placements after the decode: after the codec stream's work
    GBP_FORWARD_IF_ERROR(st_after_asm(z));
    size_t nc = 0, maxlen = 0, total = 0, maxc = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].kind == GBP_DSTREAM_CODEC) {
            nc++;
            if (s[i].len > maxlen) maxlen = s[i].len;
            if (s[i].clen > maxc) maxc = s[i].clen;
            total += s[i].len;
        }
    const char *why = nc ? cz_unavailable(codec) : NULL;
    GBP_RETURN_ERROR_IF(why, GPUBP_ERR_NOT_SUPPORTED, "%s", why);
    int wrap = codec == kZLIB;
    size_t inslot = round_up(maxc, kAlign), outslot = round_up(maxlen, kAlign);
    size_t ain = kAlign, aout = kAlign;
    if (codec == kZLIB) nv_dalign(g_nv.deflate, nvcompBatchedDeflateDecompressDefaultOpts, &ain, &aout);
    else if (codec == kZSTD) nv_dalign(g_nv.zstd, nvcompBatchedZstdDecompressDefaultOpts, &ain, &aout);
    else nv_dalign(g_nv.lz4, nvcompBatchedLZ4DecompressDefaultOpts, &ain, &aout);
    size_t skip = wrap ? 2 : 0, cut = wrap ? 6 : 0;
    // where each codec stream is decoded: in place (its slot unused) or in a slot
    size_t nin = 0, nout = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].kind != GBP_DSTREAM_CODEC) continue;
        nin += (uintptr_t)(in + s[i].src + skip) % ain != 0;
        nout += (uintptr_t)(out + s[i].dst) % aout != 0;
    }
    uint8_t *slots_in = NULL, *slots_out = NULL;
    if (nc) {
        if (nin) GBP_FORWARD_IF_ERROR(dgrow(&z->ain[0], inslot * nc));
        if (nout) GBP_FORWARD_IF_ERROR(dgrow(&z->aout, outslot * nc));
        slots_in = (uint8_t *)z->ain[0].p;
        slots_out = (uint8_t *)z->aout.p;
        GBP_FORWARD_IF_ERROR(dgrow(&z->arr[0], batch_bytes(nc)));
        GBP_FORWARD_IF_ERROR(hgrow(&z->h_arr[0], batch_bytes(nc)));
        GBP_FORWARD_IF_ERROR(hgrow(&z->h_res[0], 16 * nc + 16));
        batch_view h = view(z->h_arr[0].p, nc), d = view(z->arr[0].p, nc);
        size_t *glen = (size_t *)gbp_malloc(nc * sizeof *glen);
        const uint8_t **gsrc = (const uint8_t **)gbp_malloc(nc * sizeof *gsrc);
        int rc = glen && gsrc ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu streams)", nc);
        for (size_t i = 0, k = 0; rc == GPUBP_OK && i < n; i++) {
            if (s[i].kind != GBP_DSTREAM_CODEC) continue;
            if (s[i].clen <= cut) rc = gbp_error(GPUBP_ERR_FORMAT, 0, "a %u-byte zlib stream", s[i].clen);
            const uint8_t *src = in + s[i].src + skip;
            uint8_t *dst = out + s[i].dst;
            int gathered = (uintptr_t)src % ain != 0;
            gsrc[k] = gathered ? src : NULL;
            glen[k] = s[i].clen - cut;
            h.in_p[k] = gathered ? (void *)(slots_in + k * inslot) : (void *)src;
            h.in_n[k] = glen[k];
            h.out_p[k] = (uintptr_t)dst % aout != 0 ? (void *)(slots_out + k * outslot) : (void *)dst;
            h.out_cap[k] = s[i].len;
            h.aux[k] = in + s[i].src + s[i].clen - 4; // the stored Adler-32
            k++;
        }
        if (rc == GPUBP_OK && nin) rc = gather(z, slots_in, inslot, gsrc, glen, nc);
        gbp_free(glen);
        gbp_free(gsrc);
        GBP_FORWARD_IF_ERROR(rc);
        DZ_CHECK(cudaMemcpyAsync(z->arr[0].p, z->h_arr[0].p, 48 * nc, cudaMemcpyHostToDevice, z->st),
                 "cudaMemcpyAsync (batch arrays)");
        if (codec == kZLIB)
            GBP_FORWARD_IF_ERROR(nv_decompress(z, g_nv.deflate, nvcompBatchedDeflateDecompressDefaultOpts,
                                               nc, maxlen, total, d));
        else if (codec == kZSTD)
            GBP_FORWARD_IF_ERROR(nv_decompress(z, g_nv.zstd, nvcompBatchedZstdDecompressDefaultOpts,
                                               nc, maxlen, total, d));
        else
            GBP_FORWARD_IF_ERROR(nv_decompress(z, g_nv.lz4, nvcompBatchedLZ4DecompressDefaultOpts,
                                               nc, maxlen, total, d));
        if (wrap) {
            DZ_CHECK(gbp_dzk_adler((const uint8_t *const *)d.out_p, d.out_cap, NULL, d.aux,
                                   d.status, nc, z->st),
                     "the Adler-32 kernel");
        }
        uint8_t *res = (uint8_t *)z->h_res[0].p;
        DZ_CHECK(cudaMemcpyAsync(res, d.out_n, 8 * nc, cudaMemcpyDeviceToHost, z->st),
                 "cudaMemcpyAsync (decoded sizes)");
        DZ_CHECK(cudaMemcpyAsync(res + 8 * nc, d.status, 4 * nc, cudaMemcpyDeviceToHost, z->st),
                 "cudaMemcpyAsync (statuses)");
        GBP_FORWARD_IF_ERROR(wait_me(z));
        for (size_t i = 0, k = 0; i < n; i++) {
            if (s[i].kind != GBP_DSTREAM_CODEC) continue;
            size_t got;
            int st;
            memcpy(&got, res + 8 * k, 8);
            memcpy(&st, res + 8 * nc + 4 * k, 4);
            k++;
            GBP_RETURN_ERROR_IF(st != nvcompSuccess || got != s[i].len, GPUBP_ERR_FORMAT,
                                "blosc buffer: offset %llu: a damaged stream (nvCOMP status %d, "
                                "%zu of %u bytes%s)", (unsigned long long)s[i].src, st, got,
                                s[i].len, wrap && st == -1 ? ", Adler-32 mismatch" : "");
        }
    }
    // the other streams to their places: decoded ones from their slots, copies from in, runs
    gbp_dz_seg *seg = (gbp_dz_seg *)gbp_malloc((n ? n : 1) * sizeof *seg);
    if (!seg) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu segments)", n);
    size_t ns = 0;
    for (size_t i = 0, k = 0; i < n; i++) {
        gbp_dz_seg *g = &seg[ns];
        memset(g, 0, sizeof *g);
        g->dst = s[i].dst;
        g->len = s[i].len;
        if (s[i].kind == GBP_DSTREAM_RUN) {
            g->kind = kSegFill;
            g->inl[0] = s[i].run;
        } else if (s[i].kind == GBP_DSTREAM_COPY) {
            g->kind = GBP_SEG_DEV;
            g->src = (uint64_t)(uintptr_t)(in + s[i].src);
        } else {
            size_t slot = k++;
            if ((uintptr_t)(out + s[i].dst) % aout == 0) continue; // decoded in place
            g->kind = GBP_SEG_DEV;
            g->src = (uint64_t)(uintptr_t)(slots_out + slot * outslot);
        }
        ns++;
    }
    int rc = run_segments(z, 0, out, seg, ns);
    gbp_free(seg);
    GBP_FORWARD_IF_ERROR(rc);
    GBP_FORWARD_IF_ERROR(lib_after(z));
    return wait_me(z);
}

#endif // GPUBP_HAVE_NVCOMP

int cz_begin(void *vz)
{
    cz *z = (cz *)vz;
    z->zbatch = 0; // a put's batches alternate deflate's algorithms from its first (deflate_algo)
    return after_lib(z);
}

// A parked state for another file: on the same device, its stream idle, then ordered with the
// new file's library stream.
int cz_adopt(void *vz, void *dctx)
{
    cz *z = (cz *)vz;
    int dev = -1;
    DZ_CHECK(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev != z->device)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "device codec state of device %d, not %d",
                         z->device, dev);
    DZ_CHECK(cudaStreamSynchronize(z->st), "cudaStreamSynchronize (codec stream)");
    z->dctx = dctx;
    z->lib = (cudaStream_t)gbp_cuda_stream_of(dctx);
    DZ_CHECK(cudaStreamSynchronize(z->ast), "cudaStreamSynchronize (assembly stream)");
    z->sch[0].pending = z->sch[1].pending = 0;
    z->asm_pending = 0;
    z->asm_dep = NULL;
    z->n_res[0] = z->n_res[1] = 0;
    return GPUBP_OK;
}

const gbp_dzops cz_ops = {"nvcomp",         cz_unavailable,   cz_open,
                          cz_close,         cz_begin,         cz_filter,
                          cz_encode_launch, cz_encode_wait,   cz_assemble,
                          cz_decode,        cz_adopt};

} // namespace

extern "C" const gbp_dzops *gbp_cuda_dzops(void) { return &cz_ops; }
