/* Transport-level tests of remote reads against the fixture server (gpubp-serve started by the
 * ctest fixture on a free loopback port, root tests/golden, with a token):
 * every golden dataset file read remotely is byte for byte the local file; open errors (missing,
 * not a dataset, path traversal, wrong or missing token); short reads; 8 concurrent clients;
 * malformed and truncated messages (specific cases and a bounded fuzz loop) never crash the
 * server and close only their own connection. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/proto.h"
#include "remote/remote.h"
#include "remote/remote_util.h"
#include "support/test_support.h"

static int g_port = -1;

/* ---- the golden datasets ------------------------------------------------------------------- */

typedef struct dataset {
    char rel[512];      /* relative to the server's root */
    char local[4700];
    char files[16][16]; /* md.idx, md.0, mmd.0 (BP5), data.N */
    int nfiles;
} dataset;

static dataset g_sets[64];
static int g_nsets;

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

static void scan(const char *sub)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/%s", ts_golden_dir(), sub);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && g_nsets < 64) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".bp")) continue;
        dataset *s = &g_sets[g_nsets];
        memset(s, 0, sizeof *s);
        snprintf(s->rel, sizeof s->rel, "%s/%s", sub, e->d_name);
        snprintf(s->local, sizeof s->local, "%s/%s", dir, e->d_name);
        if (!ts_exists(ts_join(s->local, "md.idx"))) continue;
        DIR *dd = opendir(s->local);
        struct dirent *f;
        while (dd && (f = readdir(dd)) && s->nfiles < 16)
            if (gbpr_dataset_name_ok(f->d_name, strlen(f->d_name)))
                memcpy(s->files[s->nfiles++], f->d_name, strlen(f->d_name) + 1); /* <= 12 */
        if (dd) closedir(dd);
        qsort(s->files, (size_t)s->nfiles, sizeof s->files[0], cmp_str);
        g_nsets++;
    }
    closedir(d);
}

/* Reads every file of a dataset remotely (read_file, size, whole pread, a few sub-ranges) and
 * compares with the local bytes. Returns the number of differences; messages on stderr. */
static int check_dataset(gbp_remote *r, const dataset *s)
{
    int bad = 0;
    for (int i = 0; i < s->nfiles; i++) {
        const char *name = s->files[i];
        size_t llen = 0;
        char lp[4800]; /* not ts_join: its static buffers are shared by the client threads */
        snprintf(lp, sizeof lp, "%s/%s", s->local, name);
        unsigned char *loc = ts_read_file(lp, &llen);
        if (!loc) return 1;
        uint8_t *rem = NULL;
        size_t rlen = 0;
        int rc = gbp_remote_read_file(r, name, &rem, &rlen);
        if (rc || rlen != llen || (llen && memcmp(rem, loc, llen))) {
            fprintf(stderr, "%s/%s: read_file rc %d (%s), %zu vs %zu bytes\n", s->rel, name, rc,
                    gbp_error_message(), rlen, llen);
            bad++;
        }
        gbp_free(rem);
        uint64_t sz = 0;
        rc = gbp_remote_size(r, name, &sz);
        if (rc || sz != llen) {
            fprintf(stderr, "%s/%s: size rc %d, %llu vs %zu\n", s->rel, name, rc,
                    (unsigned long long)sz, llen);
            bad++;
        }
        uint8_t *buf = malloc(llen + 1);
        rc = gbp_remote_pread(r, name, buf, llen, 0);
        if (rc || (llen && memcmp(buf, loc, llen))) {
            fprintf(stderr, "%s/%s: pread rc %d (%s)\n", s->rel, name, rc, gbp_error_message());
            bad++;
        }
        size_t offs[] = {0, 1, 63, 64, llen / 3, llen / 2, llen - 1};
        for (size_t k = 0; k < sizeof offs / sizeof offs[0] && llen > 1; k++) {
            size_t o = offs[k], n = (llen - o) / 2 + 1;
            memset(buf, 0xee, n);
            rc = gbp_remote_pread(r, name, buf, n, o);
            if (rc || memcmp(buf, loc + o, n)) {
                fprintf(stderr, "%s/%s: pread(%zu, %zu) rc %d\n", s->rel, name, n, o, rc);
                bad++;
            }
        }
        free(buf);
        free(loc);
    }
    return bad;
}

