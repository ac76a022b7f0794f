/* gpubp-bench --meta (bench_meta.c). */
#ifndef GPUBP_BENCH_META_H
#define GPUBP_BENCH_META_H

int gpubp_bench_meta(int argc, char **argv);

#endif
