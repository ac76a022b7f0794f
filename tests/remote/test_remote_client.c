/* The client against a hostile server: a fake server (a thread on a loopback port) answers with
 * malformed replies — bad magic, lengths over the caps or over what was asked, wrong ids and
 * types,
 * inconsistent OPEN bodies, a reply cut in the middle, silence. The client must return
 * GPUBP_ERR_FORMAT or GPUBP_ERR_IO (never crash, never hang past its I/O timeout), and a
 * connection that broke the protocol must fail every later call at once. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "remote/proto.h"
#include "remote/remote.h"
#include "remote/remote_util.h"
#include "support/test_support.h"

enum {
    /* the open fails */
    S_BAD_MAGIC, S_HUGE_LEN, S_WRONG_ID, S_WRONG_TYPE, S_BAD_MAX_READ, S_IDX_OVERRUN,
    S_UNKNOWN_FLAG, S_MD0_WITHOUT_IDX, S_ERROR_SHORT, S_HALF_HEADER,
    /* the open succeeds, the first read fails */
    S_PREAD_TOO_LONG, S_PREAD_CUT, S_SILENT, S_COUNT
};

static int g_lfd = -1, g_port;

static int read_frame(int fd, gbpr_header *h, uint8_t *body, size_t cap)
{
    uint8_t hb[GBPR_HEADER_SIZE];
    size_t got = 0;
    while (got < sizeof hb) {
        ssize_t k = recv(fd, hb + got, sizeof hb - got, 0);
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    if (gbpr_get_header(hb, h) || h->len > cap) return -1;
    for (got = 0; got < h->len;) {
        ssize_t k = recv(fd, body + got, h->len - got, 0);
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    return 0;
}

static void put(int fd, const void *p, size_t n)
{
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    (void)k;
}

static void frame(int fd, uint16_t type, uint32_t id, uint32_t len, const void *body, size_t bn)
{
    uint8_t h[GBPR_HEADER_SIZE];
    gbpr_put_header(h, type, id, len);
    put(fd, h, sizeof h);
    if (bn) put(fd, body, bn);
}

static void good_hello(int fd, uint32_t id)
{
    uint8_t b[8];
    gbpr_st32(b, GBPR_VERSION);
    gbpr_st32(b + 4, GBPR_MAX_READ);
    frame(fd, GBPR_HELLO | GBPR_REPLY, id, 8, b, 8);
}

static void good_open(int fd, uint32_t id)
{
    uint8_t b[12];
    gbpr_st32(b, 0);
    gbpr_st64(b + 4, 0);
    frame(fd, GBPR_OPEN | GBPR_REPLY, id, 12, b, 12);
}

/* One scenario per connection, in order. */
static void *fake_server(void *arg)
{
    (void)arg;
    uint8_t body[GBPR_MAX_REQUEST];
    for (int s = 0; s < S_COUNT; s++) {
        int fd = accept(g_lfd, NULL, NULL);
        if (fd < 0) return NULL;
        gbpr_header h;
        if (read_frame(fd, &h, body, sizeof body)) {
            close(fd);
            continue;
        }
        uint8_t b[64];
        memset(b, 0, sizeof b);
        switch (s) {
        case S_BAD_MAGIC:
            gbpr_put_header(b, GBPR_HELLO | GBPR_REPLY, h.id, 8);
            b[0] = 'X';
            put(fd, b, GBPR_HEADER_SIZE + 8);
            break;
        case S_HUGE_LEN: frame(fd, GBPR_HELLO | GBPR_REPLY, h.id, 0xffffffffu, NULL, 0); break;
        case S_WRONG_ID: good_hello(fd, h.id + 5); break;
        case S_WRONG_TYPE: frame(fd, GBPR_OPEN | GBPR_REPLY, h.id, 0, NULL, 0); break;
        case S_BAD_MAX_READ:
            gbpr_st32(b, GBPR_VERSION);
            gbpr_st32(b + 4, 0xffffffffu);
            frame(fd, GBPR_HELLO | GBPR_REPLY, h.id, 8, b, 8);
            break;
        case S_ERROR_SHORT: frame(fd, GBPR_ERROR, h.id, 4, b, 4); break;
        case S_HALF_HEADER:
            gbpr_put_header(b, GBPR_HELLO | GBPR_REPLY, h.id, 8);
            put(fd, b, 7);
            break;
        default: /* the scenarios after HELLO */
            good_hello(fd, h.id);
            if (read_frame(fd, &h, body, sizeof body)) break;
            if (s == S_IDX_OVERRUN) {
                gbpr_st32(b, GBPR_OPEN_HAVE_IDX);
                gbpr_st32(b + 12, 1000); /* claims 1000 md.idx bytes, sends 4 */
                frame(fd, GBPR_OPEN | GBPR_REPLY, h.id, 20, b, 20);
                break;
            }
            if (s == S_UNKNOWN_FLAG) {
                gbpr_st32(b, 8);
                frame(fd, GBPR_OPEN | GBPR_REPLY, h.id, 12, b, 12);
                break;
            }
            if (s == S_MD0_WITHOUT_IDX) {
                gbpr_st32(b, GBPR_OPEN_HAVE_MD0);
                frame(fd, GBPR_OPEN | GBPR_REPLY, h.id, 16, b, 16);
                break;
            }
            good_open(fd, h.id);
            if (read_frame(fd, &h, body, sizeof body)) break; /* the client's PREAD */
            if (s == S_PREAD_TOO_LONG) {
                frame(fd, GBPR_PREAD | GBPR_REPLY, h.id, 64, b, 64); /* it asked for 16 */
            } else if (s == S_PREAD_CUT) {
                frame(fd, GBPR_PREAD | GBPR_REPLY, h.id, 16, b, 5);
            } else { /* S_SILENT: wait until the client gives up and closes */
                char c;
                ssize_t k = recv(fd, &c, 1, 0);
                (void)k;
            }
            break;
        }
        /* let the client read what was sent before the connection goes */
        shutdown(fd, SHUT_WR);
        char tmp[256];
        while (recv(fd, tmp, sizeof tmp, 0) > 0) {
        }
        close(fd);
    }
    return NULL;
}

static void test_hostile_server(void **state)
{
    (void)state;
    gbp_params p;
    assert_int_equal(gbp_params_parse(&p, "retries=0,connect_timeout=5"), GPUBP_OK);
    setenv("GPUBP_REMOTE_IO_TIMEOUT", "1", 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fake_server, NULL), 0);
    char url[128];
    snprintf(url, sizeof url, "gpubp://127.0.0.1:%d/x.bp", g_port);
    for (int s = 0; s < S_COUNT; s++) {
        gbp_remote *r = NULL;
        double t0 = ru_now();
        int rc = gbp_remote_open(&r, url, &p);
        if (s < S_PREAD_TOO_LONG) {
            if (rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_IO)
                print_error("scenario %d: open -> %d (%s)\n", s, rc, gbp_error_message());
            assert_true(rc == GPUBP_ERR_FORMAT || rc == GPUBP_ERR_IO);
            assert_null(r);
            if (s != S_HALF_HEADER) assert_int_equal(rc, GPUBP_ERR_FORMAT);
        } else {
            if (rc) print_error("scenario %d: open -> %d (%s)\n", s, rc, gbp_error_message());
            assert_int_equal(rc, GPUBP_OK);
            uint8_t buf[16];
            rc = gbp_remote_pread(r, "data.0", buf, sizeof buf, 0);
            print_message("scenario %d: %s\n", s, gbp_error_message());
            assert_int_equal(rc, s == S_PREAD_TOO_LONG ? GPUBP_ERR_FORMAT : GPUBP_ERR_IO);
            uint64_t sz;
            double t1 = ru_now();
            assert_int_equal(gbp_remote_size(r, "md.0", &sz), GPUBP_ERR_IO); /* broken */
            assert_true(ru_now() - t1 < 0.5);
            gbp_remote_close(r);
        }
        assert_true(ru_now() - t0 < 10);
    }
    pthread_join(th, NULL);
    unsetenv("GPUBP_REMOTE_IO_TIMEOUT");
}

int main(void)
{
    g_lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (g_lfd < 0 || bind(g_lfd, (struct sockaddr *)&a, sizeof a) || listen(g_lfd, 16) ||
        getsockname(g_lfd, (struct sockaddr *)&a, &l)) {
        perror("fake server");
        return 1;
    }
    g_port = ntohs(a.sin_port);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hostile_server)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    close(g_lfd);
    return rc;
}
