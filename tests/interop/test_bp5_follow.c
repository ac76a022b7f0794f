/* A READ-mode reader follows a BP5 dataset that grows (issue 21 item 7: appending readers see new
 * steps without re-reading old metadata). ADIOS2's own 40-step dataset (tests/golden/bp5/wheel/
 * manysteps.bp, sparse and late variables) is replayed as a live writer would leave it: md.idx
 * with its header and the records of K steps (the writer's active flag set), mmd.0, md.0 and the
 * data files whole. The reader reads those K steps and waits
 * (GPUBP_NOT_READY); then every byte of md.idx after its header, of mmd.0 and of md.0 that it has
 * read so far is poisoned, the rest of md.idx is appended and the flag cleared. The
 * reader must read the remaining steps with the values of a random-access read of the original,
 * end with GPUBP_END_OF_STREAM, and (the reader's own counters) have read after the poisoning
 * exactly md.idx's 64-byte header once per look plus the new bytes of md.idx (mmd.0 did not grow:
 * nothing of it), and the md.0 blocks of the new steps once each. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "format/bp5.h"
#include "support/test_support.h"

static unsigned char *slurp(const char *path, size_t *n)
{
    unsigned char *p = ts_read_file(path, n);
    assert_non_null(p);
    return p;
}

static void put(const char *path, const void *p, size_t n, size_t off, int trunc)
{
    int fd = open(path, O_WRONLY | O_CREAT | (trunc ? O_TRUNC : 0), 0644);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
    close(fd);
}

static uint64_t ld64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The end of md.idx's record that completes step k (0-based), and that step's md.0 end. */
static size_t idx_cut(const unsigned char *idx, size_t n, size_t k, uint64_t *md0_end)
{
    size_t at = 64, steps = 0;
    while (at + 9 <= n) {
        uint64_t len = ld64(idx + at + 1);
        if (idx[at] == 's') {
            *md0_end = ld64(idx + at + 9) + ld64(idx + at + 17);
            if (steps++ == k) return at + 9 + (size_t)len;
        }
        at += 9 + (size_t)len;
    }
    fail_msg("md.idx has fewer than %zu steps", k + 1);
    return 0;
}

/* The open step of f equals the open step of ref (a reader of the original dataset in step
 * mode): the same variables, and every numeric variable reads the same bytes. */
static void check_step(gpubp_file *f, gpubp_file *ref, size_t t)
{
    size_t nv = 0, nr = 0;
    const char *const *names = NULL, *const *rnames = NULL;
    TS_OK(gpubp_available_variables(f, &nv, &names));
    TS_OK(gpubp_available_variables(ref, &nr, &rnames));
    assert_int_equal(nv, nr);
    assert_true(nv >= 1);
    for (size_t i = 0; i < nv; i++) {
        assert_string_equal(names[i], rnames[i]);
        gpubp_variable *v, *w;
        TS_OK(gpubp_inquire_variable(&v, f, names[i]));
        TS_OK(gpubp_inquire_variable(&w, ref, names[i]));
        gpubp_type type;
        TS_OK(gpubp_variable_type(v, &type));
        if (type == GPUBP_TYPE_STRING) continue;
        size_t n = 0, m = 0;
        TS_OK(gpubp_selection_size(v, &n));
        TS_OK(gpubp_selection_size(w, &m));
        assert_int_equal(n, m);
        unsigned char *a = calloc(n + 1, 1), *b = calloc(n + 1, 1);
        memset(a, 0x5a, n);
        TS_OK(gpubp_get(f, v, a, GPUBP_SYNC));
        TS_OK(gpubp_get(ref, w, b, GPUBP_SYNC));
        if (memcmp(a, b, n)) fail_msg("step %zu: %s differs from the original's", t, names[i]);
        free(a);
        free(b);
    }
}

