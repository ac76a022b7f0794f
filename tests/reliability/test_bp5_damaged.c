/* Damaged BP5 datasets (issue 21 item 6): every golden BP5 dataset of tests/golden, each of its
 * files (md.idx, mmd.0, md.0, data.K) truncated at many offsets and with bytes changed at many
 * positions (deterministic: evenly spread cuts, positions from a fixed generator), is opened in
 * random access and in step mode and read completely: variables, shapes, blocks, min/max, every
 * get, attributes. Every call returns a documented status with a message; a GPUBP_ERR_FORMAT
 * message names the damaged dataset and an offset. A watchdog fails the test on a hang.
 * The gpubpls case runs `gpubpls -la` and `gpubpls -d` on a subset of the same variants: each
 * exits (no signal) within its time limit, 0 or with a message (stderr, or bpls's exception
 * report on stdout); a dump that reaches 64 MiB of output (a damaged shape of terabytes, printed
 * as bpls prints it) is cut there and counted apart.
 * usage: test_reliability_bp5_damaged [GPUBPLS]; GPUBP_RELIABILITY_QUICK=1: fewer variants. */
#include "support/test_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DATASETS 128
#define MAX_GET_BYTES ((size_t)1 << 24)
#define MAX_ITEMS 64
#define WATCHDOG_S 60

static const char *g_gpubpls;
static char *g_sets[MAX_DATASETS];
static size_t g_nsets;
static char g_variant[4096]; /* what runs now, for the watchdog */
static volatile pid_t g_child; /* a gpubpls run in progress: the watchdog kills it */
static int g_quick;

/* ---- the golden BP5 datasets ----------------------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_sets(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d || depth > 4) {
        if (d) closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[2048], m[2100];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!is_dir(p)) continue;
        snprintf(m, sizeof m, "%s/mmd.0", p);
        if (ts_exists(m)) {
            if (g_nsets < MAX_DATASETS) g_sets[g_nsets++] = strdup(p);
        } else {
            find_sets(p, depth + 1);
        }
    }
    closedir(d);
}

/* ---- the watchdog ------------------------------------------------------------------------------ */

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "\nHANG (watchdog): ";
    ssize_t w = write(2, m, sizeof m - 1);
    w = write(2, g_variant, strlen(g_variant));
    w = write(2, "\n", 1);
    (void)w;
    if (g_child > 0) kill(g_child, SIGKILL);
    _exit(3);
}

/* ---- reading everything through the API -------------------------------------------------------- */

typedef struct tally {
    long variants, calls_failed, format, codec, other;
    long absent; /* NOT_FOUND, NOT_SUPPORTED: no min/max, statistics only (also when undamaged) */
    long bad; /* a violation: printed, and the test fails */
    const char *ds; /* the damaged dataset's path */
} tally;

static void check(tally *t, int rc, const char *call)
{
    if (rc >= 0) return;
    t->calls_failed++;
    const char *msg = gpubp_last_error();
    int allowed = rc == GPUBP_ERR_FORMAT || rc == GPUBP_ERR_CODEC ||
                  rc == GPUBP_ERR_NOT_SUPPORTED || rc == GPUBP_ERR_NOT_FOUND ||
                  rc == GPUBP_ERR_INVALID_STEP || rc == GPUBP_ERR_INVALID_SELECTION ||
                  rc == GPUBP_ERR_UNSUPPORTED_TYPE || rc == GPUBP_ERR_NOMEM;
    const char *why = NULL;
    if (!allowed) why = "an undocumented status for a damaged file";
    else if (!msg || !msg[0]) why = "no message";
    else if (rc == GPUBP_ERR_FORMAT && !strstr(msg, t->ds)) why = "the message does not name the dataset";
    else if (rc == GPUBP_ERR_FORMAT && !strstr(msg, "offset")) why = "the message gives no offset";
    if (getenv("GPUBP_TEST_VERBOSE") && getenv("GPUBP_TEST_VERBOSE")[0] == '2')
        print_message("%s: %s -> %d: %s\n", g_variant, call, rc, msg ? msg : "");
    if (rc == GPUBP_ERR_FORMAT) t->format++;
    else if (rc == GPUBP_ERR_CODEC) t->codec++;
    else if (rc == GPUBP_ERR_NOT_FOUND || rc == GPUBP_ERR_NOT_SUPPORTED) t->absent++;
    else t->other++;
    if (why) {
        if (t->bad < 20 || getenv("GPUBP_TEST_VERBOSE"))
            print_error("%s: %s -> %d (%s): %s: \"%s\"\n", g_variant, call, rc, gpubp_strerror(rc),
                        why, msg ? msg : "(null)");
        t->bad++;
    }
}

