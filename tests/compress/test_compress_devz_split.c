/* The GPU compression path on the simulated device, split puts (test_compress_devz.c has the
 * rest): compressed puts from device memory cut into sub-blocks over the subfiles, coded in
 * batches of several sub-blocks, some on the CPU while the device codes the others
 * (GPUBP_ZDEV_CPU_SUBBLOCKS), or tapered (GPUBP_ZDEV_TAPER): every data file and md.0 equal the
 * CPU path's byte for byte and the values read back; writes and reads ahead failing half-way fail
 * the step or the get clearly and leave nothing pending. */
#include "support/devz_support.h"

#include <stdatomic.h>

#include "engine/zdev.h"
#include "engine/zdev_read.h"
#include "io/fileio.h"

/* A write failing in the middle of a split put, while the next sub-block's first piece is coded
 * ahead (and, with GPUBP_ZDEV_CPU_SUBBLOCKS=1, while the CPU codes the first sub-block with the
 * device's launched ahead): the step fails with GPUBP_ERR_IO, what was coded ahead is dropped
 * (nothing reads the user's buffer after the put returns), and the next step of the file is
 * written and read back. */
static void split_failure(void **state)
{
    (void)state;
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    /* and with the first sub-block coded on the CPU while the device's are launched ahead */
    for (int group = 0; group < 4; group++) {
        if (group >= 2) setenv("GPUBP_ZDEV_CPU_SUBBLOCKS", "1", 1);
        gbp_zdev_set_piece(group % 2 ? (size_t)4 << 20 : 300000); /* 4 MiB: sub-blocks in pairs */
        const tcase *t = &types[0];
        size_t n = ((size_t)4 << 20) + 4 * 3, shape[1] = {n / 4}, start[1] = {0};
        uint8_t *host = two_steps(t, n, 11), *d = gbp_sim_alloc(n);
        const char *path = ts_path("devz_split_fail.bp");
        gpubp_file *w;
        TS_OK(gpubp_open(&w, path, GPUBP_MODE_WRITE,
                         "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4,split_mib=2,subfiles=4"));
        gpubp_variable *v;
        TS_OK(gpubp_define_variable(&v, w, "x", GPUBP_TYPE_FLOAT, 1, shape, start, shape));
        TS_OK(gpubp_set_memory_space(v, GPUBP_MEM_GPU));
        TS_OK(gpubp_variable_add_operation(v, "lz4", "shuffle=byte"));
        memcpy(d, host, n);
        for (long k = 1; k < (group % 2 ? 8 : 16); k += 2) { /* the failure at various pieces */
            gbp_sim_fail_io_after(k);
            TS_OK(gpubp_begin_step(w));
            int rc = gpubp_put(w, v, d, GPUBP_SYNC), rc2 = gpubp_end_step(w); /* the step fails */
            assert_int_equal(rc == GPUBP_OK ? rc2 : rc, GPUBP_ERR_IO);
            assert_int_not_equal(rc2, GPUBP_OK);
            gbp_sim_reset();
        }
        put_steps(w, v, d, host, n);
        TS_OK(gpubp_close(w));
        read_back(path, host, n, NULL, 0);
        read_back(path, host, n, "device=simulated,gpu_layout=row_major", 1);
        gbp_sim_free(d);
        free(host);
    }
    gbp_zdev_set_piece(0);
    unsetenv("GPUBP_ZDEV_CPU_SUBBLOCKS");
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
}

/* Opens the dataset at path for reading variable x into (simulated) device memory; *back: a
 * device buffer of n bytes (gbp_sim_free). */
static gpubp_file *open_dev(const char *path, gpubp_variable **v, uint8_t **back, size_t n)
{
    gpubp_file *r;
    TS_OK(gpubp_open(&r, path, GPUBP_MODE_READ_RANDOM_ACCESS,
                     "device=simulated,gpu_layout=row_major"));
    TS_OK(gpubp_inquire_variable(v, r, "x"));
    TS_OK(gpubp_set_memory_space(*v, GPUBP_MEM_GPU));
    *back = gbp_sim_alloc(n);
    assert_non_null(*back);
    return r;
}

