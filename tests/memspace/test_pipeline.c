/* The staging pipeline against the simulated device: chunk boundaries, a pool smaller than a
 * block, many small blocks, strided boxes both ways, min/max, injected delays and failures,
 * the bounded footprint, O_DIRECT, user-stream ordering. Everything is checked byte for byte
 * against what a plain host loop computes. The cases with copies in pieces are in pipe_pieces.c,
 * those of failures, queued commits and the pool cache in pipe_fail.c, the shared helpers in
 * pipe_util.c. */
#include "support/test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fileio.h"
#include "memspace/box.h"
#include "memspace/devops.h"
#include "memspace/memspace.h"
#include "memspace/pipe_fail.h"
#include "memspace/pipe_pieces.h"
#include "memspace/pipe_util.h"
#include "memspace/simdev.h"

/* ---- box geometry ------------------------------------------------------------------------------ */

static void check_walk(size_t nd, const size_t *adims, const size_t *astart, const size_t *bdims,
                       const size_t *bstart, const size_t *count, size_t el, int max_pieces)
{
    gbp_box a, b;
    size_t na = pt_make_box(&a, nd, adims, astart, count);
    size_t nb = pt_make_box(&b, nd, bdims, bstart, count);
    uint8_t *src = malloc(na * el), *dst = calloc(nb, el);
    pt_fill_pattern(src, na * el, 7);
    pt_copy_ref c = {src, dst, 0};
    assert_int_equal(gbp_box_walk3d(&a, &b, el, pt_apply_piece, &c), 0);
    assert_true(c.pieces <= max_pieces);
    uint8_t *pa = pt_pack_ref(src, &a, el), *pb = pt_pack_ref(dst, &b, el);
    assert_memory_equal(pa, pb, gbp_box_elements(&a) * el);
    /* nothing outside box b was touched */
    uint8_t *zero = calloc(nb, el);
    uint8_t *dcopy = malloc(nb * el);
    memcpy(dcopy, dst, nb * el);
    gbp_box bb = b;
    pt_copy_ref clear = {zero, dcopy, 0};
    assert_int_equal(gbp_box_walk3d(&bb, &bb, el, pt_apply_piece, &clear), 0);
    assert_memory_equal(dcopy, zero, nb * el);
    free(src); free(dst); free(pa); free(pb); free(zero); free(dcopy);
}

static void walk3d_boxes(void **state)
{
    (void)state;
    /* contiguous whole array: one piece, one row */
    check_walk(2, (size_t[]){4, 5}, (size_t[]){0, 0}, (size_t[]){4, 5}, (size_t[]){0, 0},
               (size_t[]){4, 5}, 8, 1);
    /* 2-D sub-box into a dense box: one 2-D piece */
    check_walk(2, (size_t[]){6, 7}, (size_t[]){1, 2}, (size_t[]){3, 4}, (size_t[]){0, 0},
               (size_t[]){3, 4}, 4, 1);
    /* 3-D sub-box to a ghosted box: one 3-D piece */
    check_walk(3, (size_t[]){5, 6, 7}, (size_t[]){1, 2, 3}, (size_t[]){4, 5, 6},
               (size_t[]){1, 1, 1}, (size_t[]){3, 3, 3}, 2, 1);
    /* a column (innermost count 1): element-wide rows */
    check_walk(2, (size_t[]){9, 5}, (size_t[]){0, 4}, (size_t[]){9, 1}, (size_t[]){0, 0},
               (size_t[]){9, 1}, 8, 1);
    /* 5-D box: more than 3 strided dims need several pieces */
    check_walk(5, (size_t[]){3, 4, 3, 4, 5}, (size_t[]){1, 1, 0, 1, 1},
               (size_t[]){2, 3, 3, 3, 4}, (size_t[]){0, 0, 0, 0, 0},
               (size_t[]){2, 3, 3, 3, 4}, 1, 2 * 3);
    /* count-1 dims in the middle are dropped */
    check_walk(4, (size_t[]){3, 5, 4, 6}, (size_t[]){1, 2, 0, 1}, (size_t[]){2, 1, 4, 5},
               (size_t[]){0, 0, 0, 0}, (size_t[]){2, 1, 4, 5}, 4, 1);
    /* 0-d (one value) */
    check_walk(0, NULL, NULL, NULL, NULL, NULL, 16, 1);
}

