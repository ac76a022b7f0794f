/* The staging pipeline against the simulated device: chunk boundaries, a pool smaller than a
 * block, many small blocks, strided boxes both ways, min/max, injected delays and failures,
 * the bounded footprint, O_DIRECT, user-stream ordering. Everything is checked byte for byte
 * against what a plain host loop computes. */
#include "support/test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memspace/box.h"
#include "memspace/devops.h"
#include "io/fileio.h"
#include "memspace/memspace.h"
#include "memspace/simdev.h"

static gbp_params sim_params(int slots, size_t chunk, int threads)
{
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, "device=simulated"), GPUBP_OK);
    p.pool_slots = slots;
    p.chunk_bytes = chunk;
    p.io_threads = threads;
    return p;
}

static int open_tmp(const char *name)
{
    int fd = open(ts_path(name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    return fd;
}

static uint8_t *read_back(int fd, uint64_t off, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    assert_non_null(b);
    assert_int_equal(gbp_pread_all(fd, b, n, off, "test"), GPUBP_OK);
    return b;
}

/* deterministic, non-repeating pattern (so misplaced bytes show) */
static void fill_pattern(void *p, size_t n, unsigned seed)
{
    uint8_t *b = p;
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (uint8_t)x;
    }
}

static void fill_doubles(double *d, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) d[i] = (double)((i * 7919u + seed) % 100003u) - 50000.5;
}

/* Packs box b of the host array `base` (row-major), the reference for a write. */
static uint8_t *pack_ref(const void *base, const gbp_box *b, size_t el)
{
    size_t n = gbp_box_elements(b) * el;
    uint8_t *out = malloc(n ? n : 1), *o = out;
    size_t idx[GBP_MAX_DIMS] = {0};
    if (n == 0) return out;
    for (;;) {
        size_t lin = 0;
        for (size_t i = 0; i < b->ndims; i++) lin = lin * b->dims[i] + b->start[i] + idx[i];
        memcpy(o, (const uint8_t *)base + lin * el, el);
        o += el;
        size_t i = b->ndims;
        while (i > 0) {
            i--;
            if (++idx[i] < b->count[i]) break;
            idx[i] = 0;
            if (i == 0) return out;
        }
        if (b->ndims == 0) return out;
    }
}

static void make_box(gbp_box *b, size_t nd, const size_t *dims, const size_t *start,
                     const size_t *count)
{
    b->ndims = nd;
    for (size_t i = 0; i < nd; i++) {
        b->dims[i] = dims[i];
        b->start[i] = start[i];
        b->count[i] = count[i];
    }
}

/* ---- box geometry ------------------------------------------------------------------------------ */
typedef struct copy_ref {
    const uint8_t *a;
    uint8_t *b;
    int pieces;
} copy_ref;

static int apply_piece(void *vc, const gbp_piece *p)
{
    copy_ref *c = vc;
    c->pieces++;
    for (size_t z = 0; z < p->depth; z++)
        for (size_t y = 0; y < p->height; y++)
            memcpy(c->b + p->b_off + z * p->bslice + y * p->bpitch,
                   c->a + p->a_off + z * p->aslice + y * p->apitch, p->width);
    return 0;
}

static void check_walk(size_t nd, const size_t *adims, const size_t *astart, const size_t *bdims,
                       const size_t *bstart, const size_t *count, size_t el, int max_pieces)
{
    gbp_box a, b;
    make_box(&a, nd, adims, astart, count);
    make_box(&b, nd, bdims, bstart, count);
    size_t na = 1, nb = 1;
    for (size_t i = 0; i < nd; i++) {
        na *= adims[i];
        nb *= bdims[i];
    }
    uint8_t *src = malloc(na * el), *dst = calloc(nb, el);
    fill_pattern(src, na * el, 7);
    copy_ref c = {src, dst, 0};
    assert_int_equal(gbp_box_walk3d(&a, &b, el, apply_piece, &c), 0);
    assert_true(c.pieces <= max_pieces);
    uint8_t *pa = pack_ref(src, &a, el), *pb = pack_ref(dst, &b, el);
    assert_memory_equal(pa, pb, gbp_box_elements(&a) * el);
    /* nothing outside box b was touched */
    uint8_t *zero = calloc(nb, el);
    uint8_t *dcopy = malloc(nb * el);
    memcpy(dcopy, dst, nb * el);
    gbp_box bb = b;
    copy_ref clear = {zero, dcopy, 0};
    assert_int_equal(gbp_box_walk3d(&bb, &bb, el, apply_piece, &clear), 0);
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
    make_box(&b, nd, dims, start, count);
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
/* Writes box `b` of a simulated-device array through the pipeline and checks the file and
 * min/max against host references. */
static void write_case(gbp_params p, size_t nd, const size_t *dims, const size_t *start,
                       const size_t *count, int type, uint64_t off)
{
    size_t el = gbp_type_size(type);
    gbp_box b;
    make_box(&b, nd, dims, start, count);
    size_t n = 1;
    for (size_t i = 0; i < nd; i++) n *= dims[i];
    void *dev = gbp_sim_alloc(n * el);
    assert_non_null(dev);
    if (type == GPUBP_TYPE_DOUBLE) fill_doubles(dev, n, 3);
    else fill_pattern(dev, n * el, 11);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    int fd = open_tmp("w.dat");
    unsigned char mn[16], mx[16], rmn[16], rmx[16];
    memset(mn, 0xAB, sizeof mn);
    memset(mx, 0xAB, sizeof mx);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, off, dev, type, &b, mn, mx));
    TS_OK(gbp_mem_sync(m));
    uint8_t *ref = pack_ref(dev, &b, el);
    size_t bytes = gbp_box_elements(&b) * el;
    uint8_t *got = read_back(fd, off, bytes);
    assert_memory_equal(got, ref, bytes);
    if (bytes) {
        gbp_minmax(type, ref, bytes / el, rmn, rmx, 0);
        assert_memory_equal(mn, rmn, el);
        assert_memory_equal(mx, rmx, el);
    }
    /* the pool bounds the host memory, whatever the block size */
    size_t pool = (size_t)p.pool_slots * p.chunk_bytes;
    assert_true(gbp_mem_footprint(m) >= pool);
    assert_true(gbp_mem_footprint(m) <= pool + 2 * 4096 * (size_t)p.pool_slots + 65536);
    gbp_mem_close(m);
    close(fd);
    free(ref);
    free(got);
    gbp_sim_free(dev);
}