/* A get of a split compressed put into device memory reads each group of sub-blocks'
 * operator buffers while the group before it decodes (groups of one sub-block, of two, and the
 * whole step: GPUBP_ZDEV_READ_GROUP_MIB 0, 3 and 128). A read that fails, in a group's own
 * read or in a read ahead (EIO at each of the get's preads in turn, or a failed upload to the
 * device), fails the get with
 * GPUBP_ERR_IO naming the dataset; nothing read ahead is left over: the next get of the same
 * reader reads the step exactly. A read of part of the array (no read ahead: the CPU decoder)
 * reads exactly. A block whose file is too short fails with its own FORMAT error. */
static void read_ahead_failure(void **state)
{
    (void)state;
    if (!have_codec("lz4")) skip();
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    const tcase *t = &types[0];
    size_t n = ((size_t)4 << 20) + 4 * 5;
    uint8_t *host = two_steps(t, n, 21);
    const char *path = ts_path("devz_ahead.bp");
    write_one(path, "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4,split_mib=2,"
              "subfiles=4", "lz4", "shuffle=byte", t, host, n);
    gpubp_variable *v;
    uint8_t *back;
    gpubp_file *r = open_dev(path, &v, &back, n);
    static const char *group_mib[] = {"0", "3", "128"};
    for (int kind = 0; kind < 6; kind++) {
        setenv("GPUBP_ZDEV_READ_GROUP_MIB", group_mib[kind / 2], 1);
        for (long k = 0; k < 4; k++) { /* 4 sub-blocks of one piece each: 4 preads a get */
            size_t a0 = gbp_zdev_read_ahead_count();
            TS_OK(gpubp_set_step_selection(v, 1, 1));
            if (kind % 2 == 0) gbp_io_fault_inject(GBP_IO_FAULT_READ_EIO, k, 0);
            else gbp_sim_fail_io_after(k);
            TS_ERR(gpubp_get(r, v, back, GPUBP_SYNC), GPUBP_ERR_IO);
            assert_non_null(strstr(gpubp_last_error(), "devz_ahead.bp"));
            if (kind % 2 == 0) assert_int_equal(gbp_io_faults_fired(), 1);
            gbp_io_fault_reset();
            gbp_sim_reset();
            /* the sub-blocks before the failed one were read ahead and used, none after */
            assert_true(gbp_zdev_read_ahead_count() - a0 <= (size_t)k);
            memset(back, 0, n);
            for (int step = 1; step >= 0; step--) {
                TS_OK(gpubp_set_step_selection(v, (size_t)step, 1));
                TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
                assert_memory_equal(back, host + (size_t)step * n, n);
            }
        }
    }
    /* a part of the array: the blocks it meets are read by the CPU decoder, none ahead */
    size_t a0 = gbp_zdev_read_ahead_count(), st[1] = {n / 16 + 3}, ct[1] = {n / 8}; /* elements */
    TS_OK(gpubp_set_selection(v, 1, st, ct));
    TS_OK(gpubp_set_step_selection(v, 0, 1));
    TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
    assert_memory_equal(back, host + st[0] * 4, ct[0] * 4);
    assert_int_equal(gbp_zdev_read_ahead_count(), a0);
    /* a short data file: in groups of one sub-block, sub-block 1 (data.1) is read ahead while
     * sub-block 0 decodes, and its own read fails with its FORMAT error (not the read ahead's
     * short read); in one group, the group's read fails with that error before reading */
    assert_int_equal(truncate(ts_join(path, "data.1"), 100), 0);
    size_t all[1] = {n / 4}, zero[1] = {0};
    TS_OK(gpubp_set_selection(v, 1, zero, all));
    for (int g = 0; g < 2; g++) {
        setenv("GPUBP_ZDEV_READ_GROUP_MIB", g == 0 ? "0" : "128", 1);
        TS_OK(gpubp_set_step_selection(v, 0, 1));
        TS_ERR(gpubp_get(r, v, back, GPUBP_SYNC), GPUBP_ERR_FORMAT);
        assert_non_null(strstr(gpubp_last_error(), "data.1"));
        assert_non_null(strstr(gpubp_last_error(), "past the end"));
    }
    unsetenv("GPUBP_ZDEV_READ_GROUP_MIB");
    TS_OK(gpubp_close(r));
    gbp_sim_free(back);
    free(host);
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
}