static void check_chunks(size_t nd, const size_t *dims, const size_t *start, const size_t *count,
                         size_t el, size_t limit, int by_span)
{
    gbp_box b;
    pt_make_box(&b, nd, dims, start, count);
    size_t total = gbp_box_elements(&b) * el;
    uint8_t *seen = calloc(total ? total : 1, 1);
    gbp_chunker ch;
    gbp_chunker_init(&ch, &b, el, limit, by_span);
    gbp_chunk c;
    size_t next = 0;
    int n = 0;
    while (gbp_chunker_next(&ch, &c)) {
        n++;
        assert_int_equal(c.packed_off, next); /* chunks follow each other in packed order */
        next += c.bytes;
        if (by_span) assert_true(c.span <= limit);
        else assert_true(c.bytes <= limit);
        assert_true(c.bytes > 0);
        /* the chunk's packed elements are exactly the chunk box's elements */
        assert_int_equal(gbp_box_elements(&c.a) * el, c.bytes);
        for (size_t i = c.packed_off; i < c.packed_off + c.bytes; i++) seen[i]++;
        assert_true(n < 1000000);
    }
    assert_int_equal(next, total);
    for (size_t i = 0; i < total; i++) assert_int_equal(seen[i], 1);
    free(seen);
}

static void chunker_cover(void **state)
{
    (void)state;
    size_t d1[] = {1000}, s1[] = {0}, c1[] = {1000};
    check_chunks(1, d1, s1, c1, 8, 8 * 64, 0);      /* exact multiple */
    check_chunks(1, d1, s1, c1, 8, 8 * 63 + 5, 0);  /* odd limit */
    check_chunks(1, d1, s1, c1, 8, 8, 0);           /* one element per chunk */
    check_chunks(1, d1, s1, c1, 8, 1 << 20, 0);     /* one chunk */
    size_t d3[] = {7, 9, 11}, s3[] = {1, 2, 3}, c3[] = {5, 6, 7};
    for (size_t lim = 4; lim < 2000; lim = lim * 3 + 1) {
        check_chunks(3, d3, s3, c3, 4, lim, 0);
        check_chunks(3, d3, s3, c3, 4, lim, 1);
    }
    size_t d2[] = {3, 100000}, s2[] = {0, 10}, c2[] = {3, 99990};
    check_chunks(2, d2, s2, c2, 2, 4096, 1); /* rows longer than the limit are cut */
}

/* ---- writes ------------------------------------------------------------------------------------ */

static void write_chunk_boundaries(void **state)
{
    (void)state;
    size_t d[] = {100000}, s[] = {0};
    /* block sizes around multiples of the chunk: below, at, above */
    size_t chunk = 8192;
    size_t sizes[] = {1, 1023, 1024, 1025, 2047, 2048, 2049, 4096 * 3 + 1, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t c[] = {sizes[i]};
        pt_write_case(pt_sim_params(4, chunk, 2), 1, d, s, c, GPUBP_TYPE_DOUBLE, 17);
    }
    /* a chunk size that is not a multiple of the element size */
    size_t c[] = {5000};
    pt_write_case(pt_sim_params(3, 1000, 2), 1, d, s, c, GPUBP_TYPE_DOUBLE_COMPLEX, 0);
}

static void write_pool_smaller_than_block(void **state)
{
    (void)state;
    /* 2 slots of 4 KiB for a 2 MiB block, with a slow device: the caller waits for slots */
    gbp_sim_set_delay_us(50);
    size_t d[] = {512, 1024}, s[] = {0, 0}, c[] = {512, 1024};
    pt_write_case(pt_sim_params(2, 4096, 1), 2, d, s, c, GPUBP_TYPE_FLOAT, 4096);
    pt_write_case(pt_sim_params(2, 4096, 3), 2, d, s, c, GPUBP_TYPE_INT32, 1);
    gbp_sim_reset();
}

