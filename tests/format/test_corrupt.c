/* Robustness of the BP4 decoders, through the public API: each golden dataset copied, then
 *  - md.idx, md.0 and data.0 cut at many offsets: open/inquire/get give an error status or
 *    exactly the data of the intact dataset, never a crash or hang;
 *  - bytes of each file changed in a deterministic pseudo-random sweep: an error or some data,
 *    never a crash, hang or sanitizer report.
 * Each sweep (dataset x file x kind) runs in a child process so that a crash or hang names the
 * case; GPUBP_SWEEP_SCALE (default 1) multiplies the number of flipped positions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/test_support.h"

#define MAX_BYTES ((size_t)64 << 20) /* larger selections are not read (a damaged shape) */
#define MAX_ITEMS 4096               /* steps, blocks, variables visited at most */
#define SWEEP_TIMEOUT_S 120

typedef struct shared_state {
    char current[1024]; /* the case being run, for a crash or hang report */
    char failure[2048];
    long cases;
    long refused; /* cases where random-access open gave an error status */
} shared_state;
static shared_state *sh;

/* ---- what a dataset reads back as: (key, length, hash) records ----------------------------- */

typedef struct rec {
    char key[600];
    size_t len;
    uint64_t hash;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

/* Replaces a file's content with n bytes, in place: no truncation to zero first (on ext4 that
 * forces a writeback at close, which made each case cost milliseconds). */
static int overwrite(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    int ok = ftruncate(fd, (off_t)n) == 0;
    size_t done = 0;
    while (ok && done < n) {
        ssize_t w = pwrite(fd, (const char *)data + done, n - done, (off_t)done);
        if (w <= 0) ok = 0;
        else done += (size_t)w;
    }
    if (close(fd) != 0) ok = 0;
    return ok ? 0 : -1;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static void add(recs *rs, const char *key, const void *data, size_t len)
{
    if (!rs) return;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 256;
        rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
        if (!rs->r) abort();
    }
    rec *r = &rs->r[rs->n++];
    /* a longer key is cut (the same way every time); copied by hand, not through a format */
    size_t kl = strlen(key);
    if (kl >= sizeof r->key) kl = sizeof r->key - 1;
    memcpy(r->key, key, kl);
    r->key[kl] = '\0';
    r->len = len;
    r->hash = fnv(data, len);
}

/* a get of the current selection; adds a record on success */
static void get_rec(gpubp_file *f, gpubp_variable *v, recs *rs, const char *key)
{
    size_t bytes = 0;
    if (gpubp_selection_size(v, &bytes) != GPUBP_OK || bytes > MAX_BYTES) return;
    unsigned char *buf = malloc(bytes + 1);
    if (!buf) return;
    if (gpubp_get(f, v, buf, GPUBP_SYNC) == GPUBP_OK) add(rs, key, buf, bytes);
    free(buf);
}

/* everything about one variable in random access (or the current step in READ mode: vstep0 and
 * nsteps 1) */
static void read_var(gpubp_file *f, const char *name, recs *rs, int read_mode, size_t stepno)
{
    gpubp_variable *v = NULL;
    if (gpubp_inquire_variable(&v, f, name) != GPUBP_OK) return;
    gpubp_type t;
    gpubp_shape_kind kind;
    size_t nd = 0, ns = 1;
    if (gpubp_variable_type(v, &t) != GPUBP_OK) return;
    if (gpubp_variable_shape_kind(v, &kind) != GPUBP_OK) return;
    if (gpubp_variable_ndims(v, &nd) != GPUBP_OK || nd > 32) return;
    if (!read_mode && gpubp_variable_steps(v, &ns) != GPUBP_OK) return;
    if (ns > MAX_ITEMS) ns = MAX_ITEMS;
    char key[700];
    unsigned char mm[2][32];
    for (size_t s = 0; s < ns; s++) {
        size_t step = read_mode ? stepno : s;
        if (!read_mode && gpubp_set_step_selection(v, s, 1) != GPUBP_OK) continue;
        size_t es = gpubp_type_size(t);
        if (t != GPUBP_TYPE_STRING && es && es <= 16 &&
            gpubp_variable_minmax(v, mm[0], mm[1]) == GPUBP_OK) {
            unsigned char both[32];
            memcpy(both, mm[0], es);
            memcpy(both + es, mm[1], es);
            snprintf(key, sizeof key, "%s|%zu|minmax", name, step);
            add(rs, key, both, 2 * es);
        }
        size_t shape[33] = {0}, zero[33] = {0};
        if (kind == GPUBP_SHAPE_GLOBAL_ARRAY &&
            gpubp_variable_shape(v, GPUBP_MEM_HOST, shape) == GPUBP_OK &&
            gpubp_set_selection(v, nd, zero, shape) == GPUBP_OK) {
            snprintf(key, sizeof key, "%s|%zu|all", name, step);
            get_rec(f, v, rs, key);
        } else if (kind == GPUBP_SHAPE_GLOBAL_VALUE) {
            snprintf(key, sizeof key, "%s|%zu|value", name, step);
            get_rec(f, v, rs, key);
        }
        size_t nb = 0;
        if (gpubp_variable_blocks(v, read_mode ? 0 : s, &nb) != GPUBP_OK) continue;
        if (nb > MAX_ITEMS) nb = MAX_ITEMS;
        for (size_t b = 0; b < nb; b++) {
            size_t st[33], ct[33];
            int is_str = t == GPUBP_TYPE_STRING;
            if (gpubp_variable_block_info(v, read_mode ? 0 : s, b, st, ct, is_str ? NULL : mm[0],
                                          is_str ? NULL : mm[1]) != GPUBP_OK)
                continue;
            if (kind == GPUBP_SHAPE_GLOBAL_ARRAY) {
                if (gpubp_set_selection(v, nd, st, ct) != GPUBP_OK) continue;
            } else if (kind == GPUBP_SHAPE_LOCAL_ARRAY) {
                if (gpubp_set_block_selection(v, b) != GPUBP_OK) continue;
                if (gpubp_set_selection(v, nd, NULL, ct) != GPUBP_OK) continue;
            } else {
                continue;
            }
            snprintf(key, sizeof key, "%s|%zu|block%zu", name, step, b);
            get_rec(f, v, rs, key);
        }
    }
}

static void read_attrs(gpubp_file *f, recs *rs)
{
    size_t n = 0;
    const char *const *names = NULL;
    if (gpubp_available_attributes(f, &n, &names) != GPUBP_OK) return;
    if (n > MAX_ITEMS) n = MAX_ITEMS;
    char **copy = calloc(n + 1, sizeof *copy);
    for (size_t i = 0; i < n; i++) copy[i] = strdup(names[i] ? names[i] : "");
    for (size_t i = 0; i < n; i++) {
        gpubp_type t;
        size_t cnt = 0;
        int arr = 0;
        char key[700];
        snprintf(key, sizeof key, "attr|%s", copy[i]);
        if (gpubp_inquire_attribute(f, copy[i], &t, &cnt, &arr) != GPUBP_OK) continue;
        if (t == GPUBP_TYPE_STRING) {
            if (cnt > MAX_ITEMS) cnt = MAX_ITEMS;
            uint64_t h = 0;
            int ok = 1;
            for (size_t k = 0; k < cnt; k++) {
                const char *s = NULL;
                if (gpubp_attribute_string(f, copy[i], k, &s) != GPUBP_OK || !s) {
                    ok = 0;
                    break;
                }
                h = h * 31 + fnv(s, strlen(s));
            }
            if (ok) add(rs, key, &h, sizeof h);
        } else {
            size_t es = gpubp_type_size(t);
            if (es == 0 || cnt > MAX_BYTES / es) continue;
            unsigned char *buf = malloc(cnt * es + 1);
            if (buf && gpubp_attribute_data(f, copy[i], buf) == GPUBP_OK) add(rs, key, buf, cnt * es);
            free(buf);
        }
    }
    for (size_t i = 0; i < n; i++) free(copy[i]);
    free(copy);
}

static char **copy_names(const char *const *names, size_t n)
{
    char **c = calloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++) c[i] = strdup(names[i] ? names[i] : "");
    return c;
}

