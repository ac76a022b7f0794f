/* The remote client: URL parsing, connecting with retries, the request/reply exchange and the
 * pipelined pread. Outline:
 *   open:  parse the URL; then up to 1 + retries attempts of (connect, HELLO, OPEN), pausing with
 *          a doubling delay after a refused/reset/timed-out attempt; OPEN's reply carries md.idx,
 *          kept for the first read_file("md.idx").
 *   pread: the range is cut into chunks; up to GBP_REMOTE_WINDOW PREAD requests are in flight;
 *          replies come back in order and their bytes are received straight into the caller's
 *          buffer. An ERROR or short reply is remembered and the remaining replies are drained,
 *          so the connection stays in step for the next call.
 * Any reply that breaks the protocol, and any socket error, marks the connection broken: it is
 * closed and every later call fails at once (no hang, no resynchronisation guesswork). */
#include "remote/remote.h"
#include "remote/proto.h"
#include "remote/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define GBP_REMOTE_DEFAULT_PORT "7390"
#define GBP_REMOTE_CHUNK ((size_t)4 << 20)       /* bytes per PREAD request */
#define GBP_REMOTE_WINDOW 8                      /* PREAD requests in flight */
#define GBP_REMOTE_IO_TIMEOUT 60.0               /* seconds a send or receive may block */
#define GBP_REMOTE_MAX_FILE ((uint64_t)1 << 30)  /* read_file refuses larger files */
#define GBP_REMOTE_MAX_DELAY 1.0                 /* cap of the doubling retry pause */

struct gbp_remote {
    int fd;
    int broken;
    char *url;          /* gpubp://host:port/path, for messages */
    char *host;
    char port[8];
    char *path;         /* relative to the server's root */
    uint32_t next_id;
    size_t chunk;
    uint8_t *idx;       /* md.idx from the OPEN reply, for the first read_file("md.idx") */
    size_t idx_len;
    int have_idx;
    uint8_t *md0;       /* md.0 from 0 to the end of the steps md.idx listed at OPEN */
    size_t md0_len;
    double io_timeout;
    int verbose;
    pthread_mutex_t lock;
};

int gbp_is_remote_url(const char *path)
{
    return path && !strncmp(path, "gpubp://", 8);
}

const char *gbp_remote_url(const gbp_remote *r) { return r ? r->url : ""; }

/* ---- URL ------------------------------------------------------------------------------------ */

static int parse_url(gbp_remote *r, const char *url)
{
    const char *p = url + 8, *hs, *he;
    if (!gbp_is_remote_url(url))
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "'%s' is not a gpubp:// URL", url);
    if (*p == '[') {
        hs = p + 1;
        he = strchr(hs, ']');
        if (!he)
            return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "%s: unterminated '[' in the host", url);
        p = he + 1;
    } else {
        hs = p;
        while (*p && *p != ':' && *p != '/') p++;
        he = p;
    }
    if (he == hs) return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "%s: no host", url);
    const char *ps = NULL, *pe = NULL;
    if (*p == ':') {
        ps = ++p;
        while (*p >= '0' && *p <= '9') p++;
        pe = p;
        long port = pe > ps && pe - ps <= 5 ? strtol(ps, NULL, 10) : 0;
        if (port < 1 || port > 65535)
            return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "%s: the port is not in 1..65535", url);
    }
    if (*p != '/' || p[1] == '\0')
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0,
                         "%s: no dataset path (expected gpubp://HOST:PORT/PATH.bp)", url);
    if (strlen(p + 1) > GBPR_MAX_PATH)
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "%s: the path is longer than %u bytes", url,
                         GBPR_MAX_PATH);
    r->host = gbp_strndup(hs, (size_t)(he - hs));
    r->path = gbp_strdup(p + 1);
    r->url = gbp_strdup(url);
    if (!r->host || !r->path || !r->url) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    if (ps) {
        memcpy(r->port, ps, (size_t)(pe - ps));
        r->port[pe - ps] = '\0';
    } else {
        strcpy(r->port, GBP_REMOTE_DEFAULT_PORT);
    }
    return GPUBP_OK;
}