/* Groups of sub-blocks the device does not decode (GPUBP_ZDEV_READ_GROUP_MIB=128): blosclz
 * sub-blocks (written by the CPU path: no device codec) read exactly, block by block through the
 * CPU decoder, from the buffers the group's read left in host memory — no block decoded on the
 * device, no group counted. A group with a damaged sub-block (the second half of data.1, step
 * 1's sub-block, overwritten with 0x7F bytes: stream sizes and block starts past their chunk)
 * falls back likewise and fails with that block's FORMAT error, naming data.1; step 0, whose
 * sub-blocks are whole, still reads exactly. */
static void group_fallback(void **state)
{
    (void)state;
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    setenv("GPUBP_ZDEV_READ_GROUP_MIB", "128", 1);
    const tcase *t = &types[0];
    size_t n = ((size_t)4 << 20) + 4 * 5;
    uint8_t *host = two_steps(t, n, 31);
    static const char *codecs[] = {"blosclz", "lz4"};
    for (int c = 0; c < 2; c++) {
        if (!have_codec(codecs[c])) continue;
        const char *path = ts_path(c ? "devz_gfall_lz4.bp" : "devz_gfall.bp");
        write_one(path, "device=simulated,split_mib=2,subfiles=4", codecs[c], "shuffle=byte", t,
                  host, n);
        assert_true(ts_file_size(ts_join(path, "data.3")) > 1000); /* 4 sub-blocks a step */
        size_t w0, r0, w1, r1, q0 = gbp_zdev_read_groups();
        gbp_zdev_counts(&w0, &r0);
        read_back(path, host, n, "device=simulated,gpu_layout=row_major", 1);
        gbp_zdev_counts(&w1, &r1);
        /* blosclz: nothing on the device; lz4: every sub-block, one group a step */
        assert_int_equal(r1 - r0, c ? 8 : 0);
        assert_int_equal(gbp_zdev_read_groups() - q0, c ? 2 : 0);
        if (!c) continue;
        const char *d1 = ts_join(path, "data.1");
        long sz = ts_file_size(d1);
        FILE *fp = fopen(d1, "r+b");
        assert_non_null(fp);
        assert_int_equal(fseek(fp, sz / 2, SEEK_SET), 0);
        for (long i = sz / 2; i < sz; i++) fputc(0x7F, fp);
        assert_int_equal(fclose(fp), 0);
        gpubp_variable *v;
        uint8_t *back;
        gpubp_file *r = open_dev(path, &v, &back, n);
        q0 = gbp_zdev_read_groups();
        TS_OK(gpubp_set_step_selection(v, 1, 1));
        TS_ERR(gpubp_get(r, v, back, GPUBP_SYNC), GPUBP_ERR_FORMAT);
        assert_non_null(strstr(gpubp_last_error(), "data.1"));
        assert_int_equal(gbp_zdev_read_groups(), q0); /* the group fell back */
        TS_OK(gpubp_set_step_selection(v, 0, 1));
        TS_OK(gpubp_get(r, v, back, GPUBP_SYNC));
        assert_memory_equal(back, host, n);
        TS_OK(gpubp_close(r));
        gbp_sim_free(back);
    }
    free(host);
    unsetenv("GPUBP_ZDEV_READ_GROUP_MIB");
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
}

/* Compressed puts from device memory are split over the subfiles (split_mib; sub-blocks of
 * GPUBP_ZDEV_SPLIT_MIB at least): each sub-block is coded on the device while the I/O threads
 * write the earlier ones (no wait between blocks; pieces cut small so that the rings of output
 * buffers wrap and their write fences are waited for). Every data file and md.0 equal the CPU
 * path's, byte for byte, and the values read back into host and device memory. */
