/* Strided boxes whose runs lie far apart (a column band of wide rows, the strided half-box of a
 * benchmark row) are read run by run, only the runs' bytes: into (simulated) device memory packed
 * in the pinned slot and copied to the device from there (in pieces when the destination is
 * contiguous), into host memory straight into place, by the I/O threads when large. Boxes whose
 * runs are close together still read whole spans. Checked here: the rule's arithmetic, every
 * value in place for 2-D and 3-D boxes into dense and ghosted destinations, the copies a sparse
 * read queues (packed pieces, not one strided copy per span), slot reuse under slow copies
 * without hazards, and reads that fail half-way (reported, and the next read works); the same
 * with read_mmap=1 (large host boxes: the runs copied out of a mapping of their span), whose
 * mappings are counted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/fileio.h"
#include "io/fmap.h"
#include "memspace/box.h"
#include "memspace/memspace.h"
#include "memspace/pipe_util.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

static void rule_arithmetic(void **state)
{
    (void)state;
    gbp_box b;
    /* every row of 1024 doubles, its first half: runs of 4 KiB, 4 KiB apart */
    size_t d2[] = {100, 1024}, s2[] = {0, 0}, c2[] = {100, 512};
    pt_make_box(&b, 2, d2, s2, c2);
    assert_int_equal(gbp_box_run_bytes(&b, NULL, 8), 4096);
    assert_int_equal(gbp_box_span(&b, 8), 99 * 8192 + 4096);
    assert_true(gbp_box_sparse_pays(gbp_box_span(&b, 8), 100 * 4096, 4096));
    /* three quarters of each row: 2 KiB apart, the span is read */
    size_t c3[] = {100, 768};
    pt_make_box(&b, 2, d2, s2, c3);
    assert_false(gbp_box_sparse_pays(gbp_box_span(&b, 8), 100 * 6144, 6144));
    /* one column: 8-byte runs 8 KiB apart */
    size_t s4[] = {0, 7}, c4[] = {100, 1};
    pt_make_box(&b, 2, d2, s4, c4);
    assert_int_equal(gbp_box_run_bytes(&b, NULL, 8), 8);
    assert_int_equal(gbp_box_span(&b, 8), 99 * 8192 + 8);
    assert_true(gbp_box_sparse_pays(gbp_box_span(&b, 8), 800, 8));
    /* whole rows: one run, nothing to skip */
    size_t s5[] = {10, 0}, c5[] = {20, 1024};
    pt_make_box(&b, 2, d2, s5, c5);
    assert_int_equal(gbp_box_run_bytes(&b, NULL, 8), 20 * 8192);
    assert_false(gbp_box_sparse_pays(gbp_box_span(&b, 8), 20 * 8192, 20 * 8192));
    /* runs contiguous in the file but not in a ghosted destination: the destination's rows */
    gbp_box g;
    size_t dg[] = {22, 1030}, sg[] = {1, 3};
    pt_make_box(&g, 2, dg, sg, c5);
    assert_int_equal(gbp_box_run_bytes(&b, &g, 8), 8192);
    /* read_mmap=1 maps a span of at most four times the wanted bytes: the half box (twice), not
     * narrow columns of wide rows */
    assert_true(gbp_fmap_worth(99 * 8192 + 4096, 100 * 4096));
    assert_true(gbp_fmap_worth(400, 100));
    assert_false(gbp_fmap_worth(401, 100));
    assert_false(gbp_fmap_worth(99 * 8192 + 8, 800));
    assert_false(gbp_fmap_worth(0, 0));
    /* an empty box */
    size_t c0[] = {0, 4};
    pt_make_box(&b, 2, d2, s2, c0);
    assert_int_equal(gbp_box_span(&b, 8), 0);
    assert_false(gbp_box_sparse_pays(0, 0, 8));
}

/* 2-D: 40 rows of 2048 doubles (16 KiB), columns 100..799 of rows 2..31: runs of 5600 bytes,
 * 10.8 KiB apart */
static size_t B2[] = {40, 2048}, F2[] = {2, 100}, C2[] = {30, 700};

