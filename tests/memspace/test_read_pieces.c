/* Reads of one block per step into (simulated) device memory: the I/O threads pread the block's
 * chunks in parallel, each chunk piece by piece into a pinned slot, and queue each piece's
 * host-to-device copy as soon as it is read, while they read on. Against the simulated device with
 * slow copies the counters show it: copies come from several threads, a thread queues a piece's
 * copy while its earlier copy is still in flight, no slot byte is reused under a copy, and every
 * value lands where it belongs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memspace/simdev.h"
#include "support/test_support.h"

#define N ((size_t)6 << 20) /* floats: 24 MiB, one block */
#define PIECE ((size_t)512 << 10)

static float value(size_t step, size_t i) { return (float)(i % 1000003) + (float)step * 0.5f; }

static void write_dataset(const char *path, const char *params)
{
    float *h = malloc(N * sizeof *h);
    assert_non_null(h);
    gpubp_file *w = ts_open(path, GPUBP_MODE_WRITE, params);
    const size_t shape[1] = {N};
    gpubp_variable *v = ts_define(w, "x", GPUBP_TYPE_FLOAT, 1, shape, NULL);
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < N; i++) h[i] = value(s, i);
        ts_put_step(w, v, h, GPUBP_SYNC);
    }
    TS_OK(gpubp_close(w));
    free(h);
}

/* reads both steps in step mode into device memory and checks the values and the counters */
static void read_and_check(const char *path, size_t stored_blocks)
{
    gpubp_file *r = NULL;
    /* 4 threads and slots of 4 MiB: every chunk (4 MiB, or the 2 MiB ends of 6 MiB sub-blocks)
     * copied in pieces of 512 KiB */
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ,
                     "device=simulated,io_threads=4,chunk_mib=4,piece_kib=512,block_view=stored"));
    float *d = gbp_sim_alloc(N * sizeof *d);
    assert_non_null(d);
    gbp_sim_reset();
    gbp_sim_set_delay_us(2000); /* a copy completes long after its piece was read */
    for (size_t s = 0; s < 2; s++) {
        TS_OK(gpubp_begin_step(r));
        gpubp_variable *v = NULL;
        TS_OK(gpubp_inquire_variable(&v, r, "x"));
        size_t nb = 0;
        TS_OK(gpubp_variable_blocks(v, 0, &nb));
        assert_int_equal(nb, stored_blocks);
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        memset(d, 0, N * sizeof *d);
        TS_OK(gpubp_get(r, v, d, GPUBP_SYNC));
        for (size_t i = 0; i < N; i++)
            if (d[i] != value(s, i)) {
                print_error("step %zu element %zu: %g, expected %g\n", s, i, d[i], value(s, i));
                fail();
            }
        TS_OK(gpubp_end_step(r));
    }
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    gbp_sim_reset();
    printf("%zu stored block(s): %ld copies from %d threads, %ld queued behind their own, "
           "%llu bytes, %ld hazards\n", stored_blocks, st.copies, st.copy_threads,
           st.copies_behind_own, st.bytes, st.hazards);
    /* the block went in pieces, not one copy per chunk */
    const long pieces = (long)(2 * N * sizeof(float) / PIECE);
    assert_int_equal(st.copies, pieces);
    assert_int_equal(st.bytes, (unsigned long long)(2 * N * sizeof(float)));
    /* several threads read the one block; each read on while its copies flew */
    assert_true(st.copy_threads >= 2);
    assert_true(st.copies_behind_own >= pieces / 2);
    assert_int_equal(st.hazards, 0);
    TS_OK(gpubp_close(r));
    gbp_sim_free(d);
}

static void test_one_block_read_pieces(void **state)
{
    (void)state;
    const char *path = ts_path("one_block.bp");
    write_dataset(path, "split_mib=0");
    read_and_check(path, 1);
}

/* the same read when the writer split the block: 4 sub-blocks, read the same way */
static void test_split_block_read_pieces(void **state)
{
    (void)state;
    const char *path = ts_path("split_block.bp");
    write_dataset(path, "io_threads=4");
    read_and_check(path, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_block_read_pieces),
        cmocka_unit_test(test_split_block_read_pieces),
    };
    return cmocka_run_group_tests_name("one block per step, read in pieces", tests, NULL, NULL);
}