static void write_chunk_boundaries(void **state)
{
    (void)state;
    size_t d[] = {100000}, s[] = {0};
    /* block sizes around multiples of the chunk: below, at, above */
    size_t chunk = 8192;
    size_t sizes[] = {1, 1023, 1024, 1025, 2047, 2048, 2049, 4096 * 3 + 1, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t c[] = {sizes[i]};
        write_case(sim_params(4, chunk, 2), 1, d, s, c, GPUBP_TYPE_DOUBLE, 17);
    }
    /* a chunk size that is not a multiple of the element size */
    size_t c[] = {5000};
    write_case(sim_params(3, 1000, 2), 1, d, s, c, GPUBP_TYPE_DOUBLE_COMPLEX, 0);
}

static void write_pool_smaller_than_block(void **state)
{
    (void)state;
    /* 2 slots of 4 KiB for a 2 MiB block, with a slow device: the caller waits for slots */
    gbp_sim_set_delay_us(50);
    size_t d[] = {512, 1024}, s[] = {0, 0}, c[] = {512, 1024};
    write_case(sim_params(2, 4096, 1), 2, d, s, c, GPUBP_TYPE_FLOAT, 4096);
    write_case(sim_params(2, 4096, 3), 2, d, s, c, GPUBP_TYPE_INT32, 1);
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
        write_case(sim_params(3, 512, 2), 2, d2, s2, c2, types[t], 8);
    size_t d3[] = {9, 10, 11}, s3[] = {2, 2, 2}, c3[] = {5, 6, 7};
    write_case(sim_params(4, 100, 2), 3, d3, s3, c3, GPUBP_TYPE_DOUBLE, 0);
    size_t d4[] = {4, 5, 6, 7}, s4[] = {1, 0, 1, 2}, c4[] = {2, 5, 4, 3};
    write_case(sim_params(2, 256, 2), 4, d4, s4, c4, GPUBP_TYPE_INT16, 3);
}

static void write_many_small_blocks(void **state)
{
    (void)state;
    gbp_params p = sim_params(4, 1 << 16, 4);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    enum { NB = 2000, EL = 13 };
    float *dev = gbp_sim_alloc(NB * EL * sizeof(float));
    for (int i = 0; i < NB * EL; i++) dev[i] = (float)((i * 31) % 977) - 300.0f;
    int fd = open_tmp("small.dat");
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
static void read_case(gbp_params p, size_t nd, const size_t *bdims, const size_t *fstart,
                      const size_t *count, const size_t *ddims, const size_t *dstart, size_t el,
                      uint64_t off)
{
    gbp_box fb, db;
    make_box(&fb, nd, bdims, fstart, count);
    make_box(&db, nd, ddims, dstart, count);
    size_t nf = 1, nd_ = 1;
    for (size_t i = 0; i < nd; i++) {
        nf *= bdims[i];
        nd_ *= ddims[i];
    }
    uint8_t *block = malloc(nf * el);
    fill_pattern(block, nf * el, 5);
    int fd = open_tmp("r.dat");
    assert_int_equal(gbp_pwrite_all(fd, block, nf * el, off, "t"), 0);
    uint8_t *dev = gbp_sim_alloc(nd_ * el);
    memset(dev, 0x5A, nd_ * el);
    uint8_t *expect = malloc(nd_ * el);
    memset(expect, 0x5A, nd_ * el);
    copy_ref c = {block, expect, 0};
    assert_int_equal(gbp_box_walk3d(&fb, &db, el, apply_piece, &c), 0);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, off, el, &fb, dev, &db));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(dev, expect, nd_ * el);
    gbp_mem_close(m);
    close(fd);
    free(block);
    free(expect);
    gbp_sim_free(dev);
}

static void read_whole_and_subbox(void **state)
{
    (void)state;
    size_t d1[] = {10007}, z1[] = {0};
    read_case(sim_params(4, 4096, 2), 1, d1, z1, d1, d1, z1, 8, 123);
    read_case(sim_params(2, 1000, 3), 1, d1, z1, d1, d1, z1, 4, 0);
    /* the half-box of a 2-D block into a dense buffer */
    size_t b2[] = {64, 128}, f2[] = {0, 32}, c2[] = {64, 64}, z2[] = {0, 0};
    read_case(sim_params(4, 2048, 2), 2, b2, f2, c2, c2, z2, 8, 4096);
    /* a 3-D sub-box into a ghosted device buffer, spans cut inside rows */
    size_t b3[] = {13, 17, 19}, f3[] = {2, 3, 4}, c3[] = {9, 11, 13}, d3[] = {11, 13, 15},
           s3[] = {1, 1, 1};
    read_case(sim_params(3, 256, 2), 3, b3, f3, c3, d3, s3, 4, 7);
    read_case(sim_params(3, 40, 2), 3, b3, f3, c3, d3, s3, 4, 7);
    /* 5-D, odd element size */
    size_t b5[] = {3, 4, 5, 3, 4}, f5[] = {1, 0, 1, 1, 1}, c5[] = {2, 4, 3, 2, 3},
           z5[] = {0, 0, 0, 0, 0};
    read_case(sim_params(2, 64, 1), 5, b5, f5, c5, c5, z5, 16, 1);
}