static void free_names(char **c, size_t n)
{
    for (size_t i = 0; i < n; i++) free(c[i]);
    free(c);
}

/* Reads everything of the dataset in random access and in READ mode. Returns the number of
 * steps random access saw (-1 if open failed). */
static long read_all(const char *path, recs *rs)
{
    long steps = -1;
    gpubp_file *f = NULL;
    if (gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) == GPUBP_OK) {
        size_t ns = 0, n = 0;
        const char *const *names = NULL;
        if (gpubp_steps(f, &ns) == GPUBP_OK) steps = (long)ns;
        if (gpubp_available_variables(f, &n, &names) == GPUBP_OK) {
            if (n > MAX_ITEMS) n = MAX_ITEMS;
            char **c = copy_names(names, n);
            for (size_t i = 0; i < n; i++) read_var(f, c[i], rs, 0, 0);
            free_names(c, n);
        }
        read_attrs(f, rs);
        gpubp_close(f);
    } else {
        if (sh) sh->refused++;
        if (gpubp_last_error()[0] == '\0') {
            fprintf(stderr, "open of %s failed with an empty message\n", path);
            abort();
        }
    }
    f = NULL;
    if (gpubp_open(&f, path, GPUBP_MODE_READ, NULL) == GPUBP_OK) {
        size_t s = 0;
        while (s < MAX_ITEMS && gpubp_begin_step(f) == GPUBP_OK) {
            size_t n = 0;
            const char *const *names = NULL;
            if (gpubp_available_variables(f, &n, &names) == GPUBP_OK) {
                if (n > MAX_ITEMS) n = MAX_ITEMS;
                char **c = copy_names(names, n);
                /* READ-mode keys use the file step; compare only with "r|" records */
                for (size_t i = 0; i < n; i++) {
                    char nm[700];
                    snprintf(nm, sizeof nm, "%s", c[i]);
                    recs tmp = {0};
                    read_var(f, nm, rs ? &tmp : NULL, 1, s);
                    for (size_t k = 0; rs && k < tmp.n; k++) {
                        char key[700];
                        snprintf(key, sizeof key, "r|%s", tmp.r[k].key);
                        add(rs, key, "", 0);
                        rs->r[rs->n - 1].len = tmp.r[k].len;
                        rs->r[rs->n - 1].hash = tmp.r[k].hash;
                    }
                    free(tmp.r);
                }
                free_names(c, n);
            }
            gpubp_end_step(f);
            s++;
        }
        gpubp_close(f);
    }
    return steps;
}