static void device_values(void **state)
{
    (void)state;
    gbp_sim_reset();
    size_t z2[] = {0, 0}, g2[] = {34, 720}, o2[] = {2, 10};
    /* in one go into a dense and a ghosted buffer, slots of 64 KiB and of a whole box */
    pt_read_case(pt_sim_params(4, 65536, 2), 2, B2, F2, C2, C2, z2, 8, 4096);
    pt_read_case(pt_sim_params(2, 65536, 3), 2, B2, F2, C2, g2, o2, 8, 0);
    pt_read_case(pt_sim_params(2, (size_t)1 << 20, 1), 2, B2, F2, C2, g2, o2, 8, 17);
    /* slots smaller than a run: chunks are pieces of single runs (contiguous) */
    pt_read_case(pt_sim_params(3, 4000, 2), 2, B2, F2, C2, C2, z2, 8, 5);
    /* in pieces (dense destination), runs straddling the pieces */
    pt_read_case(pt_piece_params(4, 65536, 3, 4096), 2, B2, F2, C2, C2, z2, 8, 99);
    pt_read_case(pt_piece_params(3, 65536, 2, 3000), 2, B2, F2, C2, C2, z2, 8, 0);
    /* 3-D: slices of 10 rows of 2048 floats, a band of 300 columns: 1200-byte runs */
    size_t b3[] = {6, 10, 2048}, f3[] = {1, 2, 1000}, c3[] = {4, 7, 300}, z3[] = {0, 0, 0},
           d3[] = {5, 9, 310}, s3[] = {1, 1, 5};
    pt_read_case(pt_sim_params(3, 8192, 2), 3, b3, f3, c3, c3, z3, 4, 4);
    pt_read_case(pt_sim_params(3, 8192, 2), 3, b3, f3, c3, d3, s3, 4, 4);
    pt_read_case(pt_piece_params(3, 16384, 2, 1024), 3, b3, f3, c3, c3, z3, 4, 4);
    /* one column of 16-byte elements */
    size_t f1[] = {0, 5}, c1[] = {40, 1};
    pt_read_case(pt_sim_params(2, 4096, 2), 2, B2, f1, c1, c1, (size_t[]){0, 0}, 16, 3);
    assert_int_equal(pt_hazards(), 0);
    gbp_sim_reset();
}

static gbp_params mapped(gbp_params p)
{
    p.read_mmap = 1;
    return p;
}

/* read_mmap=1 applies to host destinations only: into the device the runs are still read one
 * pread each into the pinned slot (mapped, they were slower there: docs/parameters.md), with
 * every value in place and no mapping made. */
static void device_values_mapped(void **state)
{
    (void)state;
    gbp_sim_reset();
    size_t z2[] = {0, 0}, g2[] = {34, 720}, o2[] = {2, 10};
    size_t before = gbp_fmap_count();
    pt_read_case(mapped(pt_sim_params(4, 65536, 2)), 2, B2, F2, C2, C2, z2, 8, 4096);
    pt_read_case(mapped(pt_piece_params(3, 65536, 2, 3000)), 2, B2, F2, C2, g2, o2, 8, 0);
    assert_int_equal(gbp_fmap_count(), before);
    assert_int_equal(pt_hazards(), 0);
    gbp_sim_reset();
}

/* What a sparse read queues: the chunks are cut by packed bytes (11 runs of 5600 bytes in a 64 KiB
 * slot), each copied in pieces of 4 KiB out of its packed runs; a span read of the same box would
 * cut it by span (4 rows per slot) and copy each chunk with one strided copy. */
static void device_copies(void **state)
{
    (void)state;
    gbp_sim_reset();
    size_t z2[] = {0, 0};
    pt_read_case(pt_piece_params(4, 65536, 3, 4096), 2, B2, F2, C2, C2, z2, 8, 0);
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    long expect = 0;
    for (size_t r = 0; r < C2[0]; r += 11) {
        size_t rows = C2[0] - r < 11 ? C2[0] - r : 11;
        expect += (long)((rows * 5600 + 4095) / 4096);
    }
    assert_int_equal(st.copies, expect);
    assert_int_equal(st.bytes, (unsigned long long)(C2[0] * C2[1] * 8));
    /* into a ghosted buffer: one strided copy per chunk, the runs still packed in the slot */
    gbp_sim_reset();
    size_t g2[] = {34, 720}, o2[] = {2, 10};
    pt_read_case(pt_piece_params(4, 65536, 3, 4096), 2, B2, F2, C2, g2, o2, 8, 0);
    gbp_sim_get_stats(&st);
    assert_int_equal(st.copies, 3);
    assert_int_equal(st.hazards, 0);
    gbp_sim_reset();
}

/* A scratch file holding an array of bdims doubles of a pattern (kept in h to check against). */
typedef struct band_file {
    int fd;
    double *h;
} band_file;

static void band_rewrite(const band_file *f, const size_t *bdims)
{
    size_t n = bdims[0] * bdims[1];
    assert_int_equal(gbp_pwrite_all(f->fd, f->h, n * sizeof(double), 0, "t"), 0);
}

