/* The staging pipeline with chunks copied in pieces, slot hazards and refused copies (pipe_pieces.h). */
#include "memspace/pipe_pieces.h"

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
#include "memspace/pipe_util.h"
#include "memspace/simdev.h"
#include "support/test_support.h"

/* ---- chunks copied in pieces ------------------------------------------------------------------ */

void transfers_in_pieces(void **state)
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
            pt_write_case(pt_piece_params(4, 16384, 3, pieces[k]), 1, d, s, c, GPUBP_TYPE_DOUBLE, 17);
        }
    size_t d2[] = {70, 90}, s2[] = {0, 0}, c2[] = {70, 90}, g2[] = {3, 5}, h2[] = {60, 80};
    pt_write_case(pt_piece_params(3, 8192, 2, 1024), 2, d2, s2, c2, GPUBP_TYPE_FLOAT, 0);
    pt_write_case(pt_piece_params(3, 8192, 2, 1024), 2, d2, g2, h2, GPUBP_TYPE_FLOAT, 0);
    /* reads: contiguous chunks read and copied in pieces, a sub-box in one go */
    size_t r1[] = {30011}, z1[] = {0};
    pt_read_case(pt_piece_params(4, 16384, 3, 4096), 1, r1, z1, r1, r1, z1, 8, 99);
    pt_read_case(pt_piece_params(3, 10000, 2, 3000), 1, r1, z1, r1, r1, z1, 4, 0);
    size_t b2[] = {64, 128}, f2[] = {0, 32}, q2[] = {64, 64}, o2[] = {0, 0};
    pt_read_case(pt_piece_params(4, 8192, 2, 1024), 2, b2, f2, q2, q2, o2, 8, 4096);
    assert_int_equal(pt_hazards(), 0);
    gbp_sim_reset();
}

/* A written file checked: its read-back bytes, descriptor and device source go. */
static void done_file(int fd, uint8_t *dev, uint8_t *got)
{
    free(got);
    close(fd);
    gbp_sim_free(dev);
}

/* The end of a case: no slot hazard, the context closed, the hooks reset. */
static void done_mem(gbp_mem *m)
{
    assert_int_equal(pt_hazards(), 0);
    gbp_mem_close(m);
    gbp_sim_reset();
}

/* One slot per I/O thread and one file per thread (the default pool with subfiles=auto): a
 * chunk copied in pieces hands its slot on to its file's next chunk, whose first piece is copied
 * into the slot while the chunk's last piece is written. Several files, chunks of 2 to 4 pieces
 * with partial last pieces, a strided block in between (copied in one go: not shared), a slow
 * device: every file byte for byte, and no slot byte reused while a copy still touched it. */
void writes_share_slots(void **state)
{
    (void)state;
    gbp_sim_reset();
    gbp_sim_set_delay_us(60);
    /* n: 12 chunks of 4 pieces, so that the strided box's first chunk, a whole slot, follows
     * the last of them (and overlaps its last piece were it handed the slot) */
    const size_t n = 12 * 16384, piece = 4096;
    gbp_params p = pt_piece_params(3, 16384, 3, piece);
    gbp_mem *m = pt_mem_open(p);
    uint8_t *dev[3];
    int fd[3];
    gbp_box whole;
    gbp_box_dense(&whole, 1, &n);
    size_t dims[2] = {400, 500}, st[2] = {10, 7}, ct[2] = {300, 480};
    gbp_box strided;
    pt_make_box(&strided, 2, dims, st, ct);
    for (int round = 0; round < 2; round++) {
        for (int f = 0; f < 3; f++) {
            dev[f] = gbp_sim_alloc(n);
            assert_non_null(dev[f]);
            pt_fill_pattern(dev[f], n, 40u + (unsigned)f + 3u * (unsigned)round);
            char name[32];
            snprintf(name, sizeof name, "share%d.dat", f);
            fd[f] = pt_open_tmp(name);
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
            uint8_t *got = pt_read_back(fd[f], 0, 2 * n + 300 * 480);
            assert_memory_equal(got, dev[f], n);
            for (size_t r = 0; r < 300; r++)
                assert_memory_equal(got + n + r * 480, dev[f] + (10 + r) * 500 + 7, 480);
            assert_memory_equal(got + n + 300 * 480, dev[f], n);
            done_file(fd[f], dev[f], got);
        }
    }
    done_mem(m);
}

/* The distinct threads that queued device copies reach `want` (10 s at most); their count. */
static int copy_threads_reach(int want)
{
    gbp_sim_stats st;
    for (int i = 0; i < 10000; i++) {
        gbp_sim_get_stats(&st);
        if (st.copy_threads >= want) break;
        usleep(1000);
    }
    return st.copy_threads;
}

/* The start of a step, the writer's file count set while it queues (gbp_mem_set_files): 4 files, 4
 * threads, 4 slots of whole chunks (no piece hands a slot on). File 0's two chunks are queued
 * first and a thread takes the first; the other files' chunks come after, as a step's later
 * sub-blocks do. The device is held: no copy lands, no slot comes free. The first thread must
 * not take a second slot for file 0's next chunk, or the last file finds none: every file's
 * first chunk is copied, each by a thread of its own. Released, the files hold their bytes. */