static const rec *find(const recs *rs, const char *key)
{
    for (size_t i = 0; i < rs->n; i++)
        if (!strcmp(rs->r[i].key, key)) return &rs->r[i];
    return NULL;
}

/* ---- the sweeps -------------------------------------------------------------------------- */



static const char *const files[] = {"md.idx", "md.0", "data.0"};

typedef struct dataset {
    char path[8300];
    char label[512];
} dataset;

static dataset sets[64];
static size_t nsets;

static void find_datasets(void)
{
    static const char *const dirs[] = {"BP4", "gpu/BP4"};
    for (size_t d = 0; d < 2; d++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", ts_golden_dir(), dirs[d]);
        DIR *dp = opendir(dir);
        if (!dp) continue;
        struct dirent *e;
        while ((e = readdir(dp)) && nsets < 64) {
            size_t l = strlen(e->d_name);
            if (l < 4 || strcmp(e->d_name + l - 3, ".bp")) continue;
            snprintf(sets[nsets].path, sizeof sets[nsets].path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (stat(ts_join(sets[nsets].path, "md.idx"), &st) != 0) continue;
            snprintf(sets[nsets].label, sizeof sets[nsets].label, "%.100s/%.200s", dirs[d], e->d_name);
            nsets++;
        }
        closedir(dp);
    }
}

static double scale(void)
{
    const char *s = getenv("GPUBP_SWEEP_SCALE");
    double x = s ? atof(s) : 1.0;
    return x > 0 ? x : 1.0;
}

/* Child: cuts `file` of a copy of the dataset at many offsets. */
static int sweep_truncate(const dataset *ds, const char *file)
{
    const char *copy = ts_path("work.bp");
    if (ts_copy_dataset(ds->path, copy) != 0) return 1;
    char target[4200];
    snprintf(target, sizeof target, "%s/%s", copy, file);
    size_t len = 0;
    unsigned char *orig = ts_read_file(target, &len);
    if (!orig) return 1;
    recs ref = {0};
    read_all(copy, &ref);
    /* offsets: all of a small file; else the first 400 bytes, ~400 spread (times
     * GPUBP_SWEEP_SCALE), the last 32 */
    size_t *offs = malloc((len + 1) * sizeof *offs), n = 0;
    size_t spread = (size_t)(400 * scale());
    for (size_t o = 0; o < len; o++) {
        int take = len <= 1024 || o < 400 || o + 32 >= len || o % (len / spread + 1) == 0;
        if (take) offs[n++] = o;
    }
    for (size_t i = 0; i < n; i++) {
        size_t o = offs[i];
        snprintf(sh->current, sizeof sh->current, "%.400s: %s cut to %zu of %zu bytes", ds->label,
                 file, o, len);
        if (overwrite(target, orig, o) != 0) return 1;
        recs got = {0};
        long steps = read_all(copy, &got);
        (void)steps;
        for (size_t k = 0; k < got.n; k++) {
            const rec *r = find(&ref, got.r[k].key);
            if (!r || r->len != got.r[k].len || r->hash != got.r[k].hash) {
                snprintf(sh->failure, sizeof sh->failure,
                         "%.1000s: '%.600s' read back %s (%zu bytes) instead of an error", sh->current,
                         got.r[k].key, r ? "different data" : "something the intact file lacks",
                         got.r[k].len);
                free(got.r);
                return 1;
            }
        }
        free(got.r);
        sh->cases++;
    }
    overwrite(target, orig, len);
    free(offs);
    free(orig);
    free(ref.r);
    return 0;
}

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Child: changes bytes of `file` of a copy of the dataset, one case at a time. */
static int sweep_flip(const dataset *ds, const char *file, uint64_t seed)
{
    const char *copy = ts_path("work.bp");
    if (ts_copy_dataset(ds->path, copy) != 0) return 1;
    char target[4200];
    snprintf(target, sizeof target, "%s/%s", copy, file);
    size_t len = 0;
    unsigned char *orig = ts_read_file(target, &len);
    if (!orig || len == 0) return 1;
    unsigned char *mut = malloc(len);
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    size_t ncases = (size_t)(300 * scale());
    for (size_t i = 0; i < ncases; i++) {
        memcpy(mut, orig, len);
        /* positions: metadata files anywhere; data.0 mostly in its headers and framing */
        size_t pos = (size_t)(rng() % len);
        if (!strcmp(file, "data.0") && len > 4096 && rng() % 4 != 0) pos = (size_t)(rng() % 4096);
        unsigned mode = (unsigned)(rng() % 4), old = mut[pos];
        switch (mode) {
        case 0: mut[pos] ^= (unsigned char)(1u << (rng() % 8)); break;
        case 1: mut[pos] = 0xff; break;
        case 2: mut[pos] = 0x00; break;
        default: mut[pos] = (unsigned char)(rng() | 1) ^ mut[pos]; break;
        }
        /* sometimes a second byte right after (a length's high bytes) */
        if (rng() % 3 == 0 && pos + 1 < len) mut[pos + 1] = (unsigned char)rng();
        snprintf(sh->current, sizeof sh->current, "%.400s: %s byte %zu 0x%02x -> 0x%02x (case %zu)",
                 ds->label, file, pos, old, mut[pos], i);
        if (overwrite(target, mut, len) != 0) return 1;
        read_all(copy, NULL);
        sh->cases++;
    }
    overwrite(target, orig, len);
    free(mut);
    free(orig);
    return 0;
}

/* Runs fn in a child; fails the test on a crash, hang, sanitizer report or wrong data. */
static void run_isolated(int (*fn)(const dataset *, const char *, uint64_t), const dataset *ds,
                         const char *file, uint64_t seed)
{
    memset(sh, 0, sizeof *sh);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(SWEEP_TIMEOUT_S + 5);
        _exit(fn(ds, file, seed));
    }
    int status = 0;
    time_t t0 = time(NULL);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (time(NULL) - t0 > SWEEP_TIMEOUT_S) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            print_error("HANG (> %d s) in case: %s\n", SWEEP_TIMEOUT_S, sh->current);
            fail();
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (WIFSIGNALED(status)) {
        print_error("CRASH (signal %d) in case: %s\n", WTERMSIG(status), sh->current);
        fail();
    }
    if (WEXITSTATUS(status) != 0) {
        print_error("FAILED (exit %d) in case: %s\n%s\n", WEXITSTATUS(status), sh->current,
                    sh->failure);
        fail();
    }
    assert_true(sh->cases > 0);
    /* damaged metadata must be noticed at least sometimes, or the sweep is not mutating */
    if (strcmp(file, "data.0") != 0 && sh->refused == 0) {
        print_error("no case of %s in %s was refused by gpubp_open\n", file, ds->label);
        fail();
    }
}