static void split_device_blocks(void **state)
{
    (void)state;
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    const tcase *t = &types[0];
    size_t n = ((size_t)6 << 20) + 4 * 7;
    uint8_t *host = two_steps(t, n, 3);
    static const char *cs[] = {"lz4", "zlib", "zstd"};
    for (size_t c = 0; c < 9; c++) {
        if (!have_codec(cs[c % 3])) continue;
        /* pieces under a sub-block (several pieces each), or of 4 MiB: the sub-blocks of ~1.5
         * MiB go two by two into one batch (launch_group); over 8 subfiles, 6 sub-blocks of
         * ~1 MiB (GPUBP_ZDEV_SPLIT_MIB) go four, then two, into a batch of 4 MiB */
        int group = c >= 3, nsub = c >= 6 ? 6 : 4;
        gbp_zdev_set_piece(group ? (size_t)4 << 20 : 300000);
        size_t g0 = gbp_zdev_grouped();
        const char *extra = nsub == 6 ? ",split_mib=2,subfiles=8" : ",split_mib=2,subfiles=4";
        char on[200], off[200];
        snprintf(on, sizeof on, "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4%s",
                 extra);
        snprintf(off, sizeof off, "device=simulated,compress_device=off%s", extra);
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s", ts_path("devz_split_on.bp"));
        snprintf(pb, sizeof pb, "%s", ts_path("devz_split_off.bp"));
        size_t w0, r0, w1, r1;
        gbp_zdev_counts(&w0, &r0);
        write_one(pa, on, cs[c % 3], "shuffle=byte", t, host, n);
        gbp_zdev_counts(&w1, &r1);
        assert_int_equal(w1 - w0, 2 * nsub); /* 2 steps of nsub sub-blocks, one per subfile */
        /* per step: the 2nd and 4th (4 sub-blocks); the 2nd to 4th and the 6th (6) */
        if (group) assert_int_equal(gbp_zdev_grouped() - g0, 2 * (nsub == 6 ? 4 : 2));
        else assert_int_equal(gbp_zdev_grouped(), g0);
        write_one(pb, off, cs[c % 3], "shuffle=byte", t, host, n);
        static const char *files[] = {"data.0", "data.1", "data.2", "data.3", "data.4",
                                      "data.5", "md.0"};
        for (size_t k = 0; k < 7; k++)
            if (k == 6 || (int)k < nsub) same_file(pa, pb, files[k], cs[c % 3]);
        assert_true(ts_file_size(ts_join(pa, nsub == 6 ? "data.5" : "data.3")) > 1000);
        read_back(pa, host, n, NULL, 0);
        /* groups of GPUBP_ZDEV_READ_GROUP_MIB (128: the whole step; unset, the default, and
         * 0: one sub-block each; 4: two sub-blocks of ~1.5 MiB, three of ~1 MiB — each a little
         * over, so three of 1.5 MiB and four of 1 MiB do not fit): each get decodes its groups
         * as one batch each, reading the next group ahead while one decodes */
        static const struct {
            const char *mib;
            size_t groups4, ahead4, groups6, ahead6; /* per get, 4 and 6 sub-blocks */
        } gr[] = {{"128", 1, 0, 1, 0}, {NULL, 0, 3, 0, 5}, {"0", 0, 3, 0, 5}, {"4", 2, 2, 2, 3}};
        for (size_t k = 0; k < sizeof gr / sizeof *gr; k++) {
            if (gr[k].mib) setenv("GPUBP_ZDEV_READ_GROUP_MIB", gr[k].mib, 1);
            gbp_zdev_counts(&w0, &r0);
            size_t a0 = gbp_zdev_read_ahead_count(), q0 = gbp_zdev_read_groups();
            read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
            gbp_zdev_counts(&w1, &r1);
            assert_int_equal(r1 - r0, 2 * nsub); /* every sub-block decoded on the device */
            assert_int_equal(gbp_zdev_read_groups() - q0,
                             2 * (nsub == 6 ? gr[k].groups6 : gr[k].groups4));
            assert_int_equal(gbp_zdev_read_ahead_count() - a0,
                             2 * (nsub == 6 ? gr[k].ahead6 : gr[k].ahead4));
            unsetenv("GPUBP_ZDEV_READ_GROUP_MIB");
        }
    }
    free(host);
    gbp_zdev_set_piece(0);
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
}