static void read_with_delays(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(100);
    size_t b2[] = {200, 300}, f2[] = {10, 20}, c2[] = {150, 250}, z2[] = {0, 0};
    read_case(sim_params(2, 8192, 4), 2, b2, f2, c2, c2, z2, 8, 0);
    gbp_sim_reset();
}

/* After a failure and gbp_sim_reset(): the n device bytes at dev written whole at offset 0 of
 * fd, and the file checked. */
static void recovers(gbp_mem *m, int fd, const uint8_t *dev, size_t n)
{
    gbp_sim_reset();
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_sync(m));
    uint8_t *got = read_back(fd, 0, n);
    assert_memory_equal(got, dev, n);
    free(got);
}

/* Slot bytes the pipeline reused while a device copy still touched them, since the last reset
 * (the simulated device's check_idle, called at every pread into a slot and at every release of
 * a device write's slot). */
static long hazards(void)
{
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    return st.hazards;
}

/* ---- chunks copied in pieces ------------------------------------------------------------------ */
static gbp_params piece_params(int slots, size_t chunk, int threads, size_t piece)
{
    gbp_params p = sim_params(slots, chunk, threads);
    p.piece_bytes = piece;
    return p;
}

static void transfers_in_pieces(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(20);
    /* contiguous blocks: one piece, a partial last piece, pieces that do not divide the chunk
     * or the element, several chunks; strided boxes (copied in one go) beside them */
    size_t d[] = {50000}, s[] = {3};
    size_t sizes[] = {100, 512, 513, 4097, 20000, 49997};
    size_t pieces[] = {4096, 5000, 1000};
    for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            size_t c[] = {sizes[i]};
            write_case(piece_params(4, 16384, 3, pieces[k]), 1, d, s, c, GPUBP_TYPE_DOUBLE, 17);
        }
    size_t d2[] = {70, 90}, s2[] = {0, 0}, c2[] = {70, 90}, g2[] = {3, 5}, h2[] = {60, 80};
    write_case(piece_params(3, 8192, 2, 1024), 2, d2, s2, c2, GPUBP_TYPE_FLOAT, 0);
    write_case(piece_params(3, 8192, 2, 1024), 2, d2, g2, h2, GPUBP_TYPE_FLOAT, 0);
    /* reads: contiguous chunks read and copied in pieces, a sub-box in one go */
    size_t r1[] = {30011}, z1[] = {0};
    read_case(piece_params(4, 16384, 3, 4096), 1, r1, z1, r1, r1, z1, 8, 99);
    read_case(piece_params(3, 10000, 2, 3000), 1, r1, z1, r1, r1, z1, 4, 0);
    size_t b2[] = {64, 128}, f2[] = {0, 32}, q2[] = {64, 64}, o2[] = {0, 0};
    read_case(piece_params(4, 8192, 2, 1024), 2, b2, f2, q2, q2, o2, 8, 4096);
    assert_int_equal(hazards(), 0);
    gbp_sim_reset();
}

/* One slot per I/O thread and one file per thread (the default pool with subfiles=auto): a
 * chunk copied in pieces hands its slot on to its file's next chunk, whose first piece is copied
 * into the slot while the chunk's last piece is written. Several files, chunks of 2 to 4 pieces
 * with partial last pieces, a strided block in between (copied in one go: not shared), a slow
 * device: every file byte for byte, and no slot byte reused while a copy still touched it. */
static void writes_share_slots(void **state)
{
    (void)state;
    gbp_sim_reset();
    gbp_sim_set_delay_us(60);
    /* n: 12 chunks of 4 pieces, so that the strided box's first chunk, a whole slot, follows
     * the last of them (and overlaps its last piece were it handed the slot) */
    const size_t n = 12 * 16384, piece = 4096;
    gbp_params p = piece_params(3, 16384, 3, piece);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    uint8_t *dev[3];
    int fd[3];
    gbp_box whole;
    gbp_box_dense(&whole, 1, &n);
    size_t dims[2] = {400, 500}, st[2] = {10, 7}, ct[2] = {300, 480};
    gbp_box strided;
    make_box(&strided, 2, dims, st, ct);
    for (int round = 0; round < 2; round++) {
        for (int f = 0; f < 3; f++) {
            dev[f] = gbp_sim_alloc(n);
            assert_non_null(dev[f]);
            fill_pattern(dev[f], n, 40u + (unsigned)f + 3u * (unsigned)round);
            char name[32];
            snprintf(name, sizeof name, "share%d.dat", f);
            fd[f] = open_tmp(name);
        }
        for (int f = 0; f < 3; f++) {
            TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd[f], 0, dev[f], GPUBP_TYPE_UINT8, &whole, NULL,
                                NULL));
            /* after it, in the same file: a strided box, then the whole buffer again */
            TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd[f], n, dev[f], GPUBP_TYPE_UINT8, &strided,
                                NULL, NULL));
            TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd[f], n + 300 * 480, dev[f], GPUBP_TYPE_UINT8,
                                &whole, NULL, NULL));
        }
        TS_OK(gbp_mem_sync(m));
        for (int f = 0; f < 3; f++) {
            uint8_t *got = read_back(fd[f], 0, 2 * n + 300 * 480);
            assert_memory_equal(got, dev[f], n);
            for (size_t r = 0; r < 300; r++)
                assert_memory_equal(got + n + r * 480, dev[f] + (10 + r) * 500 + 7, 480);
            assert_memory_equal(got + n + 300 * 480, dev[f], n);
            free(got);
            close(fd[f]);
            gbp_sim_free(dev[f]);
        }
    }
    assert_int_equal(hazards(), 0);
    gbp_mem_close(m);
    gbp_sim_reset();
}