/* ---- sockets -------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void set_timeouts(int fd, double s)
{
    struct timeval tv = {(time_t)s, (suseconds_t)((s - (double)(time_t)s) * 1e6)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void mark_broken(gbp_remote *r)
{
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    r->broken = 1;
}

/* A socket failure: the connection is unusable from now on. */
static int lost(gbp_remote *r, int err, const char *what)
{
    mark_broken(r);
    if (err == EAGAIN || err == EWOULDBLOCK)
        return gbp_error(GPUBP_ERR_IO, ETIMEDOUT, "%s: no answer from the server for %g s (%s)",
                         r->url, r->io_timeout, what);
    if (err == 0)
        return gbp_error(GPUBP_ERR_IO, ECONNRESET, "%s: the server closed the connection (%s)",
                         r->url, what);
    return gbp_error(GPUBP_ERR_IO, err, "%s: connection lost (%s: %s)", r->url, what,
                     strerror(err));
}

static int send_iov(gbp_remote *r, struct iovec *iov, int n, const char *what)
{
    int e = gbp_wire_send_all(r->fd, iov, n);
    return e ? lost(r, e, what) : GPUBP_OK;
}

static int recv_all(gbp_remote *r, void *buf, size_t n, const char *what)
{
    int e = gbp_wire_recv_all(r->fd, buf, n, NULL);
    if (e == GBP_WIRE_EOF) return lost(r, 0, what);
    return e ? lost(r, e, what) : GPUBP_OK;
}

/* Reads and throws away n bytes (the rest of a reply that cannot be used). */
static int skip(gbp_remote *r, size_t n, const char *what)
{
    uint8_t tmp[4096];
    while (n > 0) {
        size_t k = n < sizeof tmp ? n : sizeof tmp;
        GBP_FORWARD_IF_ERROR(recv_all(r, tmp, k, what));
        n -= k;
    }
    return GPUBP_OK;
}

/* One connection attempt (connect within timeout_s, <= 0: the system's own limit).
 * *retry is set when the failure is one that a later attempt may not have. */
static int dial(gbp_remote *r, double timeout_s, int *retry)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(r->host, r->port, &hints, &res);
    if (g != 0) {
        *retry = g == EAI_AGAIN;
        return gbp_error(GPUBP_ERR_IO, 0, "%s: cannot resolve '%s': %s", r->url, r->host,
                         gai_strerror(g));
    }
    int err = ECONNREFUSED;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int ms = timeout_s > 0 ? (timeout_s > 2e6 ? 2000000000 : (int)(timeout_s * 1000)) : -1;
            int pr;
            do pr = poll(&pfd, 1, ms);
            while (pr < 0 && errno == EINTR);
            if (pr == 0) {
                errno = ETIMEDOUT;
            } else if (pr > 0) {
                int se = 0;
                socklen_t sl = sizeof se;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &se, &sl);
                rc = se ? -1 : 0;
                errno = se;
            }
        }
        if (rc == 0) {
            int fl = fcntl(fd, F_GETFL);
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            set_timeouts(fd, r->io_timeout);
            r->fd = fd;
            r->broken = 0;
            freeaddrinfo(res);
            return GPUBP_OK;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    *retry = err == ECONNREFUSED || err == ECONNRESET || err == ETIMEDOUT ||
             err == ECONNABORTED || err == EAGAIN || err == ENETUNREACH || err == EHOSTUNREACH;
    return gbp_error(GPUBP_ERR_IO, err, "%s: cannot connect to %s port %s: %s", r->url, r->host,
                     r->port, strerror(err));
}

/* ---- requests and replies ----------------------------------------------------------------- */

static int send_request(gbp_remote *r, uint16_t type, const void *body, size_t len, uint32_t *id,
                        const char *what)
{
    uint8_t h[GBPR_HEADER_SIZE];
    *id = r->next_id++;
    gbpr_put_header(h, type, *id, (uint32_t)len);
    struct iovec iov[2] = {{h, sizeof h}, {(void *)body, len}};
    return send_iov(r, iov, len ? 2 : 1, what);
}

