/* split_mib: a large global-array put is cut into sub-blocks over the subfiles. Round trips with
 * splitting on and off, block-id reads and block queries that see the put (block_view=put, the
 * default) or every stored sub-block (block_view=stored, as ADIOS2 numbers them), box reads across
 * sub-blocks, per-sub-block min/max, local arrays and compressed variables left whole, append. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/api_util.h"

/* value of element (r, c) of the put made at step s */
static double val(size_t s, size_t r, size_t c) { return (double)s * 1e7 + (double)r * 1000.0 + (double)c; }

#define COLS 1000
/* 2700 rows x 1000 doubles: 21.6 MB, above the 16 MiB default of split_mib */
#define ROWS 2700

static double *make_rows(size_t s, size_t r0, size_t rows)
{
    double *a = malloc(rows * COLS * sizeof *a);
    assert_non_null(a);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < COLS; c++) a[r * COLS + c] = val(s, r0 + r, c);
    return a;
}

static gpubp_file *open_read(const char *path, const char *params)
{
    return ts_open(path, GPUBP_MODE_READ_RANDOM_ACCESS, params);
}

/* reads box [r0, r0+nr) x [c0, c0+nc) of step s of T and checks every value */
static void check_box(gpubp_variable *v, gpubp_file *r, size_t s, size_t r0, size_t nr, size_t c0,
                      size_t nc)
{
    const size_t start[2] = {r0, c0}, count[2] = {nr, nc};
    double *buf = malloc(nr * nc * sizeof *buf);
    assert_non_null(buf);
    TS_OK(gpubp_set_step_selection(v, s, 1));
    TS_OK(gpubp_set_selection(v, 2, start, count));
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++)
            if (buf[i * nc + j] != val(s, r0 + i, c0 + j)) {
                print_error("step %zu (%zu, %zu): %g\n", s, r0 + i, c0 + j, buf[i * nc + j]);
                fail();
            }
    free(buf);
}

/* the put of rows [r0, r0+nr) at step s is block `b` of the put view: its info and its block read */
static void check_put_block(gpubp_variable *v, gpubp_file *r, size_t s, size_t b, size_t r0,
                            size_t nr)
{
    size_t start[2], count[2];
    double mn, mx;
    TS_OK(gpubp_variable_block_info(v, s, b, start, count, &mn, &mx));
    assert_int_equal(start[0], r0);
    assert_int_equal(count[0], nr);
    assert_int_equal(start[1], 0);
    assert_int_equal(count[1], COLS);
    assert_true(mn == val(s, r0, 0));
    assert_true(mx == val(s, r0 + nr - 1, COLS - 1));
    double *buf = malloc(nr * COLS * sizeof *buf);
    assert_non_null(buf);
    size_t bytes = 0;
    TS_OK(gpubp_set_step_selection(v, s, 1));
    TS_OK(gpubp_set_block_selection(v, b));
    TS_OK(gpubp_selection_size(v, &bytes));
    assert_int_equal(bytes, nr * COLS * sizeof *buf);
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
    for (size_t i = 0; i < nr * COLS; i++)
        if (buf[i] != val(s, r0 + i / COLS, i % COLS)) {
            print_error("block %zu element %zu: %g\n", b, i, buf[i]);
            fail();
        }
    TS_OK(gpubp_variable_minmax(v, &mn, &mx));
    assert_true(mn == val(s, r0, 0));
    assert_true(mx == val(s, r0 + nr - 1, COLS - 1));
    free(buf);
}

/* every stored block of step s: contiguous rows in order from r0, nsub of them, each with the
 * min/max of its own rows; returns the rows they cover */
static size_t check_stored(gpubp_variable *v, size_t s, size_t first, size_t nsub, size_t r0)
{
    size_t rows = 0;
    for (size_t b = first; b < first + nsub; b++) {
        size_t start[2], count[2];
        double mn, mx;
        TS_OK(gpubp_variable_block_info(v, s, b, start, count, &mn, &mx));
        assert_int_equal(start[0], r0 + rows);
        assert_int_equal(count[1], COLS);
        assert_true(count[0] > 0);
        assert_true(mn == val(s, start[0], 0));
        assert_true(mx == val(s, start[0] + count[0] - 1, COLS - 1));
        rows += count[0];
    }
    return rows;
}

