/* The GPU cases of support/device_cases.h on a real CUDA device (label `gpu`), plus what only a real device
 * can show: pointer detection of device, pinned and managed memory. Without a device the test
 * exits with 77 (the SKIP_RETURN_CODE of gpubp_add_test), so ctest reports it as skipped. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/device_cases.h"

static void die_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        abort();
    }
}

static void *cu_alloc(size_t n)
{
    void *p = NULL;
    return cudaMalloc(&p, n ? n : 1) == cudaSuccess ? p : NULL;
}
static void cu_free(void *p) { die_cuda(cudaFree(p), "cudaFree"); }
static void cu_h2d(void *d, const void *h, size_t n)
{
    die_cuda(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
static void cu_d2h(void *h, const void *d, size_t n)
{
    die_cuda(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

static const tdev cuda_dev = {"CUDA", "", cu_alloc, cu_free, cu_h2d, cu_d2h, 0};
const tdev *td = &cuda_dev;

/* DETECT: device memory is GPU; pinned and managed memory are host (as ADIOS2) */
static void detect_kinds(void **state)
{
    (void)state;
    const char *path = ts_path("detect.bp");
    size_t n = 64, zero = 0;
    float *dev = cu_alloc(n * sizeof(float)), *pinned = NULL, *managed = NULL;
    die_cuda(cudaMallocHost((void **)&pinned, n * sizeof(float)), "cudaMallocHost");
    die_cuda(cudaMallocManaged((void **)&managed, n * sizeof(float), cudaMemAttachGlobal),
             "cudaMallocManaged");
    for (size_t i = 0; i < n; i++) pinned[i] = managed[i] = (float)i;
    cu_h2d(dev, pinned, n * sizeof(float));
    gpubp_file *w;
    TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    gpubp_variable *a, *b, *c;
    TS_OK(gpubp_define_variable(&a, w, "dev", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_define_variable(&b, w, "pinned", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_define_variable(&c, w, "managed", GPUBP_TYPE_FLOAT, 1, &n, &zero, &n));
    TS_OK(gpubp_begin_step(w));
    TS_OK(gpubp_put(w, a, dev, GPUBP_SYNC));
    TS_OK(gpubp_put(w, b, pinned, GPUBP_SYNC));
    TS_OK(gpubp_put(w, c, managed, GPUBP_SYNC));
    gpubp_memory_space sa, sb, sc;
    TS_OK(gpubp_variable_memory_space(a, &sa));
    TS_OK(gpubp_variable_memory_space(b, &sb));
    TS_OK(gpubp_variable_memory_space(c, &sc));
    assert_int_equal(sa, GPUBP_MEM_GPU);
    assert_int_equal(sb, GPUBP_MEM_HOST);
    assert_int_equal(sc, GPUBP_MEM_HOST);
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    unsigned f = gpubp_features();
    assert_true(f & GPUBP_FEATURE_CUDA);
    cu_free(dev);
    die_cuda(cudaFreeHost(pinned), "cudaFreeHost");
    die_cuda(cudaFree(managed), "cudaFree(managed)");
}

int main(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("no CUDA device (%s): skipped\n", e != cudaSuccess ? cudaGetErrorString(e) : "none");
        return TS_SKIP_CODE;
    }
    const struct CMUnitTest tests[] = {TC_ALL_CASES, cmocka_unit_test(detect_kinds)};
    return cmocka_run_group_tests_name("CUDA device", tests, NULL, NULL);
}