/* Maps an ERROR reply (code, errno, message) to a status. */
static int server_error(gbp_remote *r, uint32_t code, int32_t native, const char *msg, size_t n,
                        const char *what)
{
    int m = n > 1000 ? 1000 : (int)n;
    switch (code) {
    case GBPR_E_NOT_FOUND:
        return gbp_error(GPUBP_ERR_NOT_FOUND, ENOENT, "%s: %s: %.*s", r->url, what, m, msg);
    case GBPR_E_NOT_BP4:
        return gbp_error(GPUBP_ERR_NOT_BP4, 0, "%s: %.*s", r->url, m, msg);
    case GBPR_E_BP5:
        return gbp_error(GPUBP_ERR_BP5, 0, "%s: %.*s", r->url, m, msg);
    case GBPR_E_AUTH:
        return gbp_error(GPUBP_ERR_IO, EACCES, "%s: the server refused the token: %.*s", r->url, m,
                         msg);
    case GBPR_E_FORBIDDEN:
        return gbp_error(GPUBP_ERR_IO, EACCES, "%s: the server refused %s: %.*s", r->url, what, m,
                         msg);
    case GBPR_E_BUSY:
        return gbp_error(GPUBP_ERR_IO, EBUSY, "%s: the server is busy: %.*s", r->url, m, msg);
    case GBPR_E_IO:
        return gbp_error(GPUBP_ERR_IO, native, "%s: %s failed on the server: %.*s", r->url, what, m,
                         msg);
    case GBPR_E_VERSION:
        return gbp_error(GPUBP_ERR_IO, EPROTO, "%s: protocol version not supported by the "
                         "server: %.*s", r->url, m, msg);
    default:
        return gbp_error(GPUBP_ERR_FORMAT, EPROTO, "%s: %s: server error %u: %.*s", r->url, what,
                         (unsigned)code, m, msg);
    }
}

/* A reply that breaks the protocol: the connection cannot be trusted any more. */
static int bad_reply(gbp_remote *r, const char *what, const char *why)
{
    mark_broken(r);
    return gbp_error(GPUBP_ERR_FORMAT, EPROTO, "%s: malformed reply to %s (%s)", r->url, what, why);
}

/* Receives the header of the reply to request `id` of `type`. For a success reply, *len gets
 * the body length (not yet read, at most cap) and GPUBP_OK is returned. An ERROR reply is read
 * whole and returned as its status (the connection stays usable). */
static int recv_reply(gbp_remote *r, uint16_t type, uint32_t id, uint32_t cap, uint32_t *len,
                      const char *what)
{
    uint8_t hb[GBPR_HEADER_SIZE];
    gbpr_header h;
    GBP_FORWARD_IF_ERROR(recv_all(r, hb, sizeof hb, what));
    if (gbpr_get_header(hb, &h) != 0) return bad_reply(r, what, "bad magic or flags");
    /* an ERROR with id 0 is about the connection (a busy server says so before any request) */
    if (h.id != id && !(h.type == GBPR_ERROR && h.id == 0))
        return bad_reply(r, what, "reply to another request");
    if (h.type == GBPR_ERROR) {
        if (h.len < 12 || h.len > 12 + GBPR_MAX_MESSAGE) return bad_reply(r, what, "error length");
        uint8_t eb[12 + GBPR_MAX_MESSAGE];
        GBP_FORWARD_IF_ERROR(recv_all(r, eb, h.len, what));
        gbpr_cursor c = {eb, h.len, 0};
        uint32_t code = gbpr_take32(&c);
        int32_t native = (int32_t)gbpr_take32(&c);
        const char *msg = NULL;
        size_t mlen = 0;
        if (gbpr_take_str(&c, GBPR_MAX_MESSAGE, &msg, &mlen) || c.left != 0)
            return bad_reply(r, what, "error body");
        return server_error(r, code, native, msg, mlen, what);
    }
    if (h.type != (uint16_t)(type | GBPR_REPLY)) return bad_reply(r, what, "unexpected type");
    if (h.len > cap) return bad_reply(r, what, "body too long");
    *len = h.len;
    return GPUBP_OK;
}