/* GPUBP_ZDEV_CPU_SUBBLOCKS=K: the first K sub-blocks of a split compressed device put are coded
 * on the CPU while the device codes the others, launched before them (gbp_zdev_prelaunch: the
 * first batch, and the next one into the other coded set). Each file is the one written without
 * lanes (the CPU stand-in codes as the CPU path does), the device writes the other sub-blocks
 * only, and the values read back into host and device memory; K at or above the sub-block count
 * leaves one to the device; with pieces under a sub-block (no batch of several sub-blocks) the
 * first device sub-block alone is launched ahead. */
static void cpu_lane_device_blocks(void **state)
{
    (void)state;
    setenv("GPUBP_ZDEV_SPLIT_MIB", "1", 1);
    const tcase *t = &types[0];
    size_t n = ((size_t)6 << 20) + 4 * 7;
    uint8_t *host = two_steps(t, n, 13);
    static const char *cs[] = {"lz4", "zstd", "zlib"};
    static const struct {
        const char *lanes;
        size_t cpu, piece; /* sub-blocks coded on the CPU of 6; the piece */
    } ks[] = {{"1", 1, (size_t)4 << 20}, {"2", 2, (size_t)4 << 20}, {"5", 5, (size_t)4 << 20},
              {"40", 5, (size_t)4 << 20}, {"2", 2, 300000}};
    const char *extra = ",split_mib=2,subfiles=8";
    char on[200], off[200], pb[1024];
    snprintf(on, sizeof on, "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4%s", extra);
    snprintf(off, sizeof off, "device=simulated,compress_device=off%s", extra);
    snprintf(pb, sizeof pb, "%s", ts_path("devz_lane_off.bp"));
    for (size_t c = 0; c < 3; c++) {
        if (!have_codec(cs[c])) continue;
        unsetenv("GPUBP_ZDEV_CPU_SUBBLOCKS");
        write_one(pb, off, cs[c], "shuffle=byte", t, host, n);
        for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
            setenv("GPUBP_ZDEV_CPU_SUBBLOCKS", ks[k].lanes, 1);
            gbp_zdev_set_piece(ks[k].piece);
            char pa[1024], tag[64];
            snprintf(pa, sizeof pa, "%s", ts_path("devz_lane_on.bp"));
            snprintf(tag, sizeof tag, "%s, %s CPU sub-blocks", cs[c], ks[k].lanes);
            size_t w0, r0, w1, r1, p0 = gbp_zdev_prelaunched();
            gbp_zdev_counts(&w0, &r0);
            write_one(pa, on, cs[c], "shuffle=byte", t, host, n);
            gbp_zdev_counts(&w1, &r1);
            assert_int_equal(w1 - w0, 2 * (6 - ks[k].cpu)); /* 2 steps, 6 sub-blocks each */
            assert_int_equal(gbp_zdev_prelaunched() - p0, 2); /* once a step */
            static const char *files[] = {"data.0", "data.1", "data.2", "data.3", "data.4",
                                          "data.5", "md.0"};
            for (size_t i = 0; i < 7; i++) same_file(pa, pb, files[i], tag);
            read_back(pa, host, n, NULL, 0);
            read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
        }
    }
    free(host);
    gbp_zdev_set_piece(0);
    unsetenv("GPUBP_ZDEV_CPU_SUBBLOCKS");
    unsetenv("GPUBP_ZDEV_SPLIT_MIB");
}