static size_t nblocks(gpubp_variable *v, size_t s)
{
    size_t n = 0;
    TS_OK(gpubp_variable_blocks(v, s, &n));
    return n;
}

/* one put of the whole array per step, 2 steps, with the writer's params */
static void write_whole(const char *path, const char *params, gpubp_mode mode, size_t s0)
{
    const size_t shape[2] = {ROWS, COLS};
    gpubp_file *w = ts_open(path, mode, params);
    gpubp_variable *v = ts_define(w, "T", GPUBP_TYPE_DOUBLE, 2, shape, NULL);
    for (size_t s = s0; s < s0 + 2; s++) {
        double *a = make_rows(s, 0, ROWS);
        ts_put_step(w, v, a, s % 2 ? GPUBP_DEFERRED : GPUBP_SYNC);
        free(a);
    }
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
}

static void test_split_round_trip(void **state)
{
    (void)state;
    const char *path = ts_path("split.bp");
    write_whole(path, "io_threads=4", GPUBP_MODE_WRITE, 0);
    for (int k = 0; k < 4; k++) {
        char sub[64];
        snprintf(sub, sizeof sub, "data.%d", k);
        assert_true(ts_exists(ts_join(path, sub))); /* 21.6 MB over 4 subfiles: 5.4 MB each */
    }
    /* the put view (default): one block per step, as put */
    gpubp_file *r = open_read(path, NULL);
    gpubp_variable *v = au_inq(r, "T");
    for (size_t s = 0; s < 2; s++) {
        assert_int_equal(nblocks(v, s), 1);
        check_put_block(v, r, s, 0, 0, ROWS);
        TS_ERR(gpubp_variable_block_info(v, s, 1, NULL, NULL, NULL, NULL),
               GPUBP_ERR_INVALID_SELECTION);
    }
    /* boxes across sub-block boundaries (675 rows each) */
    check_box(v, r, 0, 600, 900, 3, 500);
    check_box(v, r, 1, 0, ROWS, 0, COLS);
    check_box(v, r, 1, 674, 2, 999, 1);
    TS_OK(gpubp_close(r));
    /* the stored view: 4 sub-blocks, each with its own rows' min/max */
    r = open_read(path, "block_view=stored");
    v = au_inq(r, "T");
    for (size_t s = 0; s < 2; s++) {
        assert_int_equal(nblocks(v, s), 4);
        assert_int_equal(check_stored(v, s, 0, 4, 0), ROWS);
    }
    check_box(v, r, 0, 1000, 1000, 0, COLS);
    TS_OK(gpubp_close(r));
}

static void test_split_off(void **state)
{
    (void)state;
    const char *path = ts_path("nosplit.bp");
    write_whole(path, "io_threads=4,split_mib=0", GPUBP_MODE_WRITE, 0);
    assert_false(ts_exists(ts_join(path, "data.1"))); /* one block, least-filled subfile data.0 */
    gpubp_file *r = open_read(path, "block_view=stored");
    gpubp_variable *v = au_inq(r, "T");
    assert_int_equal(nblocks(v, 0), 1);
    check_put_block(v, r, 0, 0, 0, ROWS);
    TS_OK(gpubp_close(r));
    /* a threshold above the block: whole; subfiles=1: nothing to spread over */
    write_whole(path, "io_threads=4,split_mib=32", GPUBP_MODE_WRITE, 0);
    write_whole(ts_path("nosplit1.bp"), "subfiles=1", GPUBP_MODE_WRITE, 0);
    const char *paths[2] = {path, ts_path("nosplit1.bp")};
    for (int i = 0; i < 2; i++) {
        r = open_read(paths[i], "block_view=stored");
        v = au_inq(r, "T");
        assert_int_equal(nblocks(v, 1), 1);
        TS_OK(gpubp_close(r));
    }
    gpubp_file *f = NULL;
    TS_ERR(gpubp_open(&f, path, GPUBP_MODE_WRITE, "split_mib=-1"), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "split_mib"));
    TS_ERR(gpubp_open(&f, path, GPUBP_MODE_READ, "block_view=all"), GPUBP_ERR_PARAM);
    assert_non_null(strstr(gpubp_last_error(), "block_view"));
}