static void test_golden_bytes(void **state)
{
    (void)state;
    assert_true(g_nsets >= 6 + 6 + 6);
    for (int i = 0; i < g_nsets; i++) {
        gbp_remote *r = NULL;
        int rc = gbp_remote_open(&r, ru_url(g_port, g_sets[i].rel), NULL);
        if (rc) print_error("open %s: %s\n", g_sets[i].rel, gbp_error_message());
        assert_int_equal(rc, GPUBP_OK);
        assert_int_equal(check_dataset(r, &g_sets[i]), 0);
        gbp_remote_close(r);
    }
}

/* ---- errors -------------------------------------------------------------------------------- */

static void expect_open_error(const char *rel, int status, const char *needle)
{
    gbp_remote *r = (gbp_remote *)1;
    double t0 = ru_now();
    int rc = gbp_remote_open(&r, ru_url(g_port, rel), NULL);
    if (rc != status) print_error("open %s -> %d (%s)\n", rel, rc, gbp_error_message());
    assert_int_equal(rc, status);
    assert_null(r);
    assert_true(ru_now() - t0 < 5); /* refused at once, not retried */
    if (needle && !strstr(gbp_error_message(), needle))
        print_error("message of %s: '%s' lacks '%s'\n", rel, gbp_error_message(), needle);
    if (needle) assert_non_null(strstr(gbp_error_message(), needle));
}

static void test_open_errors(void **state)
{
    (void)state;
    expect_open_error("BP4/nosuch.bp", GPUBP_ERR_NOT_FOUND, "nosuch.bp");
    expect_open_error("BP4", GPUBP_ERR_NOT_BP4, "not a BP4 dataset");
    expect_open_error("BP4/types.bp.d.txt", GPUBP_ERR_NOT_BP4, "not a directory");
    expect_open_error("BP4/../BP4/types.bp", GPUBP_ERR_IO, "..");
    expect_open_error("../adios2/BP4/types.bp", GPUBP_ERR_IO, "..");
    expect_open_error("..", GPUBP_ERR_IO, "..");
    expect_open_error("/etc", GPUBP_ERR_IO, "absolute");
    expect_open_error("/BP4/types.bp", GPUBP_ERR_IO, "absolute"); /* gpubp://h:p//BP4/... */
    assert_int_equal(gbp_error_native(), EACCES);
}

static void test_bad_urls(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "gpubp://", "gpubp://127.0.0.1", "gpubp://127.0.0.1:/x.bp", "gpubp://127.0.0.1:0/x.bp",
        "gpubp://127.0.0.1:70000/x.bp", "gpubp://127.0.0.1:80", "gpubp://127.0.0.1:80/",
        "gpubp://[::1/x.bp", "gpubp://:80/x.bp", "file://x.bp", "gpubp:/x.bp"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gbp_remote *r = NULL;
        int rc = gbp_remote_open(&r, bad[i], NULL);
        if (rc != GPUBP_ERR_INVALID_ARG) print_error("%s -> %d\n", bad[i], rc);
        assert_int_equal(rc, GPUBP_ERR_INVALID_ARG);
        assert_null(r);
    }
    assert_true(gbp_is_remote_url("gpubp://h:1/x.bp"));
    assert_false(gbp_is_remote_url("/data/x.bp"));
    assert_false(gbp_is_remote_url(NULL));
}