static void write_strided_boxes(void **state)
{
    (void)state;
    /* ghost cells: the box of a larger device array, 2-D to 4-D, every type */
    size_t d2[] = {37, 41}, s2[] = {3, 5}, c2[] = {30, 33};
    int types[] = {GPUBP_TYPE_INT8, GPUBP_TYPE_UINT16, GPUBP_TYPE_INT32, GPUBP_TYPE_UINT64,
                   GPUBP_TYPE_FLOAT, GPUBP_TYPE_DOUBLE, GPUBP_TYPE_FLOAT_COMPLEX,
                   GPUBP_TYPE_DOUBLE_COMPLEX};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        pt_write_case(pt_sim_params(3, 512, 2), 2, d2, s2, c2, types[t], 8);
    size_t d3[] = {9, 10, 11}, s3[] = {2, 2, 2}, c3[] = {5, 6, 7};
    pt_write_case(pt_sim_params(4, 100, 2), 3, d3, s3, c3, GPUBP_TYPE_DOUBLE, 0);
    size_t d4[] = {4, 5, 6, 7}, s4[] = {1, 0, 1, 2}, c4[] = {2, 5, 4, 3};
    pt_write_case(pt_sim_params(2, 256, 2), 4, d4, s4, c4, GPUBP_TYPE_INT16, 3);
}

static void write_many_small_blocks(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(4, 1 << 16, 4);
    gbp_mem *m = pt_mem_open(p);
    enum { NB = 2000, EL = 13 };
    float *dev = gbp_sim_alloc(NB * EL * sizeof(float));
    for (int i = 0; i < NB * EL; i++) dev[i] = (float)((i * 31) % 977) - 300.0f;
    int fd = pt_open_tmp("small.dat");
    float mn[NB], mx[NB];
    for (int b = 0; b < NB; b++) {
        gbp_box box;
        size_t c = EL;
        gbp_box_dense(&box, 1, &c);
        /* payloads 64 bytes apart, like blocks behind their headers */
        TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, (uint64_t)b * (EL * 4 + 64), dev + b * EL,
                            GPUBP_TYPE_FLOAT, &box, &mn[b], &mx[b]));
    }
    TS_OK(gbp_mem_sync(m));
    for (int b = 0; b < NB; b++) {
        float got[EL], rmn, rmx;
        assert_int_equal(gbp_pread_all(fd, got, sizeof got, (uint64_t)b * (EL * 4 + 64), "t"), 0);
        assert_memory_equal(got, dev + b * EL, sizeof got);
        gbp_minmax(GPUBP_TYPE_FLOAT, got, EL, &rmn, &rmx, 0);
        assert_true(mn[b] == rmn && mx[b] == rmx);
    }
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    assert_true(st.reductions >= NB);
    gbp_mem_close(m);
    close(fd);
    gbp_sim_free(dev);
}

/* ---- reads ------------------------------------------------------------------------------------- */

static void read_whole_and_subbox(void **state)
{
    (void)state;
    size_t d1[] = {10007}, z1[] = {0};
    pt_read_case(pt_sim_params(4, 4096, 2), 1, d1, z1, d1, d1, z1, 8, 123);
    pt_read_case(pt_sim_params(2, 1000, 3), 1, d1, z1, d1, d1, z1, 4, 0);
    /* the half-box of a 2-D block into a dense buffer */
    size_t b2[] = {64, 128}, f2[] = {0, 32}, c2[] = {64, 64}, z2[] = {0, 0};
    pt_read_case(pt_sim_params(4, 2048, 2), 2, b2, f2, c2, c2, z2, 8, 4096);
    /* a 3-D sub-box into a ghosted device buffer, spans cut inside rows */
    size_t b3[] = {13, 17, 19}, f3[] = {2, 3, 4}, c3[] = {9, 11, 13}, d3[] = {11, 13, 15},
           s3[] = {1, 1, 1};
    pt_read_case(pt_sim_params(3, 256, 2), 3, b3, f3, c3, d3, s3, 4, 7);
    pt_read_case(pt_sim_params(3, 40, 2), 3, b3, f3, c3, d3, s3, 4, 7);
    /* 5-D, odd element size */
    size_t b5[] = {3, 4, 5, 3, 4}, f5[] = {1, 0, 1, 1, 1}, c5[] = {2, 4, 3, 2, 3},
           z5[] = {0, 0, 0, 0, 0};
    pt_read_case(pt_sim_params(2, 64, 1), 5, b5, f5, c5, c5, z5, 16, 1);
}

