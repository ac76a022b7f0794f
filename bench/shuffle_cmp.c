/* The shuffle kernels of lib/compress side by side with Blosc2's own (issue 22; not a test, never
 * run by CI; docs/compression.md "Byte-shuffle kernels").
 *
 * usage: gpubp_shuffle_cmp LIBBLOSC2_SO [block bytes (262144,263168,32768)] [calls (2000)]
 *                          [rounds (9)]
 *   LIBBLOSC2_SO: path of a Blosc2 2.x shared library, loaded with dlopen (not a dependency).
 *   GPUBP_SHUFFLE_ISA=0..3 caps our tiles (lib/compress/shuffle.c), as in the library.
 *
 * For each block size and typesize 2, 4, 8 and 16, one block of random bytes in cache: `calls`
 * calls in a row of gbp_byte_shuffle / blosc2_shuffle, gbp_byte_unshuffle / blosc2_unshuffle,
 * gbp_bit_shuffle / blosc2_bitshuffle and gbp_bit_unshuffle / blosc2_bitunshuffle, the two sides
 * alternating, `rounds` times; the best round of each (GB/s of block bytes, 1 GB = 1e9 bytes).
 * Both sides' outputs are compared (a difference stops the program with status 1). Pin it to one
 * core (taskset -c N) on a quiet machine: the kernels run in L1/L2, so the block sizes matter
 * (a multiple of 4 KiB per stream puts the streams' fronts into one L1 set). */
#include "compress/shuffle.h"
#include "bench/bench_util.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*b2_fn)(int32_t typesize, int32_t size, const void *src, void *dst);

/* the best rate of `calls` calls of (ours ? our kernel : theirs), kernel k (0 byte shuffle,
 * 1 byte unshuffle, 2 bit shuffle, 3 bit unshuffle) */
static double run(int ours, int k, b2_fn theirs, size_t ts, const uint8_t *src, uint8_t *dst,
                  size_t n, int calls)
{
    double t0 = bench_now();
    for (int c = 0; c < calls; c++) {
        if (!ours) {
            theirs((int32_t)ts, (int32_t)n, src, dst);
            continue;
        }
        switch (k) {
        case 0: gbp_byte_shuffle(src, dst, n, ts); break;
        case 1: gbp_byte_unshuffle(src, dst, n, ts); break;
        case 2: gbp_bit_shuffle(src, dst, n, ts); break;
        default: gbp_bit_unshuffle(src, dst, n, ts, 0); break;
        }
    }
    double dt = bench_now() - t0;
    return dt > 0 ? (double)n * calls / dt / 1e9 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBBLOSC2_SO [block bytes,...] [calls] [rounds]\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "gpubp_shuffle_cmp: %s\n", dlerror());
        return 2;
    }
    static const char *names[4] = {"blosc2_shuffle", "blosc2_unshuffle", "blosc2_bitshuffle",
                                   "blosc2_bitunshuffle"};
    static const char *labels[4] = {"byte_shuffle", "byte_unshuffle", "bit_shuffle",
                                    "bit_unshuffle"};
    b2_fn fn[4];
    for (int k = 0; k < 4; k++)
        if (!(fn[k] = (b2_fn)(uintptr_t)dlsym(h, names[k]))) {
            fprintf(stderr, "gpubp_shuffle_cmp: %s not in %s\n", names[k], argv[1]);
            return 2;
        }
    const char *sizes = argc > 2 ? argv[2] : "262144,263168,32768";
    int calls = argc > 3 ? atoi(argv[3]) : 2000, rounds = argc > 4 ? atoi(argv[4]) : 9;
    if (calls < 1 || rounds < 1) return 2;
    printf("# gpubp_shuffle_cmp: our tiles level %d, best of %d rounds of %d calls, GB/s\n",
           gbp_shuffle_isa(), rounds, calls);
    for (const char *p = sizes; *p;) {
        size_t n = strtoul(p, NULL, 10);
        p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
        if (n < 1024 || n > ((size_t)64 << 20)) continue;
        uint8_t *a = aligned_alloc(64, n + 64), *b = aligned_alloc(64, n + 64);
        uint8_t *c = aligned_alloc(64, n + 64), *d = aligned_alloc(64, n + 64);
        if (!a || !b || !c || !d) return 2;
        srand(7);
        for (size_t i = 0; i < n; i++) a[i] = (uint8_t)rand();
        static const size_t tss[4] = {2, 4, 8, 16};
        for (int t = 0; t < 4; t++) {
            size_t ts = tss[t], m = n - n % (8 * ts); /* whole bit-shuffle groups on both sides */
            printf("block=%zu typesize=%zu", n, ts);
            for (int k = 0; k < 4; k++) {
                /* the input: the block for the shuffles, its shuffled form for the inverses */
                const uint8_t *in = a;
                if (k == 1 || k == 3) {
                    fn[k - 1]((int32_t)ts, (int32_t)m, a, b);
                    in = b;
                }
                double best[2] = {0, 0};
                for (int r = 0; r < rounds; r++)
                    for (int side = 0; side < 2; side++) {
                        int ours = (side + r) % 2 == 0;
                        double g = run(ours, k, fn[k], ts, in, ours ? c : d, m, calls);
                        if (g > best[ours]) best[ours] = g;
                    }
                if (memcmp(c, d, m)) {
                    fprintf(stderr, "gpubp_shuffle_cmp: %s differs from %s (block %zu, typesize "
                                    "%zu)\n", labels[k], names[k], m, ts);
                    return 1;
                }
                printf(" %s=%.1f/%.1f", labels[k], best[1], best[0]);
            }
            printf(" (ours/Blosc2)\n");
        }
        free(a);
        free(b);
        free(c);
        free(d);
    }
    return 0;
}