/* Reads that reuse a slot while the device copies out of it still run (two slots, a slow
 * device), switching between chunks read in pieces, strided chunks read in one go, and pieces of
 * fewer pieces than the read before: no byte of a slot is overwritten before its copy ran. */
static void reads_reuse_slots_in_pieces(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(150);
    gbp_params p = piece_params(2, 16384, 2, 4096);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    const size_t rows = 64, cols = 1024, n = rows * cols; /* float, 256 KiB in the file */
    float *file = malloc(n * sizeof *file);
    assert_non_null(file);
    for (size_t i = 0; i < n; i++) file[i] = (float)i * 0.25f + 1.0f;
    int fd = open_tmp("reuse.dat");
    assert_int_equal(gbp_pwrite_all(fd, file, n * sizeof *file, 0, "t"), GPUBP_OK);
    /* A: everything, contiguous (16 chunks of 4 pieces); B: columns 100..899 of rows 3..60
     * (strided, in one go); C: rows 10..21 whole (3 chunks, the last of 2 pieces) */
    size_t dims[2] = {rows, cols}, z[2] = {0, 0}, all[2] = {rows, cols};
    size_t bs[2] = {3, 100}, bc[2] = {58, 800}, cs[2] = {10, 0}, cc[2] = {12, cols};
    gbp_box fa, fb, fc, da, db, dc;
    make_box(&fa, 2, dims, z, all);
    make_box(&fb, 2, dims, bs, bc);
    make_box(&fc, 2, dims, cs, cc);
    make_box(&da, 2, all, z, all);
    make_box(&db, 2, bc, z, bc);
    make_box(&dc, 2, cc, z, cc);
    float *a = gbp_sim_alloc(n * sizeof *a), *b = gbp_sim_alloc(58 * 800 * sizeof *b),
          *c = gbp_sim_alloc(12 * cols * sizeof *c);
    assert_true(a && b && c);
    for (int round = 0; round < 3; round++) {
        memset(a, 0, n * sizeof *a);
        memset(b, 0, 58 * 800 * sizeof *b);
        memset(c, 0, 12 * cols * sizeof *c);
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, sizeof(float), &fa, a, &da));
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, sizeof(float), &fb, b, &db));
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, sizeof(float), &fc, c, &dc));
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, sizeof(float), &fa, a, &da));
        TS_OK(gbp_mem_sync(m));
        assert_memory_equal(a, file, n * sizeof *a);
        for (size_t r = 0; r < 58; r++)
            assert_memory_equal(b + r * 800, file + (3 + r) * cols + 100, 800 * sizeof *b);
        assert_memory_equal(c, file + 10 * cols, 12 * cols * sizeof *c);
    }
    gbp_mem_close(m);
    assert_int_equal(hazards(), 0);
    close(fd);
    free(file);
    gbp_sim_free(a);
    gbp_sim_free(b);
    gbp_sim_free(c);
    gbp_sim_reset();
}

/* After a failed write in pieces, each piece-sized region of the file holds the source's bytes
 * or the marker it was filled with: a piece whose copy failed is never written. */
static void check_pieces_or_marker(int fd, const uint8_t *src, size_t n, size_t piece)
{
    uint8_t *got = read_back(fd, 0, n);
    for (size_t o = 0; o < n; o += piece) {
        size_t k = n - o < piece ? n - o : piece, marker = 0;
        while (marker < k && got[o + marker] == 0xEE) marker++;
        if (marker != k) assert_memory_equal(got + o, src + o, k);
    }
    free(got);
}

static void failure_in_pieces(void **state)
{
    (void)state;
    const size_t n = 256 * 1024, piece = 4096;
    gbp_params p = piece_params(4, 32768, 3, piece);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    uint8_t *dev = gbp_sim_alloc(n), *marker = malloc(n);
    assert_non_null(dev);
    assert_non_null(marker);
    fill_pattern(dev, n, 21);
    memset(marker, 0xEE, n);
    int fd = open_tmp("pieces.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    long after[] = {0, 3, 9, 30};
    for (size_t i = 0; i < sizeof after / sizeof *after; i++) {
        /* a piece's copy fails: the error is the device's, no torn piece reaches the file */
        assert_int_equal(gbp_pwrite_all(fd, marker, n, 0, "t"), GPUBP_OK);
        gbp_sim_set_delay_us(i % 2 ? 30 : 0);
        gbp_sim_fail_copy_after(after[i]);
        (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL);
        assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_DEVICE);
        assert_non_null(strstr(gbp_error_message(), "injected"));
        check_pieces_or_marker(fd, dev, n, piece);
        /* a pwrite fails: the error is the file's */
        gbp_sim_reset();
        assert_int_equal(gbp_pwrite_all(fd, marker, n, 0, "t"), GPUBP_OK);
        gbp_sim_fail_io_after(after[i] % 7);
        (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL);
        assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_IO);
        assert_non_null(strstr(gbp_error_message(), "data file"));
        check_pieces_or_marker(fd, dev, n, piece);
        gbp_sim_fail_io_after(-1);
    }
    /* the context recovers: the next transfer is whole, one copy per piece */
    recovers(m, fd, dev, n);
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    assert_int_equal(st.copies, (long)(n / piece));
    gbp_mem_close(m);
    close(fd);
    free(marker);
    gbp_sim_free(dev);
}