/* A request with a small body and a small reply (<= cap bytes, received into out). */
static int call(gbp_remote *r, uint16_t type, const void *body, size_t blen, uint8_t *out,
                uint32_t cap, uint32_t *olen, const char *what)
{
    uint32_t id;
    GBP_FORWARD_IF_ERROR(send_request(r, type, body, blen, &id, what));
    GBP_FORWARD_IF_ERROR(recv_reply(r, type, id, cap, olen, what));
    return recv_all(r, out, *olen, what);
}

static size_t put_str(uint8_t *p, const char *s, size_t n)
{
    gbpr_st32(p, (uint32_t)n);
    memcpy(p + 4, s, n);
    return 4 + n;
}

static int check_name(gbp_remote *r, const char *name)
{
    if (!gbpr_dataset_name_ok(name, strlen(name)))
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "%s: '%s' is not a file of a BP4 dataset",
                         r->url, name);
    if (r->broken)
        return gbp_error(GPUBP_ERR_IO, ENOTCONN, "%s: the connection was lost earlier", r->url);
    return GPUBP_OK;
}

/* ---- open ------------------------------------------------------------------------------------ */

static int read_token(char *tok, size_t cap, size_t *len, const char *file)
{
    FILE *fp = fopen(file, "rb");
    if (!fp) return gbp_error(GPUBP_ERR_IO, errno, "token file %s: %s", file, strerror(errno));
    size_t n = fread(tok, 1, cap, fp);
    int eof = feof(fp);
    fclose(fp);
    size_t e = 0; /* the first line is the token; later lines may be anything */
    while (e < n && tok[e] != '\n' && tok[e] != '\r') e++;
    if (e == cap || (e == n && !eof && n == cap))
        return gbp_error(GPUBP_ERR_PARAM, 0, "token file %s: the token is longer than %zu bytes",
                         file, cap - 1);
    *len = e;
    return GPUBP_OK;
}

static int get_token(char *tok, size_t cap, size_t *len, const gbp_params *params)
{
    *len = 0;
#ifdef GBP_PARAMS_HAVE_TOKEN_FILE
    if (params && params->token_file[0]) return read_token(tok, cap, len, params->token_file);
#else
    (void)params;
#endif
    const char *t = getenv("GPUBP_TOKEN");
    if (t && *t) {
        size_t n = strlen(t);
        if (n >= cap)
            return gbp_error(GPUBP_ERR_PARAM, 0, "GPUBP_TOKEN: longer than %zu bytes", cap - 1);
        memcpy(tok, t, n);
        *len = n;
        return GPUBP_OK;
    }
    const char *f = getenv("GPUBP_TOKEN_FILE");
    if (f && *f) return read_token(tok, cap, len, f);
    return GPUBP_OK;
}

/* A string of at most cap bytes from the rest (*left bytes) of a reply, into a new buffer. */
static int recv_blob(gbp_remote *r, uint32_t *left, uint32_t cap, uint8_t **out, size_t *len)
{
    uint8_t lb[4];
    if (*left < 4) return bad_reply(r, "open", "length");
    GBP_FORWARD_IF_ERROR(recv_all(r, lb, 4, "open"));
    uint32_t n = gbpr_ld32(lb);
    if (n > *left - 4 || n > cap) return bad_reply(r, "open", "string length");
    *left -= 4 + n;
    gbp_free(*out);
    *out = n ? gbp_malloc(n) : NULL;
    *len = 0;
    if (n && !*out) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    GBP_FORWARD_IF_ERROR(recv_all(r, *out, n, "open"));
    *len = n;
    return GPUBP_OK;
}