static band_file band_open(const char *name, const size_t *bdims, unsigned seed)
{
    size_t n = bdims[0] * bdims[1];
    band_file f = {pt_open_tmp(name), malloc(n * sizeof(double))};
    assert_non_null(f.h);
    pt_fill_doubles(f.h, n, seed);
    band_rewrite(&f, bdims);
    return f;
}

/* d holds box (fstart, count) of the file's array, dense */
static void band_check(const band_file *f, const double *d, const size_t *bdims,
                       const size_t *fstart, const size_t *count)
{
    for (size_t r = 0; r < count[0]; r++)
        assert_memory_equal(d + r * count[1], f->h + (fstart[0] + r) * bdims[1] + fstart[1],
                            count[1] * sizeof(double));
}

static void band_close(band_file *f)
{
    close(f->fd);
    free(f->h);
}

/* Two slots, many chunks, slow copies: each slot is refilled while its last copies may still
 * run, in pieces and in one go, after a read of either kind. */
static void device_slot_reuse(void **state)
{
    (void)state;
    gbp_sim_reset();
    gbp_sim_set_delay_us(200);
    size_t z2[] = {0, 0}, g2[] = {34, 720}, o2[] = {2, 10};
    gbp_params p = pt_piece_params(2, 16384, 3, 2048);
    pt_read_case(p, 2, B2, F2, C2, C2, z2, 8, 0);
    pt_read_case(p, 2, B2, F2, C2, g2, o2, 8, 0);
    /* a span read (whole rows) and a sparse read through the same context */
    gbp_mem *m = pt_mem_open(p);
    band_file f = band_open("reuse.dat", B2, 3);
    double *d = gbp_sim_alloc(B2[0] * B2[1] * sizeof *d);
    gbp_box fb, db;
    size_t s0[] = {0, 0};
    for (int k = 0; k < 3; k++) {
        pt_make_box(&fb, 2, B2, s0, B2);
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, f.fd, 0, 8, &fb, d, &fb));
        pt_make_box(&fb, 2, B2, F2, C2);
        pt_make_box(&db, 2, C2, s0, C2);
        TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, f.fd, 0, 8, &fb, d, &db));
        TS_OK(gbp_mem_sync(m));
        band_check(&f, d, B2, F2, C2);
    }
    assert_int_equal(pt_hazards(), 0);
    gbp_mem_close(m);
    band_close(&f);
    gbp_sim_free(d);
    gbp_sim_reset();
}

/* A sparse read of box (fstart, count) whose later runs lie past the end of the file (cut to
 * `cut` bytes) fails half-way: the error (from the read or the sync) names the data file;
 * rewritten whole, the same read through the same context gives every value. */
static void truncated_case(gpubp_memory_space sp, gbp_params p, const size_t *bdims,
                           const size_t *fstart, const size_t *count, off_t cut)
{
    gbp_mem *m = pt_mem_open(p);
    band_file f = band_open("trunc.dat", bdims, 9);
    assert_int_equal(ftruncate(f.fd, cut), 0);
    size_t n = count[0] * count[1] * sizeof(double);
    double *d = sp == GPUBP_MEM_GPU ? gbp_sim_alloc(n) : malloc(n);
    gbp_box fb, db;
    size_t s0[] = {0, 0};
    pt_make_box(&fb, 2, bdims, fstart, count);
    pt_make_box(&db, 2, count, s0, count);
    int rc = gbp_mem_read(m, sp, f.fd, 0, 8, &fb, d, &db);
    if (rc == GPUBP_OK) rc = gbp_mem_sync(m); /* read by the I/O threads: reported here */
    assert_int_not_equal(rc, GPUBP_OK);
    assert_non_null(strstr(gbp_error_message(), "data file"));
    band_rewrite(&f, bdims);
    TS_OK(gbp_mem_read(m, sp, f.fd, 0, 8, &fb, d, &db));
    TS_OK(gbp_mem_sync(m));
    band_check(&f, d, bdims, fstart, count);
    gbp_mem_close(m);
    band_close(&f);
    if (sp == GPUBP_MEM_GPU) gbp_sim_free(d);
    else free(d);
}

/* Into the device, in pieces under slow copies: the copies the failed read queued finish before
 * its slot is reused. */
static void device_truncated(void **state)
{
    (void)state;
    gbp_sim_reset();
    gbp_sim_set_delay_us(100);
    /* row 20 cut short */
    truncated_case(GPUBP_MEM_GPU, pt_piece_params(2, 65536, 2, 4096), B2, F2, C2,
                   (off_t)(20 * B2[1] * 8 + 3000));
    assert_int_equal(pt_hazards(), 0);
    gbp_sim_reset();
}