static void test_token(void **state)
{
    (void)state;
    char saved[GBPR_MAX_TOKEN + 1];
    snprintf(saved, sizeof saved, "%s", ru_token());
    assert_true(saved[0] != '\0'); /* the fixture has a token */
    setenv("GPUBP_TOKEN", "wrong-token", 1);
    expect_open_error("BP4/types.bp", GPUBP_ERR_IO, "token");
    assert_int_equal(gbp_error_native(), EACCES);
    unsetenv("GPUBP_TOKEN");
    expect_open_error("BP4/types.bp", GPUBP_ERR_IO, "token");
    /* the token from a file (GPUBP_TOKEN_FILE), first line only */
    const char *tf = ts_path("token.txt");
    char text[GBPR_MAX_TOKEN + 32];
    snprintf(text, sizeof text, "%s\nsecond line\n", saved);
    assert_int_equal(ts_write_file(tf, text, strlen(text)), 0);
    setenv("GPUBP_TOKEN_FILE", tf, 1);
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(g_port, "BP4/types.bp"), NULL));
    gbp_remote_close(r);
    unsetenv("GPUBP_TOKEN_FILE");
    setenv("GPUBP_TOKEN", saved, 1);
}

static void test_file_errors(void **state)
{
    (void)state;
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(g_port, "BP4/types.bp"), NULL));
    uint8_t buf[256], *d = NULL;
    size_t n = 0;
    uint64_t sz;
    assert_int_equal(gbp_remote_size(r, "data.7", &sz), GPUBP_ERR_NOT_FOUND);
    assert_int_equal(gbp_remote_read_file(r, "data.7", &d, &n), GPUBP_ERR_NOT_FOUND);
    assert_int_equal(gbp_remote_pread(r, "data.7", buf, 10, 0), GPUBP_ERR_NOT_FOUND);
    /* mmd.0 is a dataset file name (BP5); a BP4 dataset has none */
    assert_int_equal(gbp_remote_size(r, "mmd.0", &sz), GPUBP_ERR_NOT_FOUND);
    static const char *const names[] = {"../md.idx", "md.1", "data.", "data.01", "data.-1",
                                        "profiling.json", "mmd.1", "", "md.idx/", "data.12345678"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_int_equal(gbp_remote_size(r, names[i], &sz), GPUBP_ERR_INVALID_ARG);
    /* past the end: GPUBP_ERR_FORMAT, and the connection stays usable */
    TS_OK(gbp_remote_size(r, "data.0", &sz));
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 100, sz - 50), GPUBP_ERR_FORMAT);
    assert_non_null(strstr(gbp_error_message(), "past its end"));
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 1, sz), GPUBP_ERR_FORMAT);
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 1, UINT64_MAX - 1), GPUBP_ERR_FORMAT);
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 100, UINT64_MAX - 10), GPUBP_ERR_FORMAT);
    TS_ERR(gbp_remote_pread(r, "data.0", buf, 100, (uint64_t)INT64_MAX - 10), GPUBP_ERR_FORMAT);
    TS_OK(gbp_remote_pread(r, "data.0", buf, 0, sz + 100)); /* nothing to read */
    TS_OK(gbp_remote_pread(r, "data.0", buf, 50, sz - 50));
    /* read_file of md.idx twice: the copy from OPEN, then a fresh read */
    for (int k = 0; k < 2; k++) {
        TS_OK(gbp_remote_read_file(r, "md.idx", &d, &n));
        assert_int_equal(n, 128);
        gbp_free(d);
    }
    gbp_remote_close(r);
    gbp_remote_close(NULL);
}

/* ---- concurrency ------------------------------------------------------------------------- */

static void *client_main(void *arg)
{
    long *bad = arg;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < g_nsets; i++) {
            gbp_remote *r = NULL;
            if (gbp_remote_open(&r, ru_url(g_port, g_sets[i].rel), NULL)) {
                fprintf(stderr, "concurrent open: %s\n", gbp_error_message());
                (*bad)++;
                continue;
            }
            *bad += check_dataset(r, &g_sets[i]);
            gbp_remote_close(r);
        }
    return NULL;
}