/* HELLO then OPEN on a fresh connection. */
static int handshake(gbp_remote *r, const char *tok, size_t toklen, int *retry)
{
    uint8_t body[8 + GBPR_MAX_PATH + GBPR_MAX_TOKEN], rep[16];
    uint32_t rlen;
    gbpr_st32(body, GBPR_VERSION);
    size_t n = 4 + put_str(body + 4, tok, toklen);
    int rc = call(r, GBPR_HELLO, body, n, rep, sizeof rep, &rlen, "hello");
    if (rc != GPUBP_OK) {
        /* a connection reset or closed during the server's start-up, or a busy server: try
         * again; a malformed reply is not something waiting cures */
        *retry = rc == GPUBP_ERR_IO && (r->broken || gbp_error_native() == EBUSY);
        return rc;
    }
    if (rlen != 8) return bad_reply(r, "hello", "length");
    uint32_t ver = gbpr_ld32(rep), maxr = gbpr_ld32(rep + 4);
    if (ver != GBPR_VERSION) return bad_reply(r, "hello", "version");
    if (maxr < 4096 || maxr > GBPR_MAX_READ) return bad_reply(r, "hello", "max_read");
    r->chunk = maxr < GBP_REMOTE_CHUNK ? maxr : GBP_REMOTE_CHUNK;

    uint32_t id;
    n = put_str(body, r->path, strlen(r->path));
    GBP_FORWARD_IF_ERROR(send_request(r, GBPR_OPEN, body, n, &id, "open"));
    GBP_FORWARD_IF_ERROR(recv_reply(r, GBPR_OPEN, id, GBPR_OPEN_MAX_REPLY, &rlen, "open"));
    if (rlen < 12) return bad_reply(r, "open", "length");
    GBP_FORWARD_IF_ERROR(recv_all(r, rep, 12, "open"));
    uint32_t flags = gbpr_ld32(rep);
    rlen -= 12;
    if ((flags & ~(GBPR_OPEN_HAVE_IDX | GBPR_OPEN_HAVE_MD0)) ||
        (flags & GBPR_OPEN_HAVE_MD0 && !(flags & GBPR_OPEN_HAVE_IDX)))
        return bad_reply(r, "open", "flags");
    if (flags & GBPR_OPEN_HAVE_IDX) {
        GBP_FORWARD_IF_ERROR(recv_blob(r, &rlen, GBPR_OPEN_IDX_MAX, &r->idx, &r->idx_len));
        r->have_idx = 1;
    }
    if (flags & GBPR_OPEN_HAVE_MD0)
        GBP_FORWARD_IF_ERROR(recv_blob(r, &rlen, GBPR_OPEN_MD0_MAX, &r->md0, &r->md0_len));
    if (rlen != 0) return bad_reply(r, "open", "length");
    return GPUBP_OK;
}

int gbp_remote_open(gbp_remote **out, const char *url, const gbp_params *params)
{
    GBP_CHECK_ARG(out);
    GBP_CHECK_ARG(url);
    *out = NULL;
    gbp_params defaults;
    if (!params) {
        GBP_FORWARD_IF_ERROR(gbp_params_parse(&defaults, NULL));
        params = &defaults;
    }
    gbp_remote *r = gbp_calloc(1, sizeof *r);
    if (!r) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    r->fd = -1;
    r->next_id = 1;
    r->io_timeout = GBP_REMOTE_IO_TIMEOUT;
    const char *e = getenv("GPUBP_REMOTE_IO_TIMEOUT");
    if (e && atof(e) > 0) r->io_timeout = atof(e);
    e = getenv("GPUBP_REMOTE_VERBOSE");
    r->verbose = e && *e && strcmp(e, "0");
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        gbp_free(r);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (mutex)");
    }
    char tok[GBPR_MAX_TOKEN + 1];
    size_t toklen = 0;
    int rc = parse_url(r, url);
    if (rc == GPUBP_OK) rc = get_token(tok, sizeof tok, &toklen, params);

    double delay = params->retry_delay, t0 = now_s();
    long attempts = 1 + (long)(params->retries > 0 ? params->retries : 0);
    for (long a = 0; rc == GPUBP_OK && a < attempts; a++) {
        int retry = 0;
        rc = dial(r, params->connect_timeout, &retry);
        if (rc == GPUBP_OK) rc = handshake(r, tok, toklen, &retry);
        if (rc == GPUBP_OK || !retry) break;
        mark_broken(r);
        if (a + 1 == attempts) {
            char last[1024]; /* gbp_error formats into the record it would read from */
            const char *m = gbp_error_message();
            size_t ul = strlen(url);
            if (!strncmp(m, url, ul) && m[ul] == ':') m += ul + 1 + (m[ul + 1] == ' ');
            snprintf(last, sizeof last, "%s", m);
            rc = gbp_error(GPUBP_ERR_IO, gbp_error_native(),
                           "%s: no gpubp server answered at %s port %s after %ld attempts in "
                           "%.1f s (last: %s)", url, r->host, r->port, attempts, now_s() - t0,
                           last);
            break;
        }
        if (r->verbose)
            fprintf(stderr, "gpubp: %s: attempt %ld failed (%s); retrying in %.2f s\n", url, a + 1,
                    gbp_error_message(), delay);
        rc = GPUBP_OK;
        nap(delay);
        double cap = params->retry_delay > GBP_REMOTE_MAX_DELAY ? params->retry_delay
                                                                : GBP_REMOTE_MAX_DELAY;
        delay = delay * 2 > cap ? cap : delay * 2;
    }
    memset(tok, 0, sizeof tok);
    if (rc != GPUBP_OK) {
        gbp_remote_close(r);
        return rc;
    }
    *out = r;
    return GPUBP_OK;
}