static void read_with_delays(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(100);
    size_t b2[] = {200, 300}, f2[] = {10, 20}, c2[] = {150, 250}, z2[] = {0, 0};
    pt_read_case(pt_sim_params(2, 8192, 4), 2, b2, f2, c2, c2, z2, 8, 0);
    gbp_sim_reset();
}

/* ---- memory spaces ----------------------------------------------------------------------------- */
static void detect_and_unsupported(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(4, 4096, 2);
    gbp_mem *m = pt_mem_open(p);
    assert_int_equal(gbp_mem_has_device(m), 1);
    void *dev = gbp_sim_alloc(64);
    double host[8];
    gpubp_memory_space sp;
    TS_OK(gbp_mem_detect(m, dev, &sp));
    assert_int_equal(sp, GPUBP_MEM_GPU);
    TS_OK(gbp_mem_detect(m, (char *)dev + 63, &sp));
    assert_int_equal(sp, GPUBP_MEM_GPU);
    TS_OK(gbp_mem_detect(m, host, &sp));
    assert_int_equal(sp, GPUBP_MEM_HOST);
    assert_int_equal(gbp_mem_footprint(m), 0); /* nothing allocated before the first transfer */
    gbp_mem_close(m);

    /* without a device (no "device=simulated", and here no CUDA device): not supported */
    gbp_params h;
    assert_int_equal(gbp_params_parse(&h, NULL), GPUBP_OK);
    assert_int_equal(gbp_mem_open(&m, &h), GPUBP_OK);
    if (!gbp_mem_has_device(m)) {
        TS_OK(gbp_mem_detect(m, dev, &sp));
        assert_int_equal(sp, GPUBP_MEM_HOST);
        size_t n = 8;
        gbp_box b;
        gbp_box_dense(&b, 1, &n);
        assert_int_equal(gbp_mem_write(m, GPUBP_MEM_GPU, 1, 0, dev, GPUBP_TYPE_UINT8, &b, NULL,
                                       NULL), GPUBP_ERR_NOT_SUPPORTED);
        assert_non_null(strstr(gbp_error_message(), "GPU"));
        assert_int_equal(gbp_mem_set_stream(m, (void *)1), GPUBP_ERR_NOT_SUPPORTED);
        char out[8];
        assert_int_equal(gbp_mem_copy_out(m, GPUBP_MEM_GPU, out, dev, 8), GPUBP_ERR_NOT_SUPPORTED);
    }
    gbp_mem_close(m);
    gbp_sim_free(dev);
}

static void scatter_and_copy_out(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(2, 4096, 1);
    gbp_mem *m = pt_mem_open(p);
    int32_t src[6 * 7];
    for (int i = 0; i < 42; i++) src[i] = i * 3 - 20;
    int32_t *dev = gbp_sim_alloc(sizeof(int32_t) * 5 * 5);
    memset(dev, 0, sizeof(int32_t) * 25);
    gbp_box sb, db;
    pt_make_box(&sb, 2, (size_t[]){6, 7}, (size_t[]){1, 2}, (size_t[]){3, 4});
    pt_make_box(&db, 2, (size_t[]){5, 5}, (size_t[]){1, 1}, (size_t[]){3, 4});
    TS_OK(gbp_mem_scatter(m, GPUBP_MEM_GPU, src, 4, &sb, dev, &db));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) assert_int_equal(dev[(r + 1) * 5 + c + 1], src[(r + 1) * 7 + c + 2]);
    assert_int_equal(dev[0], 0);
    int32_t back[25];
    TS_OK(gbp_mem_copy_out(m, GPUBP_MEM_GPU, back, dev, sizeof back));
    assert_memory_equal(back, dev, sizeof back);
    gbp_mem_close(m);
    gbp_sim_free(dev);
}

