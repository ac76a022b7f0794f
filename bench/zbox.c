/* Box reads of one compressed block into host memory (not a test; docs/compression.md, "What is
 * read"): only the span of the block that holds a box is decoded, so a box of an eighth of the rows
 * should cost about an eighth of the whole block.
 * usage: gpubp-zbox DIR [codecs (lz4,zstd,zlib)] [repeat (5)]
 * For each codec: DIR/zbox-CODEC.bp, one step of an 8192 x 4096 double block (256 MiB, byte
 * shuffle, smooth values), then the median over `repeat` opens of the get of rows [2048, 3072)
 * (1/8), rows [2048, 6144) (1/2) and the whole block, each checked against the values written.
 * Prints "zbox: CODEC rows 1/8 ms=... 1/2 ms=... all ms=..." (run two builds side by side to
 * compare them). */
#include "bench/bench_util.h"

#include <gpubp.h>

#define ROWS 8192
#define COLS 4096

static double value(size_t i) { return (double)(i % 100000) * 0.25; }

static int fail(const char *what, int rc)
{
    fprintf(stderr, "gpubp-zbox: %s: %s (%d)\n", what, gpubp_last_error(), rc);
    return 1;
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != GPUBP_OK) return fail(#expr, rc_);                                              \
    } while (0)

static int write_block(const char *path, const char *codec, double *d)
{
    size_t dims[2] = {ROWS, COLS}, zero[2] = {0, 0};
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) d[i] = value(i);
    gpubp_file *w;
    gpubp_variable *v;
    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&v, w, "f", GPUBP_TYPE_DOUBLE, 2, dims, zero, dims));
    CHECK(gpubp_variable_add_operation(v, codec, "shuffle=byte"));
    CHECK(gpubp_begin_step(w));
    CHECK(gpubp_put(w, v, d, GPUBP_SYNC));
    CHECK(gpubp_end_step(w));
    CHECK(gpubp_close(w));
    return 0;
}

/* one open and get of rows [first, first + rows): its time in *secs */
static int read_rows(const char *path, size_t first, size_t rows, double *d, double *secs)
{
    gpubp_file *r;
    gpubp_variable *v;
    CHECK(gpubp_open(&r, path, GPUBP_MODE_READ, NULL));
    CHECK(gpubp_begin_step(r));
    CHECK(gpubp_inquire_variable(&v, r, "f"));
    size_t st[2] = {first, 0}, ct[2] = {rows, COLS};
    CHECK(gpubp_set_selection(v, 2, st, ct));
    double t0 = bench_now();
    CHECK(gpubp_get(r, v, d, GPUBP_SYNC));
    *secs = bench_now() - t0;
    for (size_t i = 0; i < rows * COLS; i += 4097)
        if (d[i] != value(first * COLS + i)) {
            fprintf(stderr, "gpubp-zbox: %s: element %zu of the box differs\n", path, i);
            return 1;
        }
    CHECK(gpubp_end_step(r));
    CHECK(gpubp_close(r));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpubp-zbox DIR [codecs (lz4,zstd,zlib)] [repeat (5)]\n");
        return 2;
    }
    char codecs[256];
    snprintf(codecs, sizeof codecs, "%s", argc > 2 ? argv[2] : "lz4,zstd,zlib");
    int repeat = argc > 3 ? atoi(argv[3]) : 5;
    if (repeat < 1 || repeat > 99) repeat = 5;
    double *d = malloc((size_t)ROWS * COLS * sizeof *d);
    if (!d) return 1;
    const size_t first[3] = {ROWS / 4, ROWS / 4, 0}, rows[3] = {ROWS / 8, ROWS / 2, ROWS};
    int bad = 0;
    for (char *save = NULL, *c = strtok_r(codecs, ",", &save); c && !bad;
         c = strtok_r(NULL, ",", &save)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/zbox-%s.bp", argv[1], c);
        bench_remove_dataset(path);
        bad = write_block(path, c, d);
        double ms[3];
        for (int k = 0; k < 3 && !bad; k++) {
            double t[99];
            for (int i = 0; i < repeat && !bad; i++) bad = read_rows(path, first[k], rows[k], d, &t[i]);
            ms[k] = 1e3 * bench_median(t, (size_t)repeat);
        }
        if (!bad) printf("zbox: %s rows 1/8 ms=%.1f 1/2 ms=%.1f all ms=%.1f\n", c, ms[0], ms[1], ms[2]);
    }
    free(d);
    return bad;
}