void files_wait_for_slots(void **state)
{
    (void)state;
    gbp_sim_reset();
    const size_t chunk = 16384;
    gbp_mem *m = pt_mem_open(pt_piece_params(4, chunk, 4, chunk));
    gbp_mem_set_files(m, 4);
    uint8_t *dev[4];
    int fd[4];
    gbp_box box[4];
    for (int f = 0; f < 4; f++) {
        dev[f] = pt_dev_pattern(f ? chunk : 2 * chunk, 70u + (unsigned)f, &box[f]);
        char name[32];
        snprintf(name, sizeof name, "wait%d.dat", f);
        fd[f] = pt_open_tmp(name);
    }
    gbp_sim_hold(1);
    TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd[0], 0, dev[0], GPUBP_TYPE_UINT8, &box[0], NULL, NULL));
    assert_int_equal(copy_threads_reach(1), 1); /* file 0's first chunk taken */
    for (int f = 1; f < 4; f++)
        TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd[f], 0, dev[f], GPUBP_TYPE_UINT8, &box[f], NULL,
                            NULL));
    int threads = copy_threads_reach(4);
    gbp_sim_hold(0);
    TS_OK(gbp_mem_sync(m));
    assert_int_equal(threads, 4);
    for (int f = 0; f < 4; f++) {
        size_t n = f ? chunk : 2 * chunk;
        uint8_t *got = pt_read_back(fd[f], 0, n);
        assert_memory_equal(got, dev[f], n);
        done_file(fd[f], dev[f], got);
    }
    done_mem(m);
}

/* Reads that reuse a slot while the device copies out of it still run (two slots, a slow
 * device), switching between chunks read in pieces, strided chunks read in one go, and pieces of
 * fewer pieces than the read before: no byte of a slot is overwritten before its copy ran. */
void reads_reuse_slots_in_pieces(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(150);
    gbp_params p = pt_piece_params(2, 16384, 2, 4096);
    gbp_mem *m = pt_mem_open(p);
    const size_t rows = 64, cols = 1024, n = rows * cols; /* float, 256 KiB in the file */
    float *file = malloc(n * sizeof *file);
    assert_non_null(file);
    for (size_t i = 0; i < n; i++) file[i] = (float)i * 0.25f + 1.0f;
    int fd = pt_open_tmp("reuse.dat");
    assert_int_equal(gbp_pwrite_all(fd, file, n * sizeof *file, 0, "t"), GPUBP_OK);
    /* A: everything, contiguous (16 chunks of 4 pieces); B: columns 100..899 of rows 3..60
     * (strided, in one go); C: rows 10..21 whole (3 chunks, the last of 2 pieces) */
    size_t dims[2] = {rows, cols}, z[2] = {0, 0}, all[2] = {rows, cols};
    size_t bs[2] = {3, 100}, bc[2] = {58, 800}, cs[2] = {10, 0}, cc[2] = {12, cols};
    gbp_box fa, fb, fc, da, db, dc;
    pt_make_box(&fa, 2, dims, z, all);
    pt_make_box(&fb, 2, dims, bs, bc);
    pt_make_box(&fc, 2, dims, cs, cc);
    pt_make_box(&da, 2, all, z, all);
    pt_make_box(&db, 2, bc, z, bc);
    pt_make_box(&dc, 2, cc, z, cc);
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
    assert_int_equal(pt_hazards(), 0);
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
    uint8_t *got = pt_read_back(fd, 0, n);
    for (size_t o = 0; o < n; o += piece) {
        size_t k = n - o < piece ? n - o : piece, marker = 0;
        while (marker < k && got[o + marker] == 0xEE) marker++;
        if (marker != k) assert_memory_equal(got + o, src + o, k);
    }
    free(got);
}

void failure_in_pieces(void **state)
{
    (void)state;
    const size_t n = 256 * 1024, piece = 4096;
    gbp_params p = pt_piece_params(4, 32768, 3, piece);
    gbp_mem *m = pt_mem_open(p);
    uint8_t *dev = gbp_sim_alloc(n), *marker = malloc(n);
    assert_non_null(dev);
    assert_non_null(marker);
    pt_fill_pattern(dev, n, 21);
    memset(marker, 0xEE, n);
    int fd = pt_open_tmp("pieces.dat");
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
    pt_recovers(m, fd, dev, n);
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
void hazard_check(void **state)
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
    assert_int_equal(pt_hazards(), 3);
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
    assert_int_equal(pt_hazards(), 0);
}

void refused_copies_and_events(void **state)
{
    (void)state;
    const size_t n = 128 * 1024, piece = 4096, rows = 256, cols = 512;
    gbp_params p = pt_piece_params(3, 16384, 2, piece);
    gbp_mem *m = pt_mem_open(p);
    uint8_t *dev = gbp_sim_alloc(n), *back = gbp_sim_alloc(n), *marker = malloc(n);
    assert_true(dev && back && marker);
    pt_fill_pattern(dev, n, 77);
    memset(marker, 0xEE, n);
    int fd = pt_open_tmp("refused.dat");
    gbp_box whole, fb, db;
    gbp_box_dense(&whole, 1, &n);
    size_t dims[2] = {rows, cols}, st[2] = {5, 64}, cnt[2] = {200, 384}, z[2] = {0, 0};
    pt_make_box(&fb, 2, dims, st, cnt);
    pt_make_box(&db, 2, cnt, z, cnt);
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
    pt_recovers(m, fd, dev, n);
    memset(back, 0, n);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &whole, back, &whole));
    TS_OK(gbp_mem_sync(m));
    assert_memory_equal(back, dev, n);
    TS_OK(gbp_mem_read(m, GPUBP_MEM_GPU, fd, 0, 1, &fb, back, &db));
    TS_OK(gbp_mem_sync(m));
    for (size_t r = 0; r < cnt[0]; r++)
        assert_memory_equal(back + r * cnt[1], dev + (st[0] + r) * cols + st[1], cnt[1]);
    assert_int_equal(pt_hazards(), 0);
    gbp_mem_close(m);
    close(fd);
    free(marker);
    gbp_sim_free(dev);
    gbp_sim_free(back);
    gbp_sim_reset();
}
