/* gpubp-bench --compress zlib (bench_compress.c). */
#ifndef GPUBP_BENCH_COMPRESS_H
#define GPUBP_BENCH_COMPRESS_H

int gpubp_bench_compress(int argc, char **argv);

#endif