/* puts of several sizes in one step: block ids count puts, whatever was split */
static void test_split_mixed_puts(void **state)
{
    (void)state;
    const char *path = ts_path("mixed.bp");
    const size_t shape[2] = {2 * ROWS + 10, COLS};
    /* rows of the three puts: a large one, 10 rows, a large one */
    const size_t r0[3] = {0, ROWS, ROWS + 10}, nr[3] = {ROWS, 10, ROWS};
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, "io_threads=3");
    gpubp_variable *v = ts_define(w, "T", GPUBP_TYPE_DOUBLE, 2, shape, NULL);
    gpubp_variable *loc = NULL;
    const size_t lcount[2] = {ROWS, COLS};
    TS_OK(gpubp_define_variable(&loc, w, "L", GPUBP_TYPE_DOUBLE, 2, NULL, NULL, lcount));
    gpubp_variable *z = ts_define(w, "Z", GPUBP_TYPE_DOUBLE, 2, lcount, NULL);
    TS_OK(gpubp_variable_add_operation(z, "zlib", "level=1"));
    TS_OK(gpubp_begin_step(w));
    double *bufs[3];
    for (int i = 0; i < 3; i++) {
        const size_t st[2] = {r0[i], 0}, ct[2] = {nr[i], COLS};
        bufs[i] = make_rows(0, r0[i], nr[i]);
        TS_OK(gpubp_set_selection(v, 2, st, ct));
        TS_OK(gpubp_put(w, v, bufs[i], GPUBP_DEFERRED));
    }
    TS_OK(gpubp_put(w, loc, bufs[0], GPUBP_DEFERRED));
    TS_OK(gpubp_put(w, z, bufs[0], GPUBP_DEFERRED));
    TS_OK(gpubp_end_step(w));
    for (int i = 0; i < 3; i++) free(bufs[i]);
    TS_OK(gpubp_close(w));
    AU_CHECK(path);

    gpubp_file *r = open_read(path, NULL);
    v = au_inq(r, "T");
    assert_int_equal(nblocks(v, 0), 3);
    for (size_t b = 0; b < 3; b++) check_put_block(v, r, 0, b, r0[b], nr[b]);
    check_box(v, r, 0, ROWS - 5, 20, 0, COLS); /* the small put between two split ones */
    /* local arrays and compressed variables keep their one block */
    assert_int_equal(nblocks(au_inq(r, "L"), 0), 1);
    assert_int_equal(nblocks(au_inq(r, "Z"), 0), 1);
    check_box(au_inq(r, "Z"), r, 0, 100, 2000, 10, 20);
    TS_OK(gpubp_close(r));

    r = open_read(path, "block_view=stored");
    v = au_inq(r, "T");
    assert_int_equal(nblocks(v, 0), 3 + 1 + 3);
    assert_int_equal(check_stored(v, 0, 0, 3, 0), ROWS);
    assert_int_equal(check_stored(v, 0, 3, 1, ROWS), 10);
    assert_int_equal(check_stored(v, 0, 4, 3, ROWS + 10), ROWS);
    assert_int_equal(nblocks(au_inq(r, "L"), 0), 1);
    assert_int_equal(nblocks(au_inq(r, "Z"), 0), 1);
    TS_OK(gpubp_close(r));
}

/* One step of T put as `nput` equal row ranges (DEFERRED: performed together at end_step),
 * 4 subfiles; returns the blocks stored in step 0 and checks every value through the put view. */
static size_t write_parts(const char *path, const char *params, size_t nput)
{
    const size_t shape[2] = {ROWS, COLS};
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, params);
    gpubp_variable *v = ts_define(w, "T", GPUBP_TYPE_DOUBLE, 2, shape, NULL);
    double *a = make_rows(0, 0, ROWS);
    TS_OK(gpubp_begin_step(w));
    for (size_t i = 0; i < nput; i++) {
        const size_t st[2] = {ROWS * i / nput, 0}, ct[2] = {ROWS * (i + 1) / nput - st[0], COLS};
        TS_OK(gpubp_set_selection(v, 2, st, ct));
        TS_OK(gpubp_put(w, v, a + st[0] * COLS, GPUBP_DEFERRED));
    }
    TS_OK(gpubp_end_step(w));
    TS_OK(gpubp_close(w));
    free(a);
    AU_CHECK(path);
    gpubp_file *r = open_read(path, NULL);
    v = au_inq(r, "T");
    assert_int_equal(nblocks(v, 0), nput);
    for (size_t i = 0; i < nput; i++)
        check_put_block(v, r, 0, i, ROWS * i / nput, ROWS * (i + 1) / nput - ROWS * i / nput);
    TS_OK(gpubp_close(r));
    r = open_read(path, "block_view=stored");
    size_t n = nblocks(au_inq(r, "T"), 0);
    assert_int_equal(check_stored(au_inq(r, "T"), 0, 0, n, 0), ROWS);
    TS_OK(gpubp_close(r));
    return n;
}