/* The hazard check the tests count on: a copy queued and not complete is seen on the bytes it
 * writes, with `reads` on those it reads too, strided copies by their rows' extent, and nothing
 * once the stream ran. */
static void hazard_check(void **state)
{
    (void)state;
    gbp_sim_reset();
    const gbp_devops *ops = gbp_sim_ops();
    void *ctx;
    TS_OK(ops->open(&ctx));
    uint8_t *dev = gbp_sim_alloc(8192), *host = malloc(8192);
    assert_true(dev && host);
    memset(dev, 1, 8192);
    gbp_sim_hold(1);
    gbp_copy3d d2h = {dev, host + 1024, 2048, 1, 1, 0, 0, 0, 0, GBP_COPY_D2H};
    TS_OK(ops->copy_async(ctx, &d2h));
    assert_int_equal(ops->check_idle(ctx, host + 3000, 100, 0), GPUBP_ERR_INTERNAL);
    assert_non_null(strstr(gbp_error_message(), "still queued"));
    assert_int_equal(ops->check_idle(ctx, host + 3072, 100, 1), GPUBP_OK);
    assert_int_equal(ops->check_idle(ctx, host, 1024, 1), GPUBP_OK);
    assert_int_equal(ops->check_idle(ctx, dev + 10, 10, 0), GPUBP_OK);
    assert_int_equal(ops->check_idle(ctx, dev + 10, 10, 1), GPUBP_ERR_INTERNAL);
    /* 4 rows of 16 bytes, 64 apart: [4096, 4096 + 3 * 64 + 16) of host */
    gbp_copy3d h2d = {host + 4096, dev + 4096, 16, 4, 1, 64, 0, 64, 0, GBP_COPY_H2D};
    TS_OK(ops->copy_async(ctx, &h2d));
    assert_int_equal(ops->check_idle(ctx, host + 4096 + 200, 8, 0), GPUBP_OK);
    assert_int_equal(ops->check_idle(ctx, host + 4096 + 200, 8, 1), GPUBP_ERR_INTERNAL);
    assert_int_equal(ops->check_idle(ctx, host + 4096 + 208, 8, 1), GPUBP_OK);
    gbp_sim_hold(0);
    TS_OK(ops->sync(ctx));
    assert_int_equal(ops->check_idle(ctx, host, 8192, 1), GPUBP_OK);
    assert_int_equal(hazards(), 3);
    assert_memory_equal(host + 1024, dev, 2048);
    ops->close(ctx);
    gbp_sim_free(dev);
    free(host);
    gbp_sim_reset();
}

/* One transfer through m while the n-th copy (what 0) or event record (what 1) from now is
 * refused at once: the transfer fails with the device's refusal, and no slot byte is reused while
 * a copy still touches it (the copies queued before the refusal, which no event may cover, are
 * waited for). */
static void refused_once(int what, long nth)
{
    gbp_sim_reset();
    gbp_sim_set_delay_us(nth % 3 ? 40 : 0);
    if (what == 0) gbp_sim_fail_queue_after(nth);
    else gbp_sim_fail_record_after(nth);
}

static void refused_check(gbp_mem *m)
{
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_DEVICE);
    assert_non_null(strstr(gbp_error_message(), "refused (injected"));
    assert_int_equal(gbp_error_native(), 1);
    assert_int_equal(hazards(), 0);
}

static void refused_copies_and_events(void **state)
{
    (void)state;
    const size_t n = 128 * 1024, piece = 4096, rows = 256, cols = 512;
    gbp_params p = piece_params(3, 16384, 2, piece);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    uint8_t *dev = gbp_sim_alloc(n), *back = gbp_sim_alloc(n), *marker = malloc(n);
    assert_true(dev && back && marker);
    fill_pattern(dev, n, 77);
    memset(marker, 0xEE, n);
    int fd = open_tmp("refused.dat");
    gbp_box whole, fb, db;
    gbp_box_dense(&whole, 1, &n);
    size_t dims[2] = {rows, cols}, st[2] = {5, 64}, cnt[2] = {200, 384}, z[2] = {0, 0};
    make_box(&fb, 2, dims, st, cnt);
    make_box(&db, 2, cnt, z, cnt);
    for (int what = 0; what < 2; what++) {
        for (long k = 0; k < 30; k += 3) {
            /* a write in pieces (32 copies, 32 events) */
            assert_int_equal(gbp_pwrite_all(fd, marker, n, 0, "t"), GPUBP_OK);
            refused_once(what, k);
            (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &whole, NULL, NULL);
            refused_check(m);
            check_pieces_or_marker(fd, dev, n, piece);
            /* a strided write (a chunk of 42 rows in one 2-D copy and one event) */
            refused_once(what, k / 6);
            (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &fb, NULL, NULL);
            refused_check(m);
            /* reads: whole, in pieces, and the sub-box in 2-D copies; then read again, after a
             * read that reused the slots */
            refused_once(what, k);
            (void)gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &whole, back, &whole);
            refused_check(m);
            refused_once(what, k / 6);
            (void)gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &fb, back, &db);
            refused_check(m);
        }
    }
    /* the context recovers: a whole write, then the file read back whole and as the sub-box */
    recovers(m, fd, dev, n);
    memset(back, 0, n);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &whole, back, &whole));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(back, dev, n);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &fb, back, &db));
    TS_OK(gbp_mem_sync(m));
    for (size_t r = 0; r < cnt[0]; r++)
        assert_memory_equal(back + r * cnt[1], dev + (st[0] + r) * cols + st[1], cnt[1]);
    assert_int_equal(hazards(), 0);
    gbp_mem_close(m);
    close(fd);
    free(marker);
    gbp_sim_free(dev);
    gbp_sim_free(back);
    gbp_sim_reset();
}

