/* gpubp-bench without CUDA: no device. */
#include "bench/bench_dev.h"

int bench_dev_init(const char **why)
{
    *why = "this build of gpubp-bench has no CUDA";
    return 0;
}
void *bench_dev_alloc(size_t bytes) { (void)bytes; return NULL; }
void bench_dev_free(void *p) { (void)p; }
int bench_dev_fill(double *p, size_t n, double salt) { (void)p; (void)n; (void)salt; return -1; }
long bench_dev_check(const double *p, size_t n, double salt) { (void)p; (void)n; (void)salt; return -1; }
void *bench_pinned_alloc(size_t bytes) { (void)bytes; return NULL; }
void bench_pinned_free(void *p) { (void)p; }
double bench_copy_GBps(int d2h, size_t total, size_t chunk) { (void)d2h; (void)total; (void)chunk; return -1; }
int bench_dev_upload(void *dev, const void *host, size_t n) { (void)dev; (void)host; (void)n; return -1; }
int bench_dev_download(void *host, const void *dev, size_t n) { (void)host; (void)dev; (void)n; return -1; }
void *bench_stream_create(void) { return NULL; }
void bench_stream_destroy(void *s) { (void)s; }
int bench_d2h_async(void *s, void *host, const void *dev, size_t n) { (void)s; (void)host; (void)dev; (void)n; return -1; }
int bench_stream_wait(void *s) { (void)s; return -1; }
