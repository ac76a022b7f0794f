// gpubp_set_stream on a real device: a slow kernel on a non-blocking user stream produces the
// data; the put must see the kernel's output without any synchronisation by the caller, and a
// kernel queued on the user stream after a get must see the data read. Exits 77 without a device.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpubp.h"
#include "gpubp/cuda.h"

#define CHECK(x)                                                                       \
    do {                                                                               \
        if (!(x)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #x, \
                         gpubp_last_error());                                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)
#define CU(x) CHECK((x) == cudaSuccess)

__global__ void slow_fill(double *d, size_t n, double salt, long long spin)
{
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        d[i] = (double)i * 0.5 + salt;
}

__global__ void check_read(const double *d, size_t n, double salt, int *bad)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (d[i] != (double)i * 0.5 + salt) atomicAdd(bad, 1);
}

int main()
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("no CUDA device: skipped\n");
        return 77;
    }
    const char *tmp = std::getenv("GPUBP_TEST_TMP");
    char path[4096];
    std::snprintf(path, sizeof path, "%s.stream.bp", tmp && *tmp ? tmp : "/tmp/gpubp-test");
    const size_t n = (size_t)8 << 20; // 64 MiB of doubles
    double *d = nullptr, *r = nullptr;
    int *bad = nullptr;
    CU(cudaMalloc(&d, n * sizeof(double)));
    CU(cudaMalloc(&r, n * sizeof(double)));
    CU(cudaMalloc(&bad, sizeof(int)));
    CU(cudaMemset(d, 0, n * sizeof(double)));
    CU(cudaMemset(bad, 0, sizeof(int)));
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    gpubp_file *w;
    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, nullptr) == GPUBP_OK);
    CHECK(gpubp_set_stream(w, s) == GPUBP_OK);
    size_t zero = 0;
    gpubp_variable *v;
    CHECK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_DOUBLE, 1, &n, &zero, &n) == GPUBP_OK);
    CHECK(gpubp_set_memory_space(v, GPUBP_MEM_GPU) == GPUBP_OK);
    for (int step = 0; step < 2; step++) {
        // ~50 ms of spinning before the data exists
        slow_fill<<<264, 256, 0, s>>>(d, n, 100.0 * step, 100000000LL);
        CU(cudaGetLastError());
        CHECK(gpubp_begin_step(w) == GPUBP_OK);
        CHECK(gpubp_put(w, v, d, GPUBP_DEFERRED) == GPUBP_OK);
        CHECK(gpubp_end_step(w) == GPUBP_OK);
    }
    CHECK(gpubp_close(w) == GPUBP_OK);

    gpubp_file *rf;
    CHECK(gpubp_open(&rf, path, GPUBP_MODE_READ_RANDOM_ACCESS, nullptr) == GPUBP_OK);
    CHECK(gpubp_set_stream(rf, s) == GPUBP_OK);
    gpubp_variable *rv;
    CHECK(gpubp_inquire_variable(&rv, rf, "x") == GPUBP_OK);
    CHECK(gpubp_set_memory_space(rv, GPUBP_MEM_GPU) == GPUBP_OK);
    for (int step = 0; step < 2; step++) {
        double mn = 0, mx = 0;
        CHECK(gpubp_set_step_selection(rv, (size_t)step, 1) == GPUBP_OK);
        CHECK(gpubp_variable_minmax(rv, &mn, &mx) == GPUBP_OK);
        CHECK(mn == 100.0 * step && mx == (double)(n - 1) * 0.5 + 100.0 * step);
        CHECK(gpubp_get(rf, rv, r, GPUBP_SYNC) == GPUBP_OK);
        check_read<<<264, 256, 0, s>>>(r, n, 100.0 * step, bad);
        CU(cudaGetLastError());
    }
    CU(cudaStreamSynchronize(s));
    int nbad = -1;
    CU(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
    CHECK(nbad == 0);
    CHECK(gpubp_close(rf) == GPUBP_OK);
    CU(cudaStreamDestroy(s));
    CU(cudaFree(d));
    CU(cudaFree(r));
    CU(cudaFree(bad));
    std::printf("user stream ordering: 2 steps of %zu doubles written and read back: OK\n", n);
    return 0;
}