static void host_case(size_t nd, const size_t *bdims, const size_t *fstart, const size_t *count,
                      const size_t *ddims, const size_t *dstart, size_t el, const char *params)
{
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, params), GPUBP_OK);
    pt_read_into(GPUBP_MEM_HOST, p, nd, bdims, fstart, count, ddims, dstart, el, 100);
}

/* Host memory: small sparse boxes on the caller's thread, large ones (4 MiB and more) by the I/O
 * threads in jobs of 8 MiB of runs, dense and ghosted destinations; boxes with close runs
 * through the bounce buffer. */
static void host_values(void **state)
{
    (void)state;
    size_t z2[] = {0, 0}, g2[] = {34, 720}, o2[] = {2, 10};
    host_case(2, B2, F2, C2, C2, z2, 8, NULL);
    host_case(2, B2, F2, C2, g2, o2, 8, NULL);
    /* 600 rows of 2048 doubles, 1000 columns of 590 rows: 4.5 MiB of 8000-byte runs */
    size_t bl[] = {600, 2048}, fl[] = {5, 1000}, cl[] = {590, 1000}, dl[] = {600, 1100},
           sl[] = {5, 50};
    host_case(2, bl, fl, cl, cl, z2, 8, NULL);
    host_case(2, bl, fl, cl, dl, sl, 8, "io_threads=3");
    host_case(2, bl, fl, cl, dl, sl, 8, "io_threads=1");
    /* the same rows, three quarters of each: through the bounce buffer */
    size_t fq[] = {5, 100}, cq[] = {590, 1536}, dq[] = {600, 1600};
    host_case(2, bl, fq, cq, dq, sl, 8, NULL);
    /* 3-D, floats: 6 MiB of 1200-byte runs */
    size_t b3[] = {40, 100, 2048}, f3[] = {3, 10, 1000}, c3[] = {36, 90, 300}, z3[] = {0, 0, 0};
    host_case(3, b3, f3, c3, c3, z3, 4, NULL);
}

/* read_mmap=1 into host memory: the large sparse boxes (by the I/O threads) out of mappings,
 * the small ones and those with close runs read as before. */
static void host_values_mapped(void **state)
{
    (void)state;
    size_t z2[] = {0, 0};
    size_t bl[] = {600, 2048}, fl[] = {5, 1000}, cl[] = {590, 1000}, dl[] = {600, 1100},
           sl[] = {5, 50};
    size_t before = gbp_fmap_count();
    host_case(2, B2, F2, C2, C2, z2, 8, "read_mmap=1"); /* small: the caller's preads */
    assert_int_equal(gbp_fmap_count(), before);
    host_case(2, bl, fl, cl, cl, z2, 8, "read_mmap=1");
    host_case(2, bl, fl, cl, dl, sl, 8, "read_mmap=1,io_threads=3");
    assert_true(gbp_fmap_count() > before);
    size_t b3[] = {40, 100, 2048}, f3[] = {3, 10, 1000}, c3[] = {36, 90, 300}, z3[] = {0, 0, 0};
    host_case(3, b3, f3, c3, c3, z3, 4, "read_mmap=1");
}

/* read_mmap=1 and a file cut short: the chunks past the end are not mapped, their preads report
 * the truncation (no SIGBUS), and the read after the rewrite gives every value. */
static void mapped_truncated(void **state)
{
    (void)state;
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, "io_threads=2,read_mmap=1"), GPUBP_OK);
    size_t bl[] = {600, 2048}, fl[] = {5, 1000}, cl[] = {590, 1000};
    size_t before = gbp_fmap_count();
    truncated_case(GPUBP_MEM_HOST, p, bl, fl, cl, (off_t)(400 * bl[1] * 8));
    assert_true(gbp_fmap_count() > before);
}

/* A large sparse host read (by the I/O threads) whose file is cut short. */
static void host_truncated(void **state)
{
    (void)state;
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, "io_threads=2"), GPUBP_OK);
    size_t bl[] = {600, 2048}, fl[] = {5, 1000}, cl[] = {590, 1000};
    truncated_case(GPUBP_MEM_HOST, p, bl, fl, cl, (off_t)(400 * bl[1] * 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rule_arithmetic),
        cmocka_unit_test(device_values),
        cmocka_unit_test(device_copies),
        cmocka_unit_test(device_slot_reuse),
        cmocka_unit_test(device_truncated),
        cmocka_unit_test(host_values),
        cmocka_unit_test(host_truncated),
        cmocka_unit_test(device_values_mapped),
        cmocka_unit_test(host_values_mapped),
        cmocka_unit_test(mapped_truncated),
    };
    return cmocka_run_group_tests_name("strided reads, run by run", tests, NULL, NULL);
}