void gbp_remote_close(gbp_remote *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    pthread_mutex_destroy(&r->lock);
    gbp_free(r->idx);
    gbp_free(r->md0);
    gbp_free(r->url);
    gbp_free(r->host);
    gbp_free(r->path);
    gbp_free(r);
}

/* ---- file requests --------------------------------------------------------------------------- */

static int do_size(gbp_remote *r, const char *name, uint64_t *size)
{
    uint8_t body[4 + GBPR_MAX_NAME], rep[8];
    uint32_t rlen;
    size_t n = put_str(body, name, strlen(name));
    GBP_FORWARD_IF_ERROR(call(r, GBPR_SIZE, body, n, rep, sizeof rep, &rlen, name));
    if (rlen != 8) return bad_reply(r, name, "size length");
    *size = gbpr_ld64(rep);
    return GPUBP_OK;
}

int gbp_remote_size(gbp_remote *r, const char *name, uint64_t *size)
{
    GBP_CHECK_ARG(r);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(size);
    pthread_mutex_lock(&r->lock);
    int rc = check_name(r, name);
    if (rc == GPUBP_OK) rc = do_size(r, name, size);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* The pipelined read (the lock is held). */
static int do_pread(gbp_remote *r, const char *name, uint8_t *buf, size_t n, uint64_t off)
{
    uint8_t body[16 + GBPR_MAX_NAME];
    size_t nl = strlen(name);
    size_t nchunks = n / r->chunk + (n % r->chunk != 0);
    uint32_t ids[GBP_REMOTE_WINDOW];
    size_t sent = 0, done = 0;
    int first = GPUBP_OK;
    size_t short_at = 0;
    while (done < nchunks) {
        /* keep the window full, unless a reply already failed: then only drain */
        while (first == GPUBP_OK && sent < nchunks && sent - done < GBP_REMOTE_WINDOW) {
            size_t co = sent * r->chunk, cl = n - co < r->chunk ? n - co : r->chunk;
            gbpr_st64(body, off + co);
            gbpr_st32(body + 8, (uint32_t)cl);
            size_t bl = 12 + put_str(body + 12, name, nl);
            GBP_FORWARD_IF_ERROR(send_request(r, GBPR_PREAD, body, bl,
                                              &ids[sent % GBP_REMOTE_WINDOW], name));
            sent++;
        }
        if (done == sent) break;
        size_t co = done * r->chunk, cl = n - co < r->chunk ? n - co : r->chunk;
        uint32_t len = 0;
        int rc = recv_reply(r, GBPR_PREAD, ids[done % GBP_REMOTE_WINDOW], (uint32_t)cl, &len, name);
        if (r->broken) return rc;
        if (rc == GPUBP_OK) rc = recv_all(r, buf + co, len, name);
        if (r->broken) return rc;
        if (rc == GPUBP_OK && len < cl && first == GPUBP_OK) {
            first = GPUBP_ERR_FORMAT;
            short_at = co + len;
        }
        if (rc != GPUBP_OK && first == GPUBP_OK) first = rc;
        done++;
    }
    if (first == GPUBP_ERR_FORMAT) {
        uint64_t sz = 0;
        int src = do_size(r, name, &sz);
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/%s: %zu bytes at offset %llu run past its end "
                         "(%s%llu bytes; the read stopped at offset %llu)", r->url, name, n,
                         (unsigned long long)off, src == GPUBP_OK ? "" : "about ",
                         (unsigned long long)(src == GPUBP_OK ? sz : off + short_at),
                         (unsigned long long)(off + short_at));
    }
    return first;
}