/* GPUBP_ZDEV_TAPER=P: the sub-blocks of a split compressed device put shrink to P % of the one
 * before, the last GPUBP_ZDEV_TAPER_MIB at least: 6 MiB of floats over up to 8 subfiles, q = 0.7
 * and a 1 MiB floor make as many sub-blocks as leave the last one 1 MiB or more (3: 2.74, 1.92,
 * 1.34 MiB; 4 would leave 0.81 MiB last), each 70 % of the one before to the row (unset, the
 * put stays whole: 32 MiB sub-blocks at least); the stored blocks cover the put in order; the
 * CPU path cuts the same blocks (files equal byte for byte), and the values read back into host
 * and device memory. */
static void tapered_device_blocks(void **state)
{
    (void)state;
    if (!have_codec("lz4")) skip();
    setenv("GPUBP_ZDEV_TAPER", "70", 1);
    setenv("GPUBP_ZDEV_TAPER_MIB", "1", 1);
    const tcase *t = &types[0];
    size_t n = ((size_t)6 << 20) + 4 * 9;
    uint8_t *host = two_steps(t, n, 11);
    const char *extra = ",split_mib=2,subfiles=8";
    char on[200], off[200];
    snprintf(on, sizeof on, "device=simulated,compress_device=on,chunk_mib=1,pool_slots=4%s",
             extra);
    snprintf(off, sizeof off, "device=simulated,compress_device=off%s", extra);
    char pa[1024], pb[1024];
    snprintf(pa, sizeof pa, "%s", ts_path("devz_taper_on.bp"));
    snprintf(pb, sizeof pb, "%s", ts_path("devz_taper_off.bp"));
    write_one(pa, on, "lz4", "shuffle=byte", t, host, n);
    write_one(pb, off, "lz4", "shuffle=byte", t, host, n);
    /* the sub-blocks: the most whose last holds 1 MiB or more, each 70 % of the one before */
    size_t rows = n / t->es, expect = 0;
    for (size_t k = 1; k <= 8; k++) {
        double sum = 0, qk = 1;
        for (size_t i = 0; i < k; i++, qk *= 0.7) sum += qk;
        if ((double)n * qk / 0.7 / sum >= (double)(1 << 20)) expect = k;
    }
    assert_true(expect >= 3);
    gpubp_file *r;
    TS_OK(gpubp_open(&r, pa, GPUBP_MODE_READ_RANDOM_ACCESS, "block_view=stored"));
    gpubp_variable *v;
    TS_OK(gpubp_inquire_variable(&v, r, "x"));
    size_t nb = 0, prev = rows + 1, total = 0;
    TS_OK(gpubp_variable_blocks(v, 0, &nb));
    assert_int_equal(nb, expect);
    for (size_t b = 0; b < nb; b++) {
        size_t start = 0, count = 0;
        TS_OK(gpubp_variable_block_info(v, 0, b, &start, &count, NULL, NULL));
        assert_int_equal(start, total);
        assert_true(count < prev); /* each smaller than the one before */
        if (b + 1 < nb) /* 70 % of the one before, to the row */
            assert_true(b == 0 || (count + 1 >= (size_t)(0.7 * (double)prev) &&
                                   count <= (size_t)(0.7 * (double)prev) + 1));
        assert_true(count * t->es >= ((size_t)1 << 20));
        prev = count;
        total += count;
    }
    assert_int_equal(total, rows);
    TS_OK(gpubp_close(r));
    char name[32];
    for (size_t k = 0; k < expect; k++) {
        snprintf(name, sizeof name, "data.%zu", k);
        same_file(pa, pb, name, "lz4 tapered");
    }
    same_file(pa, pb, "md.0", "lz4 tapered");
    read_back(pa, host, n, NULL, 0);
    read_back(pa, host, n, "device=simulated,gpu_layout=row_major", 1);
    unsetenv("GPUBP_ZDEV_TAPER");
    unsetenv("GPUBP_ZDEV_TAPER_MIB");
    free(host);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_device_blocks),
        cmocka_unit_test(cpu_lane_device_blocks),
        cmocka_unit_test(split_failure),
        cmocka_unit_test(read_ahead_failure),
        cmocka_unit_test(group_fallback),
        cmocka_unit_test(tapered_device_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