/* ---- failures ---------------------------------------------------------------------------------- */
static void failure_mid_copy(void **state)
{
    (void)state;
    gbp_params p = sim_params(2, 4096, 2);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    size_t n = 64 * 1024;
    uint8_t *dev = gbp_sim_alloc(n);
    fill_pattern(dev, n, 9);
    int fd = open_tmp("fail.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    gbp_sim_fail_copy_after(5); /* the 6th chunk's copy fails halfway */
    int rc = gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL);
    assert_true(rc == GPUBP_OK || rc == GPUBP_ERR_DEVICE);
    rc = gbp_mem_sync(m);
    assert_int_equal(rc, GPUBP_ERR_DEVICE);
    assert_non_null(strstr(gbp_error_message(), "injected"));
    assert_int_equal(gbp_error_native(), 700);
    /* the failed chunk was never written: the file ends before it */
    uint64_t size;
    assert_int_equal(gbp_file_size(fd, &size, "t"), 0);
    assert_true(size <= 5 * 4096);
    /* the context recovers: the next transfer works */
    recovers(m, fd, dev, n);
    gbp_mem_close(m);
    close(fd);
    gbp_sim_free(dev);
}

/* Queued commits (async_commit): a commit runs after every write queued before it and never
 * when one of them failed; a failure of a later epoch does not stop an earlier commit; the
 * caller's buffer is free once gbp_mem_wait_staged returns, while the writes go on. */
typedef struct commit_probe {
    int fd;
    size_t n;
    const uint8_t *want; /* what the file must hold when the commit runs */
    int ran, matched;
} commit_probe;

static int probe_commit(void *vc)
{
    commit_probe *c = vc;
    c->ran++;
    uint8_t *b = malloc(c->n);
    if (b && gbp_pread_all(c->fd, b, c->n, 0, "test") == GPUBP_OK) c->matched = !memcmp(b, c->want, c->n);
    free(b);
    return c->matched ? GPUBP_OK : gbp_error(GPUBP_ERR_IO, 0, "probe: data not written yet");
}

static void commits_after_writes(void **state)
{
    (void)state;
    gbp_params p = sim_params(3, 4096, 2);
    gbp_mem *m;
    TS_OK(gbp_mem_open(&m, &p));
    gbp_sim_set_delay_us(200); /* copies land late: the commit must still wait for the writes */
    size_t n = 64 * 1024;
    uint8_t *dev = gbp_sim_alloc(n), *want = malloc(n);
    assert_non_null(want);
    int fd = open_tmp("commit.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    TS_OK(gbp_mem_commit_wait(m)); /* none queued: OK */
    for (unsigned e = 0; e < 3; e++) {
        fill_pattern(dev, n, 40 + e);
        memcpy(want, dev, n);
        TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
        TS_OK(gbp_mem_wait_staged(m));
        memset(dev, 0xEE, n); /* the buffer is the caller's again */
        commit_probe *c = calloc(1, sizeof *c);
        *c = (commit_probe){fd, n, want, 0, 0};
        TS_OK(gbp_mem_commit_async(m, probe_commit, c, NULL));
        TS_OK(gbp_mem_commit_wait(m));
        assert_int_equal(c->ran, 1);
        assert_int_equal(c->matched, 1);
        free(c);
    }
    /* epoch 1 fails (its first write): its commit does not run and reports the failure; the
     * writes of epoch 2, queued before that commit ran, still land and commit */
    fill_pattern(dev, n, 50);
    gbp_sim_fail_io_after(0);
    (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL);
    assert_int_equal(gbp_mem_wait_staged(m), GPUBP_ERR_IO);
    commit_probe c1 = {fd, n, want, 0, 0};
    TS_OK(gbp_mem_commit_async(m, probe_commit, &c1, NULL));
    assert_int_equal(gbp_mem_commit_wait(m), GPUBP_ERR_IO);
    assert_non_null(strstr(gbp_error_message(), "injected"));
    assert_int_equal(c1.ran, 0);
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_IO); /* the failure, reported once more */
    gbp_sim_fail_io_after(-1);
    TS_OK(gbp_mem_sync(m));
    fill_pattern(dev, n, 51);
    memcpy(want, dev, n);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_wait_staged(m));
    commit_probe c2 = {fd, n, want, 0, 0};
    TS_OK(gbp_mem_commit_async(m, probe_commit, &c2, NULL));
    /* epoch 3 fails (its first copy: epoch 2's copies are all done) while commit 2 may still
     * wait for its writes: commit 2 is not stopped */
    size_t n3 = 16 * 1024;
    gbp_box b3;
    gbp_box_dense(&b3, 1, &n3);
    gbp_sim_fail_copy_after(0);
    (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, n, dev, GPUBP_TYPE_UINT8, &b3, NULL, NULL);
    TS_OK(gbp_mem_commit_wait(m));
    assert_int_equal(c2.ran, 1);
    assert_int_equal(c2.matched, 1);
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_DEVICE);
    gbp_sim_fail_copy_after(-1);
    gbp_sim_set_delay_us(0);
    gbp_mem_close(m);
    close(fd);
    free(want);
    gbp_sim_free(dev);
}

/* A write handed a slot that host-to-device copies out of it may still read, which then queues
 * nothing (its step failed) and hands the slot on to its file's next chunk, which queues nothing
 * either: the slot goes back still marked, so that the next read into it waits for those copies.
 * One slot, one I/O thread, a slow device; queued in one go: a read of two chunks (the second
 * waits for the first one's copies piece by piece, then its copy is refused: the step fails), a
 * write of two chunks in pieces to another file (the first hands its slot on to the second),
 * the step's commit, and a read of the next step into the slot. */