static void get_all(tally *t, gpubp_file *f, gpubp_variable *v)
{
    size_t bytes = 0;
    int rc = gpubp_selection_size(v, &bytes);
    check(t, rc, "gpubp_selection_size");
    if (rc != GPUBP_OK || bytes > MAX_GET_BYTES) return;
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return;
    check(t, gpubp_get(f, v, buf, GPUBP_SYNC), "gpubp_get");
    free(buf);
}

static void read_var(tally *t, gpubp_file *f, const char *name, int random_access)
{
    gpubp_variable *v = NULL;
    int rc = gpubp_inquire_variable(&v, f, name);
    check(t, rc, "gpubp_inquire_variable");
    if (rc != GPUBP_OK) return;
    size_t nd = 0, ns = 0, dims[64];
    uint8_t mn[16], mx[16];
    check(t, gpubp_variable_ndims(v, &nd), "gpubp_variable_ndims");
    if (nd <= 64) check(t, gpubp_variable_shape(v, GPUBP_MEM_HOST, dims), "gpubp_variable_shape");
    check(t, gpubp_variable_steps(v, &ns), "gpubp_variable_steps");
    gpubp_type ty = GPUBP_TYPE_DOUBLE;
    check(t, gpubp_variable_type(v, &ty), "gpubp_variable_type");
    if (ty != GPUBP_TYPE_STRING) check(t, gpubp_variable_minmax(v, mn, mx), "gpubp_variable_minmax");
    size_t steps = random_access ? (ns < MAX_ITEMS ? ns : MAX_ITEMS) : 1;
    for (size_t s = 0; s < steps; s++) {
        size_t nb = 0, st[64], ct[64];
        rc = gpubp_variable_blocks(v, s, &nb);
        check(t, rc, "gpubp_variable_blocks");
        for (size_t b = 0; rc == GPUBP_OK && nd <= 64 && b < nb && b < MAX_ITEMS; b++)
            check(t, gpubp_variable_block_info(v, s, b, st, ct, mn, mx), "gpubp_variable_block_info");
        if (random_access) {
            rc = gpubp_set_step_selection(v, s, 1);
            check(t, rc, "gpubp_set_step_selection");
            if (rc != GPUBP_OK) continue;
        }
        get_all(t, f, v);
    }
}

static void read_all(tally *t, gpubp_file *f, int random_access)
{
    size_t n = 0;
    const char *const *names = NULL;
    int rc = gpubp_available_variables(f, &n, &names);
    check(t, rc, "gpubp_available_variables");
    if (rc != GPUBP_OK) return;
    /* names may be invalidated by later calls: copy them */
    char **copy = calloc(n ? n : 1, sizeof *copy);
    for (size_t i = 0; i < n; i++) copy[i] = strdup(names[i]);
    for (size_t i = 0; i < n && i < MAX_ITEMS; i++) read_var(t, f, copy[i], random_access);
    for (size_t i = 0; i < n; i++) free(copy[i]);
    free(copy);
    rc = gpubp_available_attributes(f, &n, &names);
    check(t, rc, "gpubp_available_attributes");
    for (size_t i = 0; rc == GPUBP_OK && i < n && i < MAX_ITEMS; i++) {
        gpubp_type ty;
        size_t cnt = 0;
        int arr = 0;
        int r2 = gpubp_inquire_attribute(f, names[i], &ty, &cnt, &arr);
        check(t, r2, "gpubp_inquire_attribute");
        if (r2 != GPUBP_OK) continue;
        if (ty == GPUBP_TYPE_STRING) {
            const char *s;
            for (size_t j = 0; j < cnt && j < MAX_ITEMS; j++)
                check(t, gpubp_attribute_string(f, names[i], j, &s), "gpubp_attribute_string");
        } else {
            size_t es = gpubp_type_size(ty);
            void *buf = es && cnt <= MAX_GET_BYTES / es ? malloc(cnt * es + 1) : NULL;
            if (buf) check(t, gpubp_attribute_data(f, names[i], buf), "gpubp_attribute_data");
            free(buf);
        }
    }
}