/* the four subfiles of path hold the same bytes to within one sub-block's (`slack`) */
static void check_even(const char *path, long slack)
{
    long lo = -1, hi = -1;
    for (int k = 0; k < 4; k++) {
        char sub[64];
        snprintf(sub, sizeof sub, "data.%d", k);
        long n = ts_file_size(ts_join(path, sub));
        assert_true(n > 0);
        if (lo < 0 || n < lo) lo = n;
        if (n > hi) hi = n;
    }
    assert_true(hi - lo <= slack);
}

/* The puts of a step are split together (split_target): as many sub-blocks as fill the subfiles
 * evenly, none when the puts already do. 4 subfiles: 2 puts of 10.8 MB become 2 x 2 sub-blocks;
 * 4 puts of 5.4 MB stay whole (one per subfile); 3 puts of 7.2 MB become 3 x 4 (3 per subfile,
 * split_mib=2: sub-blocks of 1 MiB at least); the
 * default threshold (auto: one 16 MiB chunk) leaves 2 puts of 10.8 MB whole. */
static void test_split_balance(void **state)
{
    (void)state;
    const char *path = ts_path("balance.bp");
    assert_int_equal(write_parts(path, "io_threads=4,split_mib=8", 2), 4);
    check_even(path, 0);
    assert_int_equal(write_parts(path, "io_threads=4,split_mib=4", 4), 4);
    check_even(path, 0);
    assert_int_equal(write_parts(path, "io_threads=4,split_mib=2", 3), 12);
    check_even(path, 2 * COLS * sizeof(double)); /* 225 rows a sub-block, to a row */
    assert_int_equal(write_parts(path, "io_threads=4,split_mib=auto", 2), 2);
    assert_int_equal(write_parts(path, "io_threads=4", 1), 4);
}

/* append: split steps added to a dataset, earlier steps unchanged */
static void test_split_append(void **state)
{
    (void)state;
    const char *path = ts_path("append.bp");
    write_whole(path, "io_threads=2,split_mib=0", GPUBP_MODE_WRITE, 0);
    write_whole(path, "io_threads=2", GPUBP_MODE_APPEND, 2);
    gpubp_file *r = open_read(path, NULL);
    gpubp_variable *v = au_inq(r, "T");
    size_t n = 0;
    TS_OK(gpubp_variable_steps(v, &n));
    assert_int_equal(n, 4);
    for (size_t s = 0; s < 4; s++) {
        assert_int_equal(nblocks(v, s), 1);
        check_put_block(v, r, s, 0, 0, ROWS);
    }
    TS_OK(gpubp_close(r));
    r = open_read(path, "block_view=stored");
    v = au_inq(r, "T");
    assert_int_equal(nblocks(v, 1), 1);
    assert_int_equal(nblocks(v, 2), 2);
    assert_int_equal(check_stored(v, 3, 0, 2, 0), ROWS);
    TS_OK(gpubp_close(r));
}

/* tests/golden/split/split.bp (libgpubp-written, listed by ADIOS2's bpls beside it): T was put
 * whole each step and stored as 2 sub-blocks; U as 2 blocks of its own */
