/* gpubp-bench --compress on the simulated device (CI machines have no GPU): the same benchmark
 * code (bench/bench_compress.c) with bench_dev.h implemented over the simulated device's memory
 * (bench/bench_sim.c, as gpubp-bench-sim).
 *   gpubp_zdevbench --compress zlib --dir D --mem gpu --params device=simulated [...]
 * Not a test: docs/compression.md says how its figures were taken. */
#include "bench/bench_compress.h"

int main(int argc, char **argv) { return gpubp_bench_compress(argc, argv); }