/* Opens the dataset both ways and reads everything; returns the status of the first open. */
static int exercise(tally *t, const char *ds)
{
    gpubp_file *f = NULL;
    t->variants++;
    alarm(WATCHDOG_S);
    int first = gpubp_open(&f, ds, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    check(t, first, "gpubp_open(READ_RANDOM_ACCESS)");
    if (first == GPUBP_OK) {
        size_t ns = 0;
        check(t, gpubp_steps(f, &ns), "gpubp_steps");
        read_all(t, f, 1);
        check(t, gpubp_close(f), "gpubp_close");
    }
    int rc = gpubp_open(&f, ds, GPUBP_MODE_READ, "timeout=0");
    check(t, rc, "gpubp_open(READ)");
    if (rc == GPUBP_OK) {
        for (int s = 0; s < MAX_ITEMS; s++) {
            rc = gpubp_begin_step(f);
            check(t, rc, "gpubp_begin_step");
            if (rc != GPUBP_OK) break;
            read_all(t, f, 0);
            check(t, gpubp_end_step(f), "gpubp_end_step");
        }
        check(t, gpubp_close(f), "gpubp_close");
    }
    alarm(0);
    return first;
}

/* ---- damaged copies ---------------------------------------------------------------------------- */

/* A scratch copy of dataset src in which file `name` is replaced by bytes[0, n). The other files
 * are symbolic links to the golden ones (read only); the copy is reused while src stays the same
 * (the file damaged before is linked again). */
static void link_file(const char *src, const char *dst, const char *name)
{
    char a[2048], b[2048];
    if (src[0] == '/') {
        snprintf(a, sizeof a, "%s/%s", src, name);
    } else {
        char cwd[1024];
        assert_non_null(getcwd(cwd, sizeof cwd));
        snprintf(a, sizeof a, "%s/%s/%s", cwd, src, name);
    }
    snprintf(b, sizeof b, "%s/%s", dst, name);
    unlink(b);
    assert_int_equal(symlink(a, b), 0);
}

static const char *damaged_copy(const char *src, const char *name, const uint8_t *bytes, size_t n)
{
    static char dst[1400], cur_src[2048], cur_file[64];
    snprintf(dst, sizeof dst, "%s/damaged.bp", ts_tmpdir());
    if (strcmp(cur_src, src) != 0) {
        ts_remove_tree(dst);
        assert_int_equal(mkdir(dst, 0777), 0);
        DIR *d = opendir(src);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (e->d_name[0] != '.') link_file(src, dst, e->d_name);
        closedir(d);
        snprintf(cur_src, sizeof cur_src, "%s", src);
        cur_file[0] = '\0';
    }
    if (cur_file[0] && strcmp(cur_file, name) != 0) link_file(src, dst, cur_file);
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dst, name);
    unlink(p);
    assert_int_equal(ts_write_file(p, bytes, n), 0);
    snprintf(cur_file, sizeof cur_file, "%s", name);
    return dst;
}

static uint64_t g_lcg = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    g_lcg = g_lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_lcg >> 33);
}

/* The files of a dataset that are damaged: md.idx, mmd.0, md.0 and every data.K. */
static size_t dataset_files(const char *ds, char names[][64], size_t cap)
{
    size_t k = 0;
    const char *meta[3] = {"md.idx", "mmd.0", "md.0"};
    for (int i = 0; i < 3 && k < cap; i++) snprintf(names[k++], 64, "%s", meta[i]);
    for (int i = 0; i < 16 && k < cap; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/data.%d", ds, i);
        if (ts_exists(p)) snprintf(names[k++], 64, "data.%d", i);
    }
    return k;
}

typedef void (*variant_fn)(void *ctx, const char *ds);