static void handed_on_slot_keeps_pending_reads(void **state)
{
    (void)state;
    gbp_sim_reset();
    const size_t chunk = 16384, piece = 4096, n = 2 * chunk;
    gbp_params p = piece_params(1, chunk, 1, piece);
    gbp_mem *m;
    TS_OK(gbp_mem_open(&m, &p));
    uint8_t *file = malloc(n);
    assert_non_null(file);
    fill_pattern(file, n, 77);
    int rfd = open_tmp("handon-r.dat"), wfd = open_tmp("handon-w.dat");
    assert_int_equal(gbp_pwrite_all(rfd, file, n, 0, "t"), GPUBP_OK);
    uint8_t *a = gbp_sim_alloc(n), *w = gbp_sim_alloc(n), *c = gbp_sim_alloc(chunk);
    assert_true(a && w && c);
    fill_pattern(w, n, 78);
    memset(c, 0, chunk);
    gbp_box whole, first;
    gbp_box_dense(&whole, 1, &n);
    gbp_box_dense(&first, 1, &chunk);
    gbp_sim_set_delay_us(20000); /* each copy lands 20 ms late */
    gbp_sim_fail_queue_after(4); /* the first copy of the second chunk read: 4 pieces before it */
    /* the stream held until everything is queued: the second chunk read waits for the first
     * one's first piece, so no failure stops the queuing */
    gbp_sim_hold(1);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, rfd, 0, 1, &whole, a, &whole));
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, wfd, 0, w, GPUBP_TYPE_UINT8, &whole, NULL, NULL));
    commit_probe cp = {wfd, n, w, 0, 0};
    TS_OK(gbp_mem_commit_async(m, probe_commit, &cp, NULL));
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, rfd, 0, 1, &first, c, &first));
    gbp_sim_hold(0);
    assert_int_equal(gbp_mem_commit_wait(m), GPUBP_ERR_DEVICE);
    assert_non_null(strstr(gbp_error_message(), "refused (injected"));
    assert_int_equal(cp.ran, 0);
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_DEVICE); /* reported once more */
    TS_OK(gbp_mem_sync(m));
    /* the next step's read waited for the copies out of the slot: its bytes, no hazard */
    assert_int_equal(hazards(), 0);
    assert_memory_equal(c, file, chunk);
    struct stat st; /* the failed step's write wrote nothing */
    assert_int_equal(fstat(wfd, &st), 0);
    assert_int_equal(st.st_size, 0);
    gbp_mem_close(m);
    close(rfd);
    close(wfd);
    free(file);
    gbp_sim_free(a);
    gbp_sim_free(w);
    gbp_sim_free(c);
    gbp_sim_reset();
}

static void failure_mid_write_and_read(void **state)
{
    (void)state;
    gbp_params p = sim_params(3, 4096, 3);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    size_t n = 100 * 1024;
    uint8_t *dev = gbp_sim_alloc(n);
    fill_pattern(dev, n, 13);
    int fd = open_tmp("failw.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    gbp_sim_fail_io_after(7);
    (void)gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL);
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_IO);
    assert_int_equal(gbp_error_native(), EIO);
    assert_non_null(strstr(gbp_error_message(), "data file"));
    /* a read failing mid-way is reported the same way, and the next one works */
    gbp_sim_fail_io_after(-1);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_sync(m));
    uint8_t *back = gbp_sim_alloc(n);
    gbp_sim_fail_io_after(4);
    (void)gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &b, back, &b);
    assert_int_equal(gbp_mem_sync(m), GPUBP_ERR_IO);
    gbp_sim_fail_io_after(-1);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &b, back, &b));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(back, dev, n);
    gbp_mem_close(m);
    close(fd);
    gbp_sim_free(back);
    gbp_sim_free(dev);
}

static void failure_pinned_alloc(void **state)
{
    (void)state;
    gbp_params p = sim_params(4, 4096, 2);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    size_t n = 1000;
    uint8_t *dev = gbp_sim_alloc(n);
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int fd = open_tmp("nomem.dat");
    gbp_sim_fail_pinned_alloc_after(2);
    assert_int_equal(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL),
                     GPUBP_ERR_NOMEM);
    gbp_mem_close(m); /* frees the slots that were allocated */
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    assert_int_equal(st.pinned_live, 0);
    assert_int_equal(st.pinned_bytes, 0);
    gbp_sim_reset();
    close(fd);
    gbp_sim_free(dev);
}

/* The pinned-slot cache: a closed file's slots are kept (not freed) and the next file with the
 * same slot size takes them instead of pinning new memory; other sizes pin their own; the limit
 * (GPUBP_POOL_CACHE_MIB) bounds what is kept; trim frees everything kept. */
