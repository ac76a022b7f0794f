/* The staging pipeline under failures, queued commits and the pinned-pool cache (pipe_fail.h). */
#include "memspace/pipe_fail.h"

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

/* ---- failures ---------------------------------------------------------------------------------- */
void failure_mid_copy(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(2, 4096, 2);
    gbp_mem *m = pt_mem_open(p);
    size_t n = 64 * 1024;
    gbp_box b;
    uint8_t *dev = pt_dev_pattern(n, 9, &b);
    int fd = pt_open_tmp("fail.dat");
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
    pt_recovers(m, fd, dev, n);
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

void commits_after_writes(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(3, 4096, 2);
    gbp_mem *m = pt_mem_open(p);
    gbp_sim_set_delay_us(200); /* copies land late: the commit must still wait for the writes */
    size_t n = 64 * 1024;
    uint8_t *dev = gbp_sim_alloc(n), *want = malloc(n);
    assert_non_null(want);
    int fd = pt_open_tmp("commit.dat");
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    TS_OK(gbp_mem_commit_wait(m)); /* none queued: OK */
    for (unsigned e = 0; e < 3; e++) {
        pt_fill_pattern(dev, n, 40 + e);
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
    pt_fill_pattern(dev, n, 50);
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
    pt_fill_pattern(dev, n, 51);
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
void handed_on_slot_keeps_pending_reads(void **state)
{
    (void)state;
    gbp_sim_reset();
    const size_t chunk = 16384, piece = 4096, n = 2 * chunk;
    gbp_params p = pt_piece_params(1, chunk, 1, piece);
    gbp_mem *m = pt_mem_open(p);
    uint8_t *file = malloc(n);
    assert_non_null(file);
    pt_fill_pattern(file, n, 77);
    int rfd = pt_open_tmp("handon-r.dat"), wfd = pt_open_tmp("handon-w.dat");
    assert_int_equal(gbp_pwrite_all(rfd, file, n, 0, "t"), GPUBP_OK);
    uint8_t *a = gbp_sim_alloc(n), *w = gbp_sim_alloc(n), *c = gbp_sim_alloc(chunk);
    assert_true(a && w && c);
    pt_fill_pattern(w, n, 78);
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
    assert_int_equal(pt_hazards(), 0);
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

void failure_mid_write_and_read(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(3, 4096, 3);
    gbp_mem *m = pt_mem_open(p);
    size_t n = 100 * 1024;
    gbp_box b;
    uint8_t *dev = pt_dev_pattern(n, 13, &b);
    int fd = pt_open_tmp("failw.dat");
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

void failure_pinned_alloc(void **state)
{
    (void)state;
    gbp_params p = pt_sim_params(4, 4096, 2);
    gbp_mem *m = pt_mem_open(p);
    size_t n = 1000;
    uint8_t *dev = gbp_sim_alloc(n);
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    int fd = pt_open_tmp("nomem.dat");
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
void pool_cache(void **state)
{
    (void)state;
    gbp_mem_pool_cache_trim();
    gbp_sim_reset();
    gbp_mem_pool_cache_sim(1);
    size_t n = 100000;
    gbp_box b;
    uint8_t *dev = pt_dev_pattern(n, 7, &b);
    int fd = pt_open_tmp("cache.dat");
    gbp_sim_stats st;
    for (int round = 0; round < 3; round++) {
        gbp_params p = pt_sim_params(4, round == 2 ? 8192 : 4096, 2);
        gbp_mem *m = pt_mem_open(p);
        TS_OK(gbp_mem_write(m, GPUBP_MEM_GPU, fd, 0, dev, GPUBP_TYPE_UINT8, &b, NULL, NULL));
        TS_OK(gbp_mem_sync(m));
        gbp_sim_get_stats(&st);
        /* round 1 reuses round 0's slots; round 2 (another size) pins 4 more */
        assert_int_equal(st.pinned_bytes, round == 2 ? 4 * 4096 + 4 * 8192 : 4 * 4096);
        gbp_mem_close(m);
        assert_int_equal(gbp_mem_pool_cache_bytes(), round == 2 ? 4 * 4096 + 4 * 8192 : 4 * 4096);
        uint8_t *back = pt_read_back(fd, 0, n);
        assert_memory_equal(back, dev, n);
        free(back);
    }
    gbp_mem_pool_cache_trim();
    assert_int_equal(gbp_mem_pool_cache_bytes(), 0);
    gbp_sim_get_stats(&st);
    assert_int_equal(st.pinned_live, 0);
    /* a limit of 0 keeps nothing */
    setenv("GPUBP_POOL_CACHE_MIB", "0", 1);
    gbp_params p = pt_sim_params(4, 4096, 2);
    gbp_mem *m = pt_mem_open(p);
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
