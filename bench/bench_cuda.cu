// gpubp-bench's device helpers (CUDA). Every CUDA call is checked; failures print and return an
// error value.
#include <cuda_runtime.h>

#include <cstdio>

#include "bench/bench_dev.h"

static bool ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "gpubp-bench: %s: %s\n", what, cudaGetErrorString(e));
    return false;
}

__global__ static void fill_k(double *p, size_t n, double salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (double)i + salt;
}

__global__ static void check_k(const double *p, size_t n, double salt, unsigned long long *bad)
{
    unsigned long long b = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        b += p[i] != (double)i + salt;
    if (b) atomicAdd(bad, b);
}

extern "C" int bench_dev_init(const char **why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
        return 0;
    }
    if (!ok(cudaFree(nullptr), "context creation")) {
        *why = "CUDA context creation failed";
        return 0;
    }
    return 1;
}

extern "C" void *bench_dev_alloc(size_t bytes)
{
    void *p = nullptr;
    return ok(cudaMalloc(&p, bytes), "cudaMalloc") ? p : nullptr;
}

extern "C" void bench_dev_free(void *p) { ok(cudaFree(p), "cudaFree"); }

extern "C" int bench_dev_fill(double *p, size_t n, double salt)
{
    fill_k<<<1056, 256>>>(p, n, salt);
    return ok(cudaGetLastError(), "fill kernel") && ok(cudaDeviceSynchronize(), "fill kernel") ? 0 : -1;
}

extern "C" long bench_dev_check(const double *p, size_t n, double salt)
{
    unsigned long long *bad = nullptr, h = 0;
    if (!ok(cudaMalloc(&bad, sizeof *bad), "cudaMalloc")) return -1;
    bool good = ok(cudaMemset(bad, 0, sizeof *bad), "cudaMemset");
    if (good) {
        check_k<<<1056, 256>>>(p, n, salt, bad);
        good = ok(cudaGetLastError(), "check kernel") &&
               ok(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy");
    }
    ok(cudaFree(bad), "cudaFree");
    return good ? (long)h : -1;
}

extern "C" void *bench_pinned_alloc(size_t bytes)
{
    void *p = nullptr;
    return ok(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), "cudaHostAlloc") ? p : nullptr;
}

extern "C" void bench_pinned_free(void *p) { ok(cudaFreeHost(p), "cudaFreeHost"); }

extern "C" double bench_copy_GBps(int d2h, size_t total, size_t chunk)
{
    void *dev = bench_dev_alloc(total), *host = bench_pinned_alloc(chunk * 4);
    cudaStream_t s = nullptr;
    cudaEvent_t a = nullptr, b = nullptr;
    double gbps = -1;
    if (dev && host && ok(cudaStreamCreate(&s), "cudaStreamCreate") &&
        ok(cudaEventCreate(&a), "cudaEventCreate") && ok(cudaEventCreate(&b), "cudaEventCreate")) {
        bool good = true;
        for (int rep = 0; rep < 2 && good; rep++) { // the first pass warms up
            good = ok(cudaEventRecord(a, s), "cudaEventRecord");
            for (size_t off = 0, i = 0; good && off < total; off += chunk, i++) {
                size_t n = total - off < chunk ? total - off : chunk;
                char *h = (char *)host + (i % 4) * chunk, *d = (char *)dev + off;
                good = d2h ? ok(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s), "copy")
                           : ok(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s), "copy");
            }
            float ms = 0;
            good = good && ok(cudaEventRecord(b, s), "cudaEventRecord") &&
                   ok(cudaEventSynchronize(b), "cudaEventSynchronize") &&
                   ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
            if (good) gbps = (double)total / (ms * 1e-3) / 1e9;
        }
    }
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    if (s) cudaStreamDestroy(s);
    if (dev) bench_dev_free(dev);
    if (host) bench_pinned_free(host);
    return gbps;
}

extern "C" void *bench_stream_create(void)
{
    cudaStream_t s = nullptr;
    return ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ? s : nullptr;
}

extern "C" void bench_stream_destroy(void *s)
{
    if (s) cudaStreamDestroy((cudaStream_t)s);
}

extern "C" int bench_d2h_async(void *s, void *host, const void *dev, size_t n)
{
    return ok(cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, (cudaStream_t)s), "copy") ? 0 : -1;
}

extern "C" int bench_stream_wait(void *s)
{
    return ok(cudaStreamSynchronize((cudaStream_t)s), "cudaStreamSynchronize") ? 0 : -1;
}

extern "C" int bench_dev_upload(void *dev, const void *host, size_t n)
{
    return ok(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice), "cudaMemcpy H2D") ? 0 : -1;
}

extern "C" int bench_dev_download(void *host, const void *dev, size_t n)
{
    return ok(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H") ? 0 : -1;
}