static void pool_cache(void **state)
{
    (void)state;
    gbp_mem_pool_cache_trim();
    gbp_sim_reset();
    gbp_mem_pool_cache_sim(1);
    size_t n = 100000;
    uint8_t *dev = gbp_sim_alloc(n);
    fill_pattern(dev, n, 7);
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int fd = open_tmp("cache.dat");
    gbp_sim_stats st;
    for (int round = 0; round < 3; round++) {
        gbp_params p = sim_params(4, round == 2 ? 8192 : 4096, 2);
        gbp_mem *m;
        TS_OK(gbp_mem_open(&m, &p));
        TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
        TS_OK(gbp_mem_sync(m));
        gbp_sim_get_stats(&st);
        /* round 1 reuses round 0's slots; round 2 (another size) pins 4 more */
        assert_int_equal(st.pinned_bytes, round == 2 ? 4 * 4096 + 4 * 8192 : 4 * 4096);
        gbp_mem_close(m);
        assert_int_equal(gbp_mem_pool_cache_bytes(), round == 2 ? 4 * 4096 + 4 * 8192 : 4 * 4096);
        uint8_t *back = read_back(fd, 0, n);
        assert_memory_equal(back, dev, n);
        free(back);
    }
    gbp_mem_pool_cache_trim();
    assert_int_equal(gbp_mem_pool_cache_bytes(), 0);
    gbp_sim_get_stats(&st);
    assert_int_equal(st.pinned_live, 0);
    /* a limit of 0 keeps nothing */
    setenv("GPUBP_POOL_CACHE_MIB", "0", 1);
    gbp_params p = sim_params(4, 4096, 2);
    gbp_mem *m;
    TS_OK(gbp_mem_open(&m, &p));
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_sync(m));
    gbp_mem_close(m);
    unsetenv("GPUBP_POOL_CACHE_MIB");
    assert_int_equal(gbp_mem_pool_cache_bytes(), 0);
    gbp_sim_get_stats(&st);
    assert_int_equal(st.pinned_live, 0);
    gbp_mem_pool_cache_sim(0);
    close(fd);
    gbp_sim_free(dev);
}

/* ---- memory spaces ----------------------------------------------------------------------------- */
static void detect_and_unsupported(void **state)
{
    (void)state;
    gbp_params p = sim_params(4, 4096, 2);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
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
    gbp_params p = sim_params(2, 4096, 1);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    int32_t src[6 * 7];
    for (int i = 0; i < 42; i++) src[i] = i * 3 - 20;
    int32_t *dev = gbp_sim_alloc(sizeof(int32_t) * 5 * 5);
    memset(dev, 0, sizeof(int32_t) * 25);
    gbp_box sb, db;
    make_box(&sb, 2, (size_t[]){6, 7}, (size_t[]){1, 2}, (size_t[]){3, 4});
    make_box(&db, 2, (size_t[]){5, 5}, (size_t[]){1, 1}, (size_t[]){3, 4});
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
    gbp_params p = sim_params(2, 4096, 1);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    int token;
    TS_OK(gbp_mem_set_stream(m, &token));
    size_t n = 10000;
    uint8_t *dev = gbp_sim_alloc(n);
    fill_pattern(dev, n, 1);
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int fd = open_tmp("stream.dat");
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
    gbp_params p = sim_params(3, 8192, 2);
    p.direct_io = 1;
    size_t d[] = {50000}, s[] = {0}, c[] = {50000};
    /* unaligned offsets: partial pages are written through the page cache */
    write_case(p, 1, d, s, c, GPUBP_TYPE_DOUBLE, 4096 + 100);
    write_case(p, 1, d, s, c, GPUBP_TYPE_UINT8, 0);
    size_t b2[] = {64, 100}, f2[] = {3, 7}, c2[] = {50, 80}, z2[] = {0, 0};
    read_case(p, 2, b2, f2, c2, c2, z2, 8, 333);
}

/* ---- host memory: the I/O threads for big transfers, the bounce buffer for strided reads ------ */
static void host_read_case(size_t nd, const size_t *bdims, const size_t *fstart, const size_t *count,
                           const size_t *ddims, const size_t *dstart, size_t el)
{
    gbp_box fb, db;
    make_box(&fb, nd, bdims, fstart, count);
    make_box(&db, nd, ddims, dstart, count);
    size_t nf = 1, ndst = 1;
    for (size_t i = 0; i < nd; i++) {
        nf *= bdims[i];
        ndst *= ddims[i];
    }
    uint8_t *block = malloc(nf * el), *dst = malloc(ndst * el), *expect = malloc(ndst * el);
    fill_pattern(block, nf * el, 21);
    memset(dst, 0x33, ndst * el);
    memset(expect, 0x33, ndst * el);
    copy_ref c = {block, expect, 0};
    assert_int_equal(gbp_box_walk3d(&fb, &db, el, apply_piece, &c), 0);
    int fd = open_tmp("hr.dat");
    assert_int_equal(gbp_pwrite_all(fd, block, nf * el, 100, "t"), 0);
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, NULL), GPUBP_OK);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_HOST, fd, 100, el, &fb, dst, &db));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(dst, expect, ndst * el);
    gbp_mem_close(m);
    close(fd);
    free(block);
    free(dst);
    free(expect);
}

static void host_transfers(void **state)
{
    (void)state;
    /* a 20 MiB contiguous block: written and read in pieces by the I/O threads */
    size_t n = (size_t)20 << 17; /* doubles */
    double *h = malloc(n * sizeof(double)), *back = malloc(n * sizeof(double));
    fill_doubles(h, n, 8);
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, NULL), GPUBP_OK);
    gbp_mem *m;
    assert_int_equal(gbp_mem_open(&m, &p), GPUBP_OK);
    int fd = open_tmp("host.dat");
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
    fill_pattern(src, n, 23);
    int fd = open_tmp("defaults.dat");
    TS_OK(gbp_pwrite_all(fd, src, n, 0, "test"));
    uint8_t *dev = gbp_sim_alloc(n);
    assert_non_null(dev);
    memset(dev, 0, n);
    gbp_sim_reset();
    gbp_mem *m;
    TS_OK(gbp_mem_open(&m, &p));
    size_t dims[1] = {n}, start[1] = {0};
    gbp_box fb;
    make_box(&fb, 1, dims, start, dims);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &fb, dev, &fb));
    TS_OK(gbp_mem_sync(m));
    assert_int_equal(gbp_mem_footprint(m), 6 * ((size_t)1 << 20)); /* six 1 MiB slots */
    assert_memory_equal(dev, src, n);
    assert_int_equal(hazards(), 0);
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