int gbp_remote_pread(gbp_remote *r, const char *name, void *buf, size_t n, uint64_t off)
{
    GBP_CHECK_ARG(r);
    GBP_CHECK_ARG(name);
    if (n == 0) return GPUBP_OK;
    GBP_CHECK_ARG(buf);
    if (off > UINT64_MAX - n)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/%s: %zu bytes at offset %llu run past its end",
                         r->url, name, n, (unsigned long long)off);
    pthread_mutex_lock(&r->lock);
    int rc = check_name(r, name);
    if (rc == GPUBP_OK && r->md0 && !strcmp(name, "md.0") && off <= r->md0_len &&
        n <= r->md0_len - off)
        memcpy(buf, r->md0 + off, n); /* the steps' metadata that came with OPEN */
    else if (rc == GPUBP_OK)
        rc = do_pread(r, name, buf, n, off);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int do_read_file(gbp_remote *r, const char *name, uint8_t **data, size_t *len)
{
    if (r->have_idx && !strcmp(name, "md.idx")) {
        /* the copy that came with OPEN: used once, later calls see the file as it grows */
        *data = r->idx;
        *len = r->idx_len;
        r->idx = NULL;
        r->have_idx = 0;
        return GPUBP_OK;
    }
    uint8_t body[4 + GBPR_MAX_NAME], hb[8];
    uint32_t id, rlen;
    size_t n = put_str(body, name, strlen(name));
    GBP_FORWARD_IF_ERROR(send_request(r, GBPR_READ_FILE, body, n, &id, name));
    GBP_FORWARD_IF_ERROR(recv_reply(r, GBPR_READ_FILE, id, 8 + GBPR_MAX_READ, &rlen, name));
    if (rlen < 8) return bad_reply(r, name, "length");
    GBP_FORWARD_IF_ERROR(recv_all(r, hb, 8, name));
    uint64_t total = gbpr_ld64(hb);
    size_t got = rlen - 8;
    if (got > total) return bad_reply(r, name, "more bytes than the file has");
    if (total > GBP_REMOTE_MAX_FILE || total > SIZE_MAX) {
        GBP_FORWARD_IF_ERROR(skip(r, got, name));
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/%s: %llu bytes is too large to read whole",
                         r->url, name, (unsigned long long)total);
    }
    uint8_t *p = total ? gbp_malloc((size_t)total) : NULL;
    if (total && !p) {
        GBP_FORWARD_IF_ERROR(skip(r, got, name));
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of %s)",
                         (unsigned long long)total, name);
    }
    int rc = recv_all(r, p, got, name);
    if (rc == GPUBP_OK && total > got) rc = do_pread(r, name, p + got, (size_t)total - got, got);
    if (rc != GPUBP_OK) {
        gbp_free(p);
        return rc;
    }
    *data = p;
    *len = (size_t)total;
    return GPUBP_OK;
}

int gbp_remote_read_file(gbp_remote *r, const char *name, uint8_t **data, size_t *len)
{
    GBP_CHECK_ARG(r);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(data);
    GBP_CHECK_ARG(len);
    *data = NULL;
    *len = 0;
    pthread_mutex_lock(&r->lock);
    int rc = check_name(r, name);
    if (rc == GPUBP_OK) rc = do_read_file(r, name, data, len);
    pthread_mutex_unlock(&r->lock);
    return rc;
}