/* Every variant of every golden BP5 dataset: cuts and byte changes of each file. */
static void each_variant(int ncut_meta, int nflip_meta, int ncut_data, int nflip_data,
                         variant_fn fn, void *ctx)
{
    g_lcg = 0x9E3779B97F4A7C15ull;
    for (size_t s = 0; s < g_nsets; s++) {
        char files[20][64];
        size_t nf = dataset_files(g_sets[s], files, 20);
        for (size_t fi = 0; fi < nf; fi++) {
            char p[2048];
            snprintf(p, sizeof p, "%s/%s", g_sets[s], files[fi]);
            size_t n = 0;
            uint8_t *orig = ts_read_file(p, &n);
            if (!orig) continue; /* absent file: nothing to damage */
            uint8_t *buf = malloc(n ? n : 1);
            int meta = strncmp(files[fi], "data.", 5) != 0;
            int ncut = meta ? ncut_meta : ncut_data, nflip = meta ? nflip_meta : nflip_data;
            for (int c = 0; c < ncut && n; c++) {
                size_t cut = (size_t)((uint64_t)n * (uint64_t)c / (uint64_t)ncut);
                if (c == ncut - 1) cut = n - 1;
                snprintf(g_variant, sizeof g_variant, "%.1500s: %s cut to %zu of %zu bytes", g_sets[s],
                         files[fi], cut, n);
                fn(ctx, damaged_copy(g_sets[s], files[fi], orig, cut));
            }
            for (int c = 0; c < nflip && n; c++) {
                memcpy(buf, orig, n);
                /* a third of the changes in the first 64 bytes (headers), the rest anywhere */
                size_t at = (c % 3 == 0 ? next_rand() % 64 : next_rand()) % n;
                static const uint8_t vals[4] = {0xFF, 0x00, 0x7F, 0x80};
                uint8_t nv = c % 2 ? (uint8_t)(orig[at] ^ (1u << (next_rand() % 8))) : vals[(c / 2) % 4];
                if (nv == orig[at]) nv ^= 0x01;
                buf[at] = nv;
                snprintf(g_variant, sizeof g_variant, "%.1500s: %s byte %zu 0x%02x -> 0x%02x", g_sets[s],
                         files[fi], at, orig[at], nv);
                fn(ctx, damaged_copy(g_sets[s], files[fi], buf, n));
            }
            free(buf);
            free(orig);
        }
    }
}

static void api_variant(void *ctx, const char *ds)
{
    tally *t = ctx;
    t->ds = ds;
    exercise(t, ds);
}

static int setup(void **state)
{
    (void)state;
    signal(SIGALRM, on_alarm);
    return 0;
}

/* Golden datasets their ADIOS2 writer damaged (ADIOS2 cannot read them either): undamaged, their
 * reads may fail with GPUBP_ERR_FORMAT only (tests/api/test_old_releases.c). */
static int writer_damaged(const char *ds)
{
    static const char *const sets[] = {"/old/2.10.0/chunk_nullop_bp5.bp"};
    size_t n = strlen(ds);
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        size_t k = strlen(sets[i]);
        if (n >= k && strcmp(ds + n - k, sets[i]) == 0) return 1;
    }
    return 0;
}

static void golden_sets_read(void **state)
{
    (void)state;
    /* the undamaged datasets read without a failure (the baseline for the damaged ones) */
    assert_true(g_nsets >= 10);
    for (size_t s = 0; s < g_nsets; s++) {
        tally t = {0};
        t.ds = g_sets[s];
        snprintf(g_variant, sizeof g_variant, "%s (undamaged)", g_sets[s]);
        int rc = exercise(&t, g_sets[s]);
        if (rc != GPUBP_OK || t.bad)
            fail_msg("%s: undamaged: open %d, %ld violations", g_sets[s], rc, t.bad);
        if ((t.format && !writer_damaged(g_sets[s])) || t.other)
            fail_msg("%s: undamaged: %ld calls failed (%ld FORMAT)", g_sets[s], t.calls_failed,
                     t.format);
    }
}

static void damaged_api(void **state)
{
    (void)state;
    tally t = {0};
    int q = g_quick;
    each_variant(q ? 6 : 16, q ? 10 : 32, q ? 2 : 4, q ? 3 : 8, api_variant, &t);
    print_message("%zu datasets, %ld damaged variants: %ld calls failed (%ld FORMAT, %ld CODEC, "
                  "%ld NOT_FOUND or NOT_SUPPORTED, %ld other), %ld violations\n", g_nsets,
                  t.variants, t.calls_failed, t.format, t.codec, t.absent, t.other, t.bad);
    assert_true(t.variants > 4000 || (q && t.variants > 1000));
    assert_true(t.format > 0); /* damage is detected, not only survived */
    assert_int_equal(t.bad, 0);
}

/* ---- gpubpls ------------------------------------------------------------------------------------ */

