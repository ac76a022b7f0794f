// The CUDA version of ADIOS2's bpStepsWriteReadCuda / bpStepsWriteReadCuPy example, on libgpubp.
//
// Writes two steps of a (2,3) float array that lives in device memory ("gpuArray") next to a (2,3)
// float array in host memory ("cpuArray"): step 1 of the GPU array is twice step 0 (a kernel),
// step 1 of the CPU array is step 0 plus one. Then reads gpuArray back into device memory, step by
// step, with the shape in the GPU layout (Shape(MemorySpace::GPU) in ADIOS2), and prints it.
//
// As in ADIOS2, the GPU memory space is column-major: the dims given for gpuArray are stored
// reversed, so `bpls` (or gpubpls) lists it as `float gpuArray 2*{3, 2}` while cpuArray is
// `2*{2, 3}`; a GPU reader gets the bytes back unchanged with Shape(GPU) = {2, 3}.
//
//   bpStepsWriteReadCuda [file.bp]    write file.bp (default StepsWriteReadCuda.bp), read it back
//   bpStepsWriteReadCuda --read file.bp   only read (e.g. the file ADIOS2 wrote)
// Exits 77 when there is no CUDA device.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include <gpubp.h>

#define GPUBP_CHECK(call)                                                                  \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ != GPUBP_OK) {                                                             \
            std::fprintf(stderr, "%s failed: %s: %s\n", #call, gpubp_strerror(rc_),        \
                         gpubp_last_error());                                              \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)
#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));       \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

__global__ void scale(float *v, size_t n, float by)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= by;
}

static int write_file(const char *path)
{
    const size_t shape[2] = {2, 3}, start[2] = {0, 0};
    float cpu[6] = {0, 1, 2, 3, 4, 5};
    float *gpu = nullptr;
    CUDA_CHECK(cudaMalloc(&gpu, sizeof cpu));
    CUDA_CHECK(cudaMemcpy(gpu, cpu, sizeof cpu, cudaMemcpyHostToDevice));

    gpubp_file *w;
    GPUBP_CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, nullptr));
    gpubp_variable *g, *c;
    GPUBP_CHECK(gpubp_define_variable(&g, w, "gpuArray", GPUBP_TYPE_FLOAT, 2, shape, start, shape));
    GPUBP_CHECK(gpubp_define_variable(&c, w, "cpuArray", GPUBP_TYPE_FLOAT, 2, shape, start, shape));
    for (int step = 0; step < 2; step++) {
        GPUBP_CHECK(gpubp_begin_step(w));
        GPUBP_CHECK(gpubp_set_memory_space(g, GPUBP_MEM_GPU));
        GPUBP_CHECK(gpubp_set_memory_space(c, GPUBP_MEM_HOST));
        GPUBP_CHECK(gpubp_put(w, g, gpu, GPUBP_DEFERRED)); // read on the library's stream
        GPUBP_CHECK(gpubp_put(w, c, cpu, GPUBP_DEFERRED));
        GPUBP_CHECK(gpubp_end_step(w)); // both buffers may change once this returns
        scale<<<1, 32>>>(gpu, 6, 2.0f);  // legacy default stream: ordered before the next copy
        CUDA_CHECK(cudaGetLastError());
        for (float &x : cpu) x += 1.0f;
    }
    GPUBP_CHECK(gpubp_close(w));
    CUDA_CHECK(cudaFree(gpu));
    return 0;
}

static int read_file(const char *path)
{
    gpubp_file *r;
    GPUBP_CHECK(gpubp_open(&r, path, GPUBP_MODE_READ, nullptr));
    float *gpu = nullptr;
    CUDA_CHECK(cudaMalloc(&gpu, 6 * sizeof(float)));
    int rc;
    while ((rc = gpubp_begin_step(r)) == GPUBP_OK) {
        size_t step = 0;
        GPUBP_CHECK(gpubp_current_step(r, &step));
        gpubp_variable *g;
        GPUBP_CHECK(gpubp_inquire_variable(&g, r, "gpuArray"));
        GPUBP_CHECK(gpubp_set_memory_space(g, GPUBP_MEM_GPU));
        size_t dims[2], start[2] = {0, 0};
        GPUBP_CHECK(gpubp_variable_shape(g, GPUBP_MEM_GPU, dims)); // {2, 3}
        GPUBP_CHECK(gpubp_set_selection(g, 2, start, dims));
        CUDA_CHECK(cudaMemset(gpu, 0, 6 * sizeof(float)));
        GPUBP_CHECK(gpubp_get(r, g, gpu, GPUBP_DEFERRED));
        GPUBP_CHECK(gpubp_end_step(r)); // the deferred get has landed in device memory
        float host[6];
        CUDA_CHECK(cudaMemcpy(host, gpu, sizeof host, cudaMemcpyDeviceToHost));
        std::printf("Step %zu: gpuArray Shape(GPU) = {%zu, %zu}:", step, dims[0], dims[1]);
        for (size_t i = 0; i < dims[0]; i++) {
            std::printf(i ? " /" : "");
            for (size_t j = 0; j < dims[1]; j++) std::printf(" %g", host[i * dims[1] + j]);
        }
        std::printf("\n");
    }
    if (rc != GPUBP_END_OF_STREAM) {
        std::fprintf(stderr, "gpubp_begin_step: %s: %s\n", gpubp_strerror(rc), gpubp_last_error());
        return 1;
    }
    GPUBP_CHECK(gpubp_close(r));
    CUDA_CHECK(cudaFree(gpu));
    return 0;
}

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("no CUDA device: skipped\n");
        return 77;
    }
    if (argc == 3 && std::strcmp(argv[1], "--read") == 0) return read_file(argv[2]);
    const char *path = argc > 1 ? argv[1] : "StepsWriteReadCuda.bp";
    if (write_file(path)) return 1;
    return read_file(path);
}