static void test_follow_without_rereading(void **state)
{
    (void)state;
    char src[4200];
    snprintf(src, sizeof src, "%s/bp5/wheel/manysteps.bp", ts_golden_dir());
    const char *dst = ts_path("follow.bp");
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/data.* '%s'/md.0 '%s'/",
             dst, dst, src, src, dst);
    assert_int_equal(system(cmd), 0);
    char p_idx[4300], p_mmd[4300], p_md0[4300];
    snprintf(p_idx, sizeof p_idx, "%s/md.idx", dst);
    snprintf(p_mmd, sizeof p_mmd, "%s/mmd.0", dst);
    snprintf(p_md0, sizeof p_md0, "%s/md.0", dst);
    size_t ni, nm, nd;
    unsigned char *idx = slurp(ts_join(src, "md.idx"), &ni);
    unsigned char *mmd = slurp(ts_join(src, "mmd.0"), &nm);
    unsigned char *md0 = slurp(ts_join(src, "md.0"), &nd);
    assert_int_equal(idx[36], 0); /* little-endian writer */
    const size_t K = 25;
    uint64_t md0_old = 0, md0_all = 0;
    size_t cut = idx_cut(idx, ni, K - 1, &md0_old);
    idx_cut(idx, ni, 39, &md0_all);
    assert_true(cut < ni && md0_old < md0_all);
    /* the live writer's state: K steps listed, active */
    unsigned char *live = malloc(cut);
    memcpy(live, idx, cut);
    live[39] = 1;
    put(p_idx, live, cut, 0, 1);
    put(p_mmd, mmd, nm, 0, 1);

    gpubp_file *f, *ref;
    TS_OK(gpubp_open(&f, dst, GPUBP_MODE_READ, "timeout=0"));
    TS_OK(gpubp_open(&ref, src, GPUBP_MODE_READ, NULL));
    size_t t = 0;
    for (; t < K; t++) {
        TS_OK(gpubp_begin_step(f));
        TS_OK(gpubp_begin_step(ref));
        check_step(f, ref, t);
        TS_OK(gpubp_end_step(f));
        TS_OK(gpubp_end_step(ref));
    }
    assert_int_equal(gpubp_begin_step(f), GPUBP_NOT_READY);

    /* poison what was read: md.idx after its header, mmd.0, md.0 of the steps read */
    bp5_reader *r = f->rd.bp5;
    assert_non_null(r);
    uint64_t idx0 = r->idx_bytes, md00 = r->md0_bytes;
    assert_true(idx0 >= cut + nm);
    unsigned char *junk = malloc(nd > ni ? nd : ni);
    memset(junk, 0xa5, nd > ni ? nd : ni);
    put(p_idx, junk, cut - 64, 64, 0);
    put(p_mmd, junk, nm, 0, 0);
    put(p_md0, junk, (size_t)md0_old, 0, 0);
    /* the writer goes on: the other steps, then it closes (flag cleared) */
    put(p_idx, idx + cut, ni - cut, cut, 0);
    unsigned char flag = 0;
    put(p_idx, &flag, 1, 39, 0);

    for (; t < 40; t++) {
        TS_OK(gpubp_begin_step(f));
        TS_OK(gpubp_begin_step(ref));
        check_step(f, ref, t);
        TS_OK(gpubp_end_step(f));
        TS_OK(gpubp_end_step(ref));
    }
    assert_int_equal(gpubp_begin_step(f), GPUBP_END_OF_STREAM);
    assert_int_equal(gpubp_begin_step(ref), GPUBP_END_OF_STREAM);
    /* two looks after the poisoning (the one that found the new steps and the one that found the
     * end): each reads md.idx's header; the new records once; md.0: each new step's block once */
    uint64_t new_md0 = md0_all - md0_old;
    print_message("after the append: %llu bytes of md.idx/mmd.0 (header 2 x 64 + %zu new), %llu of "
                  "md.0 (%llu new)\n", (unsigned long long)(r->idx_bytes - idx0), ni - cut,
                  (unsigned long long)(r->md0_bytes - md00), (unsigned long long)new_md0);
    assert_int_equal(r->idx_bytes - idx0, 2 * 64 + (ni - cut));
    assert_int_equal(r->md0_bytes - md00, new_md0);
    TS_OK(gpubp_close(f));
    TS_OK(gpubp_close(ref));
    free(junk);
    free(live);
    free(idx);
    free(mmd);
    free(md0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_without_rereading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