static void test_concurrent_clients(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t th[N];
    long bad[N] = {0};
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, client_main, &bad[i]), 0);
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) assert_int_equal(bad[i], 0);
    /* and 8 connections open at the same time, all served */
    gbp_remote *r[N];
    for (int i = 0; i < N; i++)
        TS_OK(gbp_remote_open(&r[i], ru_url(g_port, "BP4/steps_2d.bp"), NULL));
    for (int i = N - 1; i >= 0; i--) {
        uint64_t sz;
        TS_OK(gbp_remote_size(r[i], "md.0", &sz));
        assert_int_equal(sz, 2288);
    }
    for (int i = 0; i < N; i++) gbp_remote_close(r[i]);
}

/* ---- malformed messages ------------------------------------------------------------------- */

/* Sends raw bytes on a fresh connection, half-closes, and drains whatever comes back (bounded by
 * the 10 s receive timeout of ru_connect). Returns the type of the first reply, or 0. */
static uint16_t raw_exchange(const void *bytes, size_t n, int hello_first)
{
    int fd = ru_connect(g_port);
    assert_true(fd >= 0);
    uint16_t t = 0, first = 0;
    uint32_t id, len;
    uint8_t body[GBPR_MAX_MESSAGE + 64];
    if (hello_first) {
        uint8_t hb[8 + GBPR_MAX_TOKEN];
        assert_int_equal(ru_send_frame(fd, GBPR_HELLO, 1, hb, ru_hello_body(hb, ru_token())), 0);
        assert_int_equal(ru_recv_frame(fd, &t, &id, body, sizeof body, &len), 0);
        assert_int_equal(t, GBPR_HELLO | GBPR_REPLY);
    }
    if (n) {
        ssize_t k = send(fd, bytes, n, MSG_NOSIGNAL);
        (void)k;
    }
    shutdown(fd, SHUT_WR);
    for (int i = 0; i < 64 && ru_recv_frame(fd, &t, &id, body, sizeof body, &len) == 0; i++)
        if (!first) first = t;
    close(fd);
    return first;
}

static size_t frame(uint8_t *out, uint16_t type, uint32_t id, uint32_t len, const void *body,
                    size_t bn)
{
    gbpr_put_header(out, type, id, len);
    if (bn) memcpy(out + GBPR_HEADER_SIZE, body, bn);
    return GBPR_HEADER_SIZE + bn;
}