typedef struct ls_tally {
    long runs, failed, bad, capped;
} ls_tally;

/* A damaged shape can be a plausible one of terabytes (a BP5 global array may have holes), whose
 * dump gpubpls prints as bpls does, zeros where no block is: the output is cut at this size, and
 * a run that reaches it (SIGXFSZ) was printing, not hung. */
#define LS_OUTPUT_CAP ((rlim_t)64 << 20)

/* gpubpls is started with posix_spawn (no copy of this process's page tables: with ASan a fork
 * cost as much as the run), its output cut by RLIMIT_FSIZE (set here around the spawn, which the
 * child inherits) and a hang caught by this process's watchdog (WATCHDOG_S: on_alarm names the
 * variant, kills the child and fails the test). */
static void ls_run(ls_tally *t, const char *flag, const char *ds)
{
    char err[1400], out[1400];
    snprintf(err, sizeof err, "%s/gpubpls.err", ts_tmpdir());
    snprintf(out, sizeof out, "%s/gpubpls.out", ts_tmpdir());
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t dflt;
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGXFSZ);
    sigaddset(&dflt, SIGALRM);
    assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                                      0666), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
                                                      0666), 0);
    assert_int_equal(posix_spawnattr_init(&at), 0);
    assert_int_equal(posix_spawnattr_setsigdefault(&at, &dflt), 0);
    assert_int_equal(posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF), 0);
    struct rlimit keep, cap;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &keep), 0);
    cap = keep; /* the soft limit only: a lowered hard limit could not be raised again */
    cap.rlim_cur = keep.rlim_max != RLIM_INFINITY && keep.rlim_max < LS_OUTPUT_CAP ? keep.rlim_max
                                                                                   : LS_OUTPUT_CAP;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &cap), 0);
    char *argv[] = {(char *)g_gpubpls, (char *)flag, (char *)ds, NULL};
    pid_t pid = -1;
    int rc = posix_spawn(&pid, g_gpubpls, &fa, &at, argv, environ);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &keep), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        print_error("%s: gpubpls %s could not run (%s)\n", g_variant, flag, strerror(rc));
        t->bad++;
        return;
    }
    g_child = pid;
    alarm(WATCHDOG_S);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    alarm(0);
    g_child = 0;
    t->runs++;
    const char *why = NULL;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ && ts_file_size(out) >= (long)LS_OUTPUT_CAP)
        t->capped++;
    else if (WIFSIGNALED(st))
        why = "was killed by a signal";
    else if (WEXITSTATUS(st) != 0) {
        t->failed++;
        /* the message on stderr, or bpls's report of a caught exception on stdout */
        if (ts_file_size(err) <= 0 && ts_file_size(out) <= 0) why = "failed without a message";
    }
    if (why) {
        if (t->bad < 20)
            print_error("%s: gpubpls %s %s (status 0x%x)\n", g_variant, flag, why, (unsigned)st);
        t->bad++;
    }
}

static void ls_variant(void *ctx, const char *ds)
{
    ls_run(ctx, "-la", ds);
    ls_run(ctx, "-d", ds);
}

static void damaged_gpubpls(void **state)
{
    (void)state;
    if (!g_gpubpls) skip();
    ls_tally t = {0};
    int q = g_quick;
    each_variant(q ? 1 : 3, q ? 2 : 4, 1, q ? 0 : 1, ls_variant, &t);
    print_message("%ld gpubpls runs on damaged datasets, %ld exited with a message, %ld cut at "
                  "64 MiB of output, %ld violations\n", t.runs, t.failed, t.capped, t.bad);
    assert_true(t.runs > 200);
    assert_true(t.failed > 0);
    assert_int_equal(t.bad, 0);
}

int main(int argc, char **argv)
{
    g_gpubpls = argc > 1 ? argv[1] : NULL;
    const char *q = getenv("GPUBP_RELIABILITY_QUICK");
    g_quick = q && *q == '1';
    find_sets(ts_golden_dir(), 0);
    if (g_nsets) qsort(g_sets, g_nsets, sizeof *g_sets, by_name);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_sets_read),
        cmocka_unit_test(damaged_api),
        cmocka_unit_test(damaged_gpubpls),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    for (size_t i = 0; i < g_nsets; i++) free(g_sets[i]);
    return rc;
}
