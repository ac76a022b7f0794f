/* Helpers of the staging-pipeline test (pipe_util.h). */
#include "memspace/pipe_util.h"

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
#include "memspace/simdev.h"

#include "support/test_support.h"

gbp_mem *pt_mem_open(gbp_params p)
{
    gbp_mem *m = NULL;
    TS_OK(gbp_mem_open(&m, &p));
    assert_non_null(m);
    return m;
}

gbp_params pt_sim_params(int slots, size_t chunk, int threads)
{
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, "device=simulated"), GPUBP_OK);
    p.pool_slots = slots;
    p.chunk_bytes = chunk;
    p.io_threads = threads;
    return p;
}

int pt_open_tmp(const char *name)
{
    int fd = open(ts_path(name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    return fd;
}

uint8_t *pt_read_back(int fd, uint64_t off, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    assert_non_null(b);
    assert_int_equal(gbp_pread_all(fd, b, n, off, "test"), GPUBP_OK);
    return b;
}

void pt_fill_pattern(void *p, size_t n, unsigned seed)
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

void pt_fill_doubles(double *d, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) d[i] = (double)((i * 7919u + seed) % 100003u) - 50000.5;
}

uint8_t *pt_pack_ref(const void *base, const gbp_box *b, size_t el)
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

size_t pt_make_box(gbp_box *b, size_t nd, const size_t *dims, const size_t *start,
                   const size_t *count)
{
    size_t n = 1;
    b->ndims = nd;
    for (size_t i = 0; i < nd; i++) {
        b->dims[i] = dims[i];
        b->start[i] = start[i];
        b->count[i] = count[i];
        n *= dims[i];
    }
    return n;
}

uint8_t *pt_dev_pattern(size_t n, unsigned seed, gbp_box *b)
{
    uint8_t *dev = gbp_sim_alloc(n);
    assert_non_null(dev);
    pt_fill_pattern(dev, n, seed);
    gbp_box_dense(b, 1, &n);
    return dev;
}

int pt_apply_piece(void *vc, const gbp_piece *p)
{
    pt_copy_ref *c = vc;
    c->pieces++;
    for (size_t z = 0; z < p->depth; z++)
        for (size_t y = 0; y < p->height; y++)
            memcpy(c->b + p->b_off + z * p->bslice + y * p->bpitch,
                   c->a + p->a_off + z * p->aslice + y * p->apitch, p->width);
    return 0;
}

void pt_write_case(gbp_params p, size_t nd, const size_t *dims, const size_t *start,
                   const size_t *count, int type, uint64_t off)
{
    size_t el = gbp_type_size(type);
    gbp_box b;
    size_t n = pt_make_box(&b, nd, dims, start, count);
    void *dev = gbp_sim_alloc(n * el);
    assert_non_null(dev);
    if (type == GPUBP_TYPE_DOUBLE) pt_fill_doubles(dev, n, 3);
    else pt_fill_pattern(dev, n * el, 11);
    gbp_mem *m = pt_mem_open(p);
    int fd = pt_open_tmp("w.dat");
    unsigned char mn[16], mx[16], rmn[16], rmx[16];
    memset(mn, 0xAB, sizeof mn);
    memset(mx, 0xAB, sizeof mx);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, off, dev, type, &b, mn, mx));
    TS_OK(gbp_mem_sync(m));
    uint8_t *ref = pt_pack_ref(dev, &b, el);
    size_t bytes = gbp_box_elements(&b) * el;
    uint8_t *got = pt_read_back(fd, off, bytes);
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

void pt_read_into(gpubp_memory_space sp, gbp_params p, size_t nd, const size_t *bdims,
                  const size_t *fstart, const size_t *count, const size_t *ddims,
                  const size_t *dstart, size_t el, uint64_t off)
{
    gbp_box fb, db;
    size_t nf = pt_make_box(&fb, nd, bdims, fstart, count);
    size_t nd_ = pt_make_box(&db, nd, ddims, dstart, count);
    uint8_t *block = malloc(nf * el);
    pt_fill_pattern(block, nf * el, sp == GPUBP_MEM_HOST ? 21 : 5);
    int fd = pt_open_tmp(sp == GPUBP_MEM_HOST ? "hr.dat" : "r.dat");
    assert_int_equal(gbp_pwrite_all(fd, block, nf * el, off, "t"), 0);
    uint8_t *dst = sp == GPUBP_MEM_HOST ? malloc(nd_ * el) : gbp_sim_alloc(nd_ * el);
    uint8_t *expect = malloc(nd_ * el);
    memset(dst, 0x5A, nd_ * el);
    memset(expect, 0x5A, nd_ * el);
    pt_copy_ref c = {block, expect, 0};
    assert_int_equal(gbp_box_walk3d(&fb, &db, el, pt_apply_piece, &c), 0);
    gbp_mem *m = pt_mem_open(p);
    TS_OK(gbp_mem_read(m, sp, fd, off, el, &fb, dst, &db));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(dst, expect, nd_ * el);
    gbp_mem_close(m);
    close(fd);
    free(block);
    free(expect);
    if (sp == GPUBP_MEM_HOST) free(dst);
    else gbp_sim_free(dst);
}

void pt_read_case(gbp_params p, size_t nd, const size_t *bdims, const size_t *fstart,
                  const size_t *count, const size_t *ddims, const size_t *dstart, size_t el,
                  uint64_t off)
{
    pt_read_into(GPUBP_MEM_GPU, p, nd, bdims, fstart, count, ddims, dstart, el, off);
}

void pt_recovers(gbp_mem *m, int fd, const uint8_t *dev, size_t n)
{
    gbp_sim_reset();
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
    TS_OK(gbp_mem_sync(m));
    uint8_t *got = pt_read_back(fd, 0, n);
    assert_memory_equal(got, dev, n);
    free(got);
}

long pt_hazards(void)
{
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    return st.hazards;
}

gbp_params pt_piece_params(int slots, size_t chunk, int threads, size_t piece)
{
    gbp_params p = pt_sim_params(slots, chunk, threads);
    p.piece_bytes = piece;
    return p;
}