static void test_malformed_cases(void **state)
{
    (void)state;
    uint8_t m[256], b[128];
    size_t n;
    /* bad magic */
    n = frame(m, GBPR_STATUS, 1, 0, NULL, 0);
    m[0] ^= 0xff;
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* flags not zero */
    n = frame(m, GBPR_STATUS, 1, 0, NULL, 0);
    m[6] = 1;
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* a length over the cap: refused before any allocation */
    n = frame(m, GBPR_OPEN, 1, 0xffffffffu, NULL, 0);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    n = frame(m, GBPR_OPEN, 1, GBPR_MAX_REQUEST + 1, NULL, 0);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* a request before HELLO */
    n = frame(m, GBPR_STATUS, 1, 0, NULL, 0);
    assert_int_equal(raw_exchange(m, n, 0), GBPR_ERROR);
    /* unknown type */
    n = frame(m, 99, 1, 0, NULL, 0);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* a string length that runs past the body */
    gbpr_st32(b, 1000);
    memcpy(b + 4, "BP4/types.bp", 12);
    n = frame(m, GBPR_OPEN, 1, 16, b, 16);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* trailing bytes after the string */
    gbpr_st32(b, 4);
    memcpy(b + 4, "md.0xx", 6);
    n = frame(m, GBPR_SIZE, 1, 10, b, 10);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* PREAD longer than max_read */
    gbpr_st64(b, 0);
    gbpr_st32(b + 8, GBPR_MAX_READ + 1);
    gbpr_st32(b + 12, 4);
    memcpy(b + 16, "md.0", 4);
    n = frame(m, GBPR_PREAD, 1, 20, b, 20);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* a second HELLO */
    size_t hl = ru_hello_body(b, ru_token());
    n = frame(m, GBPR_HELLO, 1, (uint32_t)hl, b, hl);
    assert_int_equal(raw_exchange(m, n, 1), GBPR_ERROR);
    /* HELLO with version 0 */
    ru_hello_body(b, ru_token());
    gbpr_st32(b, 0);
    n = frame(m, GBPR_HELLO, 1, 8 + (uint32_t)strlen(ru_token()), b, 8 + strlen(ru_token()));
    assert_int_equal(raw_exchange(m, n, 0), GBPR_ERROR);
    /* a file request with no dataset open: an error, the connection stays */
    gbpr_st32(b, 4);
    memcpy(b + 4, "md.0", 4);
    n = frame(m, GBPR_SIZE, 1, 8, b, 8);
    n += frame(m + n, GBPR_STATUS, 2, 0, NULL, 0);
    int fd = ru_connect(g_port);
    uint8_t hb[8 + GBPR_MAX_TOKEN], rb[GBPR_MAX_MESSAGE + 64];
    uint16_t t;
    uint32_t id, len;
    assert_int_equal(ru_send_frame(fd, GBPR_HELLO, 1, hb, ru_hello_body(hb, ru_token())), 0);
    assert_int_equal(ru_recv_frame(fd, &t, &id, rb, sizeof rb, &len), 0);
    assert_int_equal(send(fd, m, n, MSG_NOSIGNAL), (ssize_t)n);
    assert_int_equal(ru_recv_frame(fd, &t, &id, rb, sizeof rb, &len), 0);
    assert_int_equal(t, GBPR_ERROR);
    assert_int_equal(gbpr_ld32(rb), GBPR_E_NO_DATASET);
    assert_int_equal(ru_recv_frame(fd, &t, &id, rb, sizeof rb - 1, &len), 0);
    assert_int_equal(t, GBPR_STATUS | GBPR_REPLY);
    assert_int_equal(id, 2);
    rb[len] = '\0';
    assert_non_null(strstr((char *)rb, "protocol=1"));
    /* a served-file name that is not a dataset file: refused by the server too */
    gbpr_st32(b, 12);
    memcpy(b + 4, "BP4/types.bp", 12);
    assert_int_equal(ru_send_frame(fd, GBPR_OPEN, 3, b, 16), 0);
    assert_int_equal(ru_recv_frame(fd, &t, &id, rb, sizeof rb, &len), 0);
    assert_int_equal(t, GBPR_OPEN | GBPR_REPLY);
    static const char *const names[] = {"../../BP5/types.bp/md.0", "profiling.json", "md.idx\n",
                                        "data.01", "/etc/passwd", "mmd.1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t nl = strlen(names[i]);
        gbpr_st32(b, (uint32_t)nl);
        memcpy(b + 4, names[i], nl);
        assert_int_equal(ru_send_frame(fd, GBPR_READ_FILE, 10 + (uint32_t)i, b, 4 + nl), 0);
        assert_int_equal(ru_recv_frame(fd, &t, &id, rb, sizeof rb, &len), 0);
        assert_int_equal(t, GBPR_ERROR);
        assert_int_equal(gbpr_ld32(rb), GBPR_E_FORBIDDEN);
    }
    close(fd);
    /* truncated messages: a header cut short, a body cut short */
    n = frame(m, GBPR_STATUS, 1, 0, NULL, 0);
    raw_exchange(m, 7, 1);
    n = frame(m, GBPR_OPEN, 1, 100, b, 20);
    raw_exchange(m, n, 1);
    raw_exchange(m, 3, 0);
    assert_true(ru_server_alive(g_port));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* A random request: a valid one with bytes flipped, a wrong length, random bytes, or cut. */
static size_t fuzz_message(uint8_t *m, size_t cap)
{
    static const char *const paths[] = {"BP4/types.bp", "BP4/../..", "..", "BP4/local.bp/md.0",
                                        "", "BP5/local.bp", "gpu/BP4/StepsWriteReadCuPy.bp"};
    static const char *const names[] = {"md.idx", "md.0", "data.0", "data.9", "..", "md.idx\0x"};
    uint8_t b[512];
    size_t bn = 0;
    uint16_t type = (uint16_t)(1 + rnd() % 8);
    switch (type) {
    case GBPR_OPEN: {
        const char *p = paths[rnd() % 7];
        bn = 4 + strlen(p);
        gbpr_st32(b, (uint32_t)strlen(p));
        memcpy(b + 4, p, strlen(p));
        break;
    }
    case GBPR_READ_FILE:
    case GBPR_SIZE:
    case GBPR_PREAD: {
        size_t o = 0;
        if (type == GBPR_PREAD) {
            gbpr_st64(b, rnd() % 4 ? rnd() % 5000 : ((uint64_t)rnd() << 32 | rnd()));
            gbpr_st32(b + 8, rnd() % 4 ? rnd() % 70000 : rnd());
            o = 12;
        }
        const char *nm = names[rnd() % 6];
        size_t nl = strlen(nm) + (rnd() % 3 == 0);
        gbpr_st32(b + o, (uint32_t)nl);
        memcpy(b + o + 4, nm, nl);
        bn = o + 4 + nl;
        break;
    }
    case GBPR_HELLO:
        bn = ru_hello_body(b, ru_token());
        break;
    default:
        bn = rnd() % 3 ? 0 : rnd() % 40;
        for (size_t i = 0; i < bn; i++) b[i] = (uint8_t)rnd();
    }
    uint32_t len = (uint32_t)bn;
    int how = (int)(rnd() % 8);
    if (how == 0) len = rnd();                       /* a lying length */
    if (how == 1) len = (uint32_t)(bn + rnd() % 16); /* a body cut short */
    if (how == 2 && bn) len = (uint32_t)(bn - 1 - rnd() % bn);
    size_t n = frame(m, type, rnd(), len, b, bn);
    if (how == 3) { /* flip a few bytes anywhere */
        for (int k = 0; k < 1 + (int)(rnd() % 4); k++) m[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
    }
    if (how == 4) n = rnd() % n; /* cut anywhere */
    if (how == 5) {              /* pure noise */
        n = 1 + rnd() % 64;
        for (size_t i = 0; i < n; i++) m[i] = (uint8_t)rnd();
    }
    if (how == 6 && n + GBPR_HEADER_SIZE <= cap) /* two messages in one send */
        n += frame(m + n, GBPR_STATUS, 7, 0, NULL, 0);
    return n;
}

static void test_fuzz_loop(void **state)
{
    (void)state;
    double t0 = ru_now();
    int iters = 0;
    uint8_t m[1024];
    /* bounded: 5000 messages or 30 s, whichever comes first */
    for (; iters < 5000 && ru_now() - t0 < 30; iters++) {
        size_t n = fuzz_message(m, sizeof m);
        raw_exchange(m, n, (int)(rnd() % 4 != 0));
        if (iters % 100 == 99 && !ru_server_alive(g_port)) {
            print_error("the server stopped answering after message %d\n", iters);
            fail();
        }
    }
    print_message("fuzz: %d messages in %.1f s\n", iters, ru_now() - t0);
    assert_true(iters >= 100);
    assert_true(ru_server_alive(g_port));
    /* and a real client still reads correctly */
    gbp_remote *r = NULL;
    TS_OK(gbp_remote_open(&r, ru_url(g_port, g_sets[0].rel), NULL));
    assert_int_equal(check_dataset(r, &g_sets[0]), 0);
    gbp_remote_close(r);
}

int main(void)
{
    g_port = ru_fixture_port();
    if (g_port <= 0) {
        fprintf(stderr, "no fixture server (GPUBP_REMOTE_PORT_FILE)\n");
        return 1;
    }
    scan("BP4");
    scan("gpu/BP4");
    scan("compressed");
    scan("BP5");     /* BP5: mmd.0 too */
    scan("bp5/mpi"); /* several sub-files */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_bytes),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_bad_urls),
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_concurrent_clients),
        cmocka_unit_test(test_malformed_cases),
        cmocka_unit_test(test_fuzz_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
