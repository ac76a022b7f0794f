/* gpubp-bench --compress on the simulated device (CI machines have no GPU): the same benchmark
 * code (bench/bench_compress.c) with bench_dev.h implemented over the simulated device's memory.
 *   gpubp_zdevbench --compress zlib --dir D --mem gpu --params device=simulated [...]
 * Not a test: docs/compression.md says how its figures were taken. */
#include <string.h>

#include "bench/bench_compress.h"
#include "bench/bench_dev.h"
#include "memspace/simdev.h"

int bench_dev_init(const char **why)
{
    (void)why;
    return 1;
}
void *bench_dev_alloc(size_t bytes) { return gbp_sim_alloc(bytes); }
void bench_dev_free(void *p) { gbp_sim_free(p); }
int bench_dev_upload(void *dev, const void *host, size_t n)
{
    memcpy(dev, host, n);
    return 0;
}
int bench_dev_download(void *host, const void *dev, size_t n)
{
    memcpy(host, dev, n);
    return 0;
}
/* unused by the compression benchmark */
int bench_dev_fill(double *p, size_t n, double salt) { (void)p; (void)n; (void)salt; return -1; }
long bench_dev_check(const double *p, size_t n, double salt) { (void)p; (void)n; (void)salt; return -1; }
void *bench_pinned_alloc(size_t bytes) { (void)bytes; return NULL; }
void bench_pinned_free(void *p) { (void)p; }
double bench_copy_GBps(int d2h, size_t total, size_t chunk) { (void)d2h; (void)total; (void)chunk; return -1; }

int main(int argc, char **argv) { return gpubp_bench_compress(argc, argv); }