static void user_stream_fences(void **state)
{
    (void)state;
    gbp_sim_reset();
    gbp_params p = pt_sim_params(2, 4096, 1);
    gbp_mem *m = pt_mem_open(p);
    int token;
    TS_OK(gbp_mem_set_stream(m, &token));
    size_t n = 10000;
    gbp_box b;
    uint8_t *dev = pt_dev_pattern(n, 1, &b);
    int fd = pt_open_tmp("stream.dat");
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, n, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_sync(m));
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    assert_int_equal(st.fences, 2);  /* each transfer waits for the user's stream */
    assert_int_equal(st.signals, 1); /* and the user's stream waits once for the library's */
    gbp_mem_close(m);
    close(fd);
    gbp_sim_free(dev);
}

static void direct_io_roundtrip(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(3, 8192, 2);
    p.direct_io = 1;
    size_t d[] = {50000}, s[] = {0}, c[] = {50000};
    /* unaligned offsets: partial pages are written through the page cache */
    pt_write_case(p, 1, d, s, c, GPUBP_TYPE_DOUBLE, 4096 + 100);
    pt_write_case(p, 1, d, s, c, GPUBP_TYPE_UINT8, 0);
    size_t b2[] = {64, 100}, f2[] = {3, 7}, c2[] = {50, 80}, z2[] = {0, 0};
    pt_read_case(p, 2, b2, f2, c2, c2, z2, 8, 333);
}

/* ---- host memory: the I/O threads for big transfers, the bounce buffer for strided reads ------ */
static void host_read_case(size_t nd, const size_t *bdims, const size_t *fstart, const size_t *count,
                           const size_t *ddims, const size_t *dstart, size_t el)
{
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, NULL), GPUBP_OK);
    pt_read_into(GPUBP_MEM_HOST, p, nd, bdims, fstart, count, ddims, dstart, el, 100);
}

static void host_transfers(void **state)
{
    (void)state;
    /* a 20 MiB contiguous block: written and read in pieces by the I/O threads */
    size_t n = (size_t)20 << 17; /* doubles */
    double *h = malloc(n * sizeof(double)), *back = malloc(n * sizeof(double));
    pt_fill_doubles(h, n, 8);
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, NULL), GPUBP_OK);
    gbp_mem *m = pt_mem_open(p);
    int fd = pt_open_tmp("host.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    double mn, mx, rmn, rmx;
    TS_OK(gbp_mem_write(m, GPUBP_MEM_HOST, fd, 7, h, GPUBP_TYPE_DOUBLE, &b, &mn, &mx));
    TS_OK(gbp_mem_sync(m));
    gbp_minmax(GPUBP_TYPE_DOUBLE, h, n, &rmn, &rmx, 0);
    assert_true(mn == rmn && mx == rmx);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_HOST, fd, 7, 8, &b, back, &b));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(back, h, n * sizeof(double));
    /* an injected failure of one piece is reported by sync */
    gbp_sim_fail_io_after(1);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_HOST, fd, 7, h, GPUBP_TYPE_DOUBLE, &b, NULL, NULL));
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_IO);
    gbp_sim_fail_io_after(-1);
    gbp_mem_close(m);
    close(fd);
    free(h);
    free(back);
    /* strided sub-boxes: dense enough for the bounce buffer, and sparse (one column) */
    size_t b2[] = {300, 2048}, f2[] = {10, 0}, c2[] = {280, 1024}, d2[] = {282, 1030},
           s2[] = {1, 3};
    host_read_case(2, b2, f2, c2, d2, s2, 8);
    size_t f3[] = {0, 77}, c3[] = {300, 1}, z3[] = {0, 0};
    host_read_case(2, b2, f3, c3, c3, z3, 8);
    size_t b4[] = {40, 50, 60}, f4[] = {3, 4, 5}, c4[] = {30, 40, 50}, z4[] = {0, 0, 0};
    host_read_case(3, b4, f4, c4, c4, z4, 4);
}