static int trunc_fn(const dataset *ds, const char *file, uint64_t seed)
{
    (void)seed;
    return sweep_truncate(ds, file);
}

static int flip_fn(const dataset *ds, const char *file, uint64_t seed)
{
    return sweep_flip(ds, file, seed);
}

/* the intact copies read back like the originals (the baseline of the cut sweep) */
static void test_baseline(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) {
        recs a = {0}, b = {0};
        long sa = read_all(sets[i].path, &a);
        const char *copy = ts_path("baseline.bp");
        assert_int_equal(ts_copy_dataset(sets[i].path, copy), 0);
        long sb = read_all(copy, &b);
        assert_true(sa > 0);
        assert_int_equal(sa, sb);
        assert_true(a.n > 0);
        assert_int_equal(a.n, b.n);
        for (size_t k = 0; k < a.n; k++) {
            const rec *r = find(&b, a.r[k].key);
            assert_non_null(r);
            assert_true(r->hash == a.r[k].hash);
        }
        free(a.r);
        free(b.r);
    }
}

static void test_truncate_md_idx(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(trunc_fn, &sets[i], "md.idx", 0);
}

static void test_truncate_md_0(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(trunc_fn, &sets[i], "md.0", 0);
}

static void test_truncate_data_0(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(trunc_fn, &sets[i], "data.0", 0);
}