static void test_split_golden(void **state)
{
    (void)state;
    const char *path = ts_join(ts_golden_dir(), "split/split.bp");
    const char *views[2] = {NULL, "block_view=stored"};
    for (int view = 0; view < 2; view++) {
        gpubp_file *r = open_read(path, views[view]);
        gpubp_variable *t = au_inq(r, "T"), *u = au_inq(r, "U");
        for (size_t s = 0; s < 2; s++) {
            assert_int_equal(nblocks(t, s), view ? 2 : 1);
            assert_int_equal(nblocks(u, s), 2);
            size_t start[2], count[2];
            float mn, mx;
            TS_OK(gpubp_variable_block_info(t, s, 0, start, count, &mn, &mx));
            assert_int_equal(start[0], 0);
            assert_int_equal(count[0], view ? 256 : 512);
            assert_true(mn == (float)(s * 1000));
            assert_true(mx == (float)(s * 1000 + (view ? 255 : 511)) + 511.0f / 1000.0f);
            /* block 0 read by id: the put (512 rows) or the first sub-block (256) */
            size_t rows = view ? 256 : 512;
            float *buf = malloc(rows * 512 * sizeof *buf);
            assert_non_null(buf);
            TS_OK(gpubp_set_step_selection(t, s, 1));
            TS_OK(gpubp_set_block_selection(t, 0));
            TS_OK(gpubp_get(r, t, buf, GPUBP_SYNC));
            for (size_t i = 0; i < rows * 512; i++)
                assert_true(buf[i] == (float)(s * 1000 + i / 512) + (float)(i % 512) / 1000.0f);
            free(buf);
        }
        TS_OK(gpubp_close(r));
    }
}

/* Replaces the `which`-th (0-based) occurrence of the 10-byte marker of sub-block j of n in md.0
 * (characteristic 9 with bit 2, then 10 with j << 16 | n) by the marker of j2 of n2. */
static void patch_marker(const char *md0, int which, unsigned j, unsigned n, unsigned j2,
                         unsigned n2)
{
    size_t len = 0;
    unsigned char *b = ts_read_file(md0, &len);
    assert_non_null(b);
    const unsigned char want[10] = {9, 4, 0, 0, 0, 10, n & 255, n >> 8, j & 255, j >> 8};
    int seen = 0, done = 0;
    for (size_t i = 0; i + 10 <= len && !done; i++)
        if (!memcmp(b + i, want, 10) && seen++ == which) {
            b[i + 6] = (unsigned char)(n2 & 255);
            b[i + 7] = (unsigned char)(n2 >> 8);
            b[i + 8] = (unsigned char)(j2 & 255);
            b[i + 9] = (unsigned char)(j2 >> 8);
            done = 1;
        }
    assert_true(done);
    assert_int_equal(ts_write_file(md0, b, len), 0);
    free(b);
}

/* markers that do not make a run 0 … n-1 leave the stored blocks as they are: listed one by
 * one, read right */
static void test_split_bad_markers(void **state)
{
    (void)state;
    const char *path = ts_path("bad_markers.bp");
    assert_int_equal(ts_copy_dataset(ts_join(ts_golden_dir(), "split/split.bp"), path), 0);
    const char *md0 = ts_join(path, "md.0");
    patch_marker(md0, 0, 1, 2, 1, 3); /* step 0: sub-block 1 claims to be 1 of 3 */
    patch_marker(md0, 1, 0, 2, 0, 5); /* step 1: sub-block 0 claims 5 sub-blocks, 2 follow */
    gpubp_file *r = open_read(path, NULL);
    gpubp_variable *t = au_inq(r, "T");
    for (size_t s = 0; s < 2; s++) {
        assert_int_equal(nblocks(t, s), 2);
        size_t start[2], count[2];
        TS_OK(gpubp_variable_block_info(t, s, 1, start, count, NULL, NULL));
        assert_int_equal(start[0], 256);
        assert_int_equal(count[0], 256);
        float v[2];
        const size_t bs[2] = {255, 511}, bc[2] = {2, 1};
        TS_OK(gpubp_set_step_selection(t, s, 1));
        TS_OK(gpubp_set_selection(t, 2, bs, bc));
        TS_OK(gpubp_get(r, t, v, GPUBP_SYNC));
        assert_true(v[0] == (float)(s * 1000 + 255) + 0.511f);
        assert_true(v[1] == (float)(s * 1000 + 256) + 0.511f);
    }
    TS_OK(gpubp_close(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_round_trip),
        cmocka_unit_test(test_split_off),
        cmocka_unit_test(test_split_mixed_puts),
        cmocka_unit_test(test_split_balance),
        cmocka_unit_test(test_split_append),
        cmocka_unit_test(test_split_golden),
        cmocka_unit_test(test_split_bad_markers),
    };
    return cmocka_run_group_tests_name("split_mib", tests, NULL, NULL);
}