/* ---- defaults from the machine ------------------------------------------------------------------ */
/* The I/O threads default to the online cores within [4, 16], the pool to one slot per thread
 * (4 at least); a pool or a thread count asked for wins, and the pipeline allocates what
 * gbp_params_pool_slots says. Then one large block read into device memory by those threads:
 * the bytes, and no slot reused while a copy touched it. */
static void machine_defaults(void **state)
{
    (void)state;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cores < 4 ? 4 : cores > 16 ? 16 : (int)cores;
    gbp_params p;
    TS_OK(gbp_params_parse(&p, ""));
    assert_int_equal(gbp_params_io_threads(&p), want);
    assert_int_equal(gbp_params_pool_slots(&p), want);
    TS_OK(gbp_params_parse(&p, "pool_slots=7"));
    assert_int_equal(gbp_params_io_threads(&p), 7);
    assert_int_equal(gbp_params_pool_slots(&p), 7);
    TS_OK(gbp_params_parse(&p, "io_threads=2"));
    assert_int_equal(gbp_params_io_threads(&p), 2);
    assert_int_equal(gbp_params_pool_slots(&p), 4);
    TS_OK(gbp_params_parse(&p, "io_threads=9,pool_slots=3"));
    assert_int_equal(gbp_params_io_threads(&p), 9);
    assert_int_equal(gbp_params_pool_slots(&p), 3);

    TS_OK(gbp_params_parse(&p, "device=simulated,chunk_mib=1,piece_kib=256,io_threads=6"));
    size_t n = (size_t)24 << 20; /* 24 chunks: every thread reads several */
    uint8_t *src = malloc(n);
    assert_non_null(src);
    pt_fill_pattern(src, n, 23);
    int fd = pt_open_tmp("defaults.dat");
    TS_OK(gbp_pwrite_all(fd, src, n, 0, "test"));
    uint8_t *dev = gbp_sim_alloc(n);
    assert_non_null(dev);
    memset(dev, 0, n);
    gbp_sim_reset();
    gbp_mem *m = pt_mem_open(p);
    size_t dims[1] = {n}, start[1] = {0};
    gbp_box fb;
    pt_make_box(&fb, 1, dims, start, dims);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &fb, dev, &fb));
    TS_OK(gbp_mem_sync(m));
    assert_int_equal(gbp_mem_footprint(m), 6 * ((size_t)1 << 20)); /* six 1 MiB slots */
    assert_memory_equal(dev, src, n);
    assert_int_equal(pt_hazards(), 0);
    gbp_mem_close(m);
    close(fd);
    gbp_sim_free(dev);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk3d_boxes),
        cmocka_unit_test(chunker_cover),
        cmocka_unit_test(write_chunk_boundaries),
        cmocka_unit_test(write_pool_smaller_than_block),
        cmocka_unit_test(write_strided_boxes),
        cmocka_unit_test(write_many_small_blocks),
        cmocka_unit_test(read_whole_and_subbox),
        cmocka_unit_test(read_with_delays),
        cmocka_unit_test(transfers_in_pieces),
        cmocka_unit_test(failure_in_pieces),
        cmocka_unit_test(reads_reuse_slots_in_pieces),
        cmocka_unit_test(writes_share_slots),
        cmocka_unit_test(files_wait_for_slots),
        cmocka_unit_test(handed_on_slot_keeps_pending_reads),
        cmocka_unit_test(hazard_check),
        cmocka_unit_test(refused_copies_and_events),
        cmocka_unit_test(failure_mid_copy),
        cmocka_unit_test(failure_mid_write_and_read),
        cmocka_unit_test(failure_pinned_alloc),
        cmocka_unit_test(detect_and_unsupported),
        cmocka_unit_test(scatter_and_copy_out),
        cmocka_unit_test(user_stream_fences),
        cmocka_unit_test(direct_io_roundtrip),
        cmocka_unit_test(host_transfers),
        cmocka_unit_test(pool_cache),
        cmocka_unit_test(commits_after_writes),
        cmocka_unit_test(machine_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