static void test_flip_md_idx(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(flip_fn, &sets[i], "md.idx", 100 + i);
}

static void test_flip_md_0(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(flip_fn, &sets[i], "md.0", 200 + i);
}

static void test_flip_data_0(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) run_isolated(flip_fn, &sets[i], "data.0", 300 + i);
}

/* A damaged file's error names the file (and says where). */
static void test_error_names_file(void **state)
{
    (void)state;
    for (size_t i = 0; i < nsets; i++) {
        const char *copy = ts_path("named.bp");
        assert_int_equal(ts_copy_dataset(sets[i].path, copy), 0);
        /* md.idx pointing past the end of md.0: cut md.0 to its header */
        size_t len = 0;
        unsigned char *md = ts_read_file(ts_join(copy, "md.0"), &len);
        assert_non_null(md);
        assert_int_equal(ts_write_file(ts_join(copy, "md.0"), md, 64), 0);
        free(md);
        gpubp_file *f = NULL;
        int rc = gpubp_open(&f, copy, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
        if (rc == GPUBP_OK) {
            size_t ns = 99;
            TS_OK(gpubp_steps(f, &ns)); /* a reader may see no complete step yet */
            assert_int_equal(ns, 0);
            gpubp_close(f);
            continue;
        }
        assert_int_equal(rc, GPUBP_ERR_FORMAT);
        if (!strstr(gpubp_last_error(), "md.0") && !strstr(gpubp_last_error(), "md.idx"))
            print_error("message does not name the file: %s\n", gpubp_last_error());
        assert_true(strstr(gpubp_last_error(), "md.0") || strstr(gpubp_last_error(), "md.idx"));
        assert_null(f);
    }
}

/* The names of files the sweeps touch, to keep -Wunused quiet if one is dropped. */
static void test_files_exist(void **state)
{
    (void)state;
    assert_true(nsets >= 7);
    for (size_t i = 0; i < nsets; i++)
        for (size_t k = 0; k < 3; k++) assert_true(ts_exists(ts_join(sets[i].path, files[k])));
}

int main(void)
{
    find_datasets();
    ts_tmpdir(); /* created once, before the children run */
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files_exist),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_error_names_file),
        cmocka_unit_test(test_truncate_md_idx),
        cmocka_unit_test(test_truncate_md_0),
        cmocka_unit_test(test_truncate_data_0),
        cmocka_unit_test(test_flip_md_idx),
        cmocka_unit_test(test_flip_md_0),
        cmocka_unit_test(test_flip_data_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
