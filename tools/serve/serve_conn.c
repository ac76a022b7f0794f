/* gpubp-serve's protocol (serve_conn.h): one thread per connection reads a request, answers it
 * and goes on, HELLO first. Every handler returns KEEP or DROP: DROP ends the connection (a
 * message that breaks the protocol, or a reply that cannot be sent); an error the client can act
 * on (no such file, forbidden path) is an ERROR reply and KEEP. */
#include "serve/serve_conn.h"
#include "serve/serve_root.h"
#include "remote/wire.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int reply(conn *c, uint16_t type, uint32_t id, const void *a, size_t an, const void *b,
                 size_t bn)
{
    uint8_t h[GBPR_HEADER_SIZE];
    gbpr_put_header(h, (uint16_t)(type | GBPR_REPLY), id, (uint32_t)(an + bn));
    struct iovec iov[3] = {{h, sizeof h}, {(void *)a, an}, {(void *)b, bn}};
    if (gbp_wire_send_all(c->fd, iov, 3) != 0) return -1;
    pthread_mutex_lock(&S.lock);
    S.bytes_sent += sizeof h + an + bn;
    pthread_mutex_unlock(&S.lock);
    return 0;
}

int serve_reply_error(int fd, uint32_t id, uint32_t code, int native, const char *fmt, ...)
{
    uint8_t b[GBPR_HEADER_SIZE + 12 + 512];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf((char *)b + GBPR_HEADER_SIZE + 12, 512, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    if (m > 511) m = 511;
    gbpr_put_header(b, GBPR_ERROR, id, 12 + (uint32_t)m);
    gbpr_st32(b + GBPR_HEADER_SIZE, code);
    gbpr_st32(b + GBPR_HEADER_SIZE + 4, (uint32_t)native);
    gbpr_st32(b + GBPR_HEADER_SIZE + 8, (uint32_t)m);
    struct iovec iov = {b, GBPR_HEADER_SIZE + 12 + (size_t)m};
    return gbp_wire_send_all(fd, &iov, 1);
}

/* pread until n bytes or the end of the file; -1 on an error (errno kept). */
static ssize_t read_upto(int fd, uint8_t *p, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        if (off + got > (uint64_t)INT64_MAX) break;
        ssize_t k = pread(fd, p + got, n - got, (off_t)(off + got));
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static int grow(conn *c, size_t n)
{
    if (n <= c->cap) return 0;
    uint8_t *b = realloc(c->buf, n);
    if (!b) return -1;
    c->buf = b;
    c->cap = n;
    return 0;
}

/* ---- requests -------------------------------------------------------------------------------- */

enum { KEEP = 0, DROP = 1 }; /* what happens to the connection after a request */

static int malformed(conn *c, uint32_t id, const char *why)
{
    VLOG("conn %lu %s: malformed message (%s); closing the connection", c->id, c->peer, why);
    serve_reply_error(c->fd, id, GBPR_E_MALFORMED, 0, "malformed message: %s", why);
    return DROP;
}

static int fail(conn *c, uint32_t id, const char *req, uint32_t code, int native, const char *msg)
{
    VLOG("conn %lu %s: %s -> error %u: %s", c->id, c->peer, req, (unsigned)code, msg);
    return serve_reply_error(c->fd, id, code, native, "%s", msg) ? DROP : KEEP;
}

static int do_hello(conn *c, uint32_t id, gbpr_cursor *cur)
{
    uint32_t ver = gbpr_take32(cur);
    const char *tok;
    size_t tl;
    if (gbpr_take_str(cur, GBPR_MAX_TOKEN, &tok, &tl) || cur->left)
        return malformed(c, id, "HELLO body");
    if (c->authed) return malformed(c, id, "a second HELLO");
    if (ver < 1) {
        VLOG("conn %lu %s: HELLO version %u -> refused", c->id, c->peer, (unsigned)ver);
        serve_reply_error(c->fd, id, GBPR_E_VERSION, 0, "protocol version %u; this server speaks 1",
                    (unsigned)ver);
        return DROP;
    }
    if (S.have_token) {
        unsigned diff = tl != S.toklen;
        for (size_t i = 0; i < S.toklen; i++) /* constant time */
            diff |= (unsigned)(S.token[i] ^ (i < tl ? tok[i] : 0));
        if (diff) {
            VLOG("conn %lu %s: HELLO -> wrong token, closing", c->id, c->peer);
            serve_reply_error(c->fd, id, GBPR_E_AUTH, EACCES, tl ? "wrong token" : "a token is required");
            return DROP;
        }
    }
    c->authed = 1;
    uint8_t b[8];
    gbpr_st32(b, GBPR_VERSION);
    gbpr_st32(b + 4, GBPR_MAX_READ);
    VLOG("conn %lu %s: HELLO version %u -> ok", c->id, c->peer, (unsigned)ver);
    return reply(c, GBPR_HELLO, id, b, sizeof b, NULL, 0) ? DROP : KEEP;
}

static int do_open(conn *c, uint32_t id, gbpr_cursor *cur)
{
    const char *path;
    size_t n;
    if (gbpr_take_str(cur, GBPR_MAX_PATH, &path, &n) || cur->left)
        return malformed(c, id, "OPEN body");
    char msg[512];
    int native;
    uint32_t e = serve_resolve_dataset(c, path, n, msg, sizeof msg, &native);
    if (e) return fail(c, id, "OPEN", e, native, msg);
    /* md.idx and the steps' metadata (md.0 up to the end of the last step md.idx lists) come
     * with the reply when they are small, saving the client round trips */
    uint8_t head[16], mhead[4];
    uint32_t flags = 0;
    uint64_t size = 0, mend = 0;
    size_t got = 0, mgot = 0;
    int fd;
    if (serve_open_file(c, "md.idx", msg, sizeof msg, &fd, &native) == 0) {
        struct stat st;
        if (fstat(fd, &st) == 0) size = (uint64_t)st.st_size;
        if (size <= GBPR_OPEN_IDX_MAX && grow(c, (size_t)size + 1) == 0) {
            ssize_t k = read_upto(fd, c->buf, (size_t)size, 0);
            if (k >= 0) {
                flags |= GBPR_OPEN_HAVE_IDX;
                got = (size_t)k;
            }
        }
        close(fd);
    }
    /* BP4's md.idx records only (BP5's md.idx, version 5 at byte 37, has other records) */
    if ((flags & GBPR_OPEN_HAVE_IDX) && got >= 128 && c->buf[37] != 5) {
        size_t nrec = (got - 64) / 64;
        mend = gbpr_ld64(c->buf + 64 + (nrec - 1) * 64 + 40); /* end of the last step */
        if (mend > 0 && mend <= GBPR_OPEN_MD0_MAX && grow(c, got + (size_t)mend) == 0 &&
            serve_open_file(c, "md.0", msg, sizeof msg, &fd, &native) == 0) {
            ssize_t k = read_upto(fd, c->buf + got, (size_t)mend, 0);
            if (k > 0) {
                flags |= GBPR_OPEN_HAVE_MD0;
                mgot = (size_t)k;
            }
            close(fd);
        }
    }
    gbpr_st32(head, flags);
    gbpr_st64(head + 4, size);
    gbpr_st32(head + 12, (uint32_t)got);
    gbpr_st32(mhead, (uint32_t)mgot);
    VLOG("conn %lu %s: OPEN %s -> ok (md.idx %zu bytes, md.0 %zu bytes)", c->id, c->peer,
         c->dsname, got, mgot);
    uint8_t h[GBPR_HEADER_SIZE];
    size_t blen = (flags ? 16 : 12) + got + (mgot ? 4 + mgot : 0);
    gbpr_put_header(h, GBPR_OPEN | GBPR_REPLY, id, (uint32_t)blen);
    struct iovec iov[5] = {{h, sizeof h}, {head, flags ? 16 : 12}, {c->buf, got},
                           {mhead, mgot ? 4 : 0}, {c->buf + got, mgot}};
    if (gbp_wire_send_all(c->fd, iov, 5)) return DROP;
    pthread_mutex_lock(&S.lock);
    S.bytes_sent += sizeof h + blen;
    pthread_mutex_unlock(&S.lock);
    return KEEP;
}

static int take_name(conn *c, uint32_t id, gbpr_cursor *cur, char *name, const char *req,
                     int *verdict)
{
    const char *s;
    size_t n;
    if (gbpr_take_str(cur, GBPR_MAX_NAME, &s, &n) || cur->left) {
        *verdict = malformed(c, id, req);
        return -1;
    }
    if (!gbpr_dataset_name_ok(s, n)) {
        char msg[160];
        snprintf(msg, sizeof msg, "'%.*s' is not a file of a BP4 or BP5 dataset (md.idx, md.0, mmd.0, data.N)",
                 (int)n, s);
        *verdict = fail(c, id, req, GBPR_E_FORBIDDEN, 0, msg);
        return -1;
    }
    memcpy(name, s, n);
    name[n] = '\0';
    return 0;
}

static int do_read_file(conn *c, uint32_t id, gbpr_cursor *cur)
{
    char name[GBPR_MAX_NAME + 1], msg[512];
    int verdict, fd, native;
    if (take_name(c, id, cur, name, "READ_FILE", &verdict)) return verdict;
    uint32_t e = serve_open_file(c, name, msg, sizeof msg, &fd, &native);
    if (e) return fail(c, id, "READ_FILE", e, native, msg);
    struct stat st;
    ssize_t k = -1;
    uint64_t size = 0;
    if (fstat(fd, &st) == 0) {
        size = (uint64_t)st.st_size;
        size_t want = size < GBPR_MAX_READ ? (size_t)size : GBPR_MAX_READ;
        if (grow(c, want + 1) == 0) k = read_upto(fd, c->buf, want, 0);
        else errno = ENOMEM;
    }
    native = errno;
    close(fd);
    if (k < 0) {
        snprintf(msg, sizeof msg, "%s/%s: %s", c->dsname, name, strerror(native));
        return fail(c, id, "READ_FILE", GBPR_E_IO, native, msg);
    }
    if ((uint64_t)k < size && (size_t)k < GBPR_MAX_READ) size = (uint64_t)k; /* it shrank */
    uint8_t head[8];
    gbpr_st64(head, size);
    VLOG("conn %lu %s: READ_FILE %s/%s -> ok (%zd of %llu bytes)", c->id, c->peer, c->dsname, name,
         k, (unsigned long long)size);
    return reply(c, GBPR_READ_FILE, id, head, 8, c->buf, (size_t)k) ? DROP : KEEP;
}

static int do_size(conn *c, uint32_t id, gbpr_cursor *cur)
{
    char name[GBPR_MAX_NAME + 1], msg[512];
    int verdict, fd, native;
    if (take_name(c, id, cur, name, "SIZE", &verdict)) return verdict;
    uint32_t e = serve_cached_file(c, name, msg, sizeof msg, &fd, &native);
    if (e) return fail(c, id, "SIZE", e, native, msg);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        native = errno;
        snprintf(msg, sizeof msg, "%s/%s: %s", c->dsname, name, strerror(native));
        return fail(c, id, "SIZE", GBPR_E_IO, native, msg);
    }
    uint8_t b[8];
    gbpr_st64(b, (uint64_t)st.st_size);
    VLOG("conn %lu %s: SIZE %s/%s -> %llu", c->id, c->peer, c->dsname, name,
         (unsigned long long)st.st_size);
    return reply(c, GBPR_SIZE, id, b, 8, NULL, 0) ? DROP : KEEP;
}

static int do_pread(conn *c, uint32_t id, gbpr_cursor *cur)
{
    uint64_t off = gbpr_take64(cur);
    uint32_t len = gbpr_take32(cur);
    char name[GBPR_MAX_NAME + 1], msg[512];
    int verdict, fd, native;
    if (cur->bad) return malformed(c, id, "PREAD body");
    if (take_name(c, id, cur, name, "PREAD", &verdict)) return verdict;
    if (len > GBPR_MAX_READ) return malformed(c, id, "PREAD of more than max_read bytes");
    uint32_t e = serve_cached_file(c, name, msg, sizeof msg, &fd, &native);
    if (e) return fail(c, id, "PREAD", e, native, msg);
#ifdef __linux__
    /* Linux: sendfile from the page cache to the socket, one copy fewer. The reply length is
     * fixed by the header, so a file that shrinks under us ends the connection. */
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t size = (uint64_t)st.st_size;
        size_t k = off >= size ? 0 : (size - off < len ? (size_t)(size - off) : len);
        uint8_t h[GBPR_HEADER_SIZE];
        gbpr_put_header(h, GBPR_PREAD | GBPR_REPLY, id, (uint32_t)k);
        if (send(c->fd, h, sizeof h, MSG_NOSIGNAL | (k ? MSG_MORE : 0)) != (ssize_t)sizeof h)
            return DROP;
        off_t o = (off_t)off;
        size_t left = k;
        while (left > 0) {
            ssize_t w = sendfile(c->fd, fd, &o, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                VLOG("conn %lu %s: PREAD %s/%s: %s; closing", c->id, c->peer, c->dsname, name,
                     w == 0 ? "the file shrank" : strerror(errno));
                return DROP;
            }
            left -= (size_t)w;
        }
        pthread_mutex_lock(&S.lock);
        S.bytes_sent += sizeof h + k;
        pthread_mutex_unlock(&S.lock);
        VLOG("conn %lu %s: PREAD %s/%s off=%llu len=%u -> %zu bytes", c->id, c->peer, c->dsname,
             name, (unsigned long long)off, (unsigned)len, k);
        return KEEP;
    }
#endif
    if (grow(c, len) != 0) {
        snprintf(msg, sizeof msg, "out of memory (%u bytes)", (unsigned)len);
        return fail(c, id, "PREAD", GBPR_E_IO, ENOMEM, msg);
    }
    ssize_t k = read_upto(fd, c->buf, len, off);
    if (k < 0) {
        native = errno;
        snprintf(msg, sizeof msg, "%s/%s: %s", c->dsname, name, strerror(native));
        return fail(c, id, "PREAD", GBPR_E_IO, native, msg);
    }
    VLOG("conn %lu %s: PREAD %s/%s off=%llu len=%u -> %zd bytes", c->id, c->peer, c->dsname, name,
         (unsigned long long)off, (unsigned)len, k);
    return reply(c, GBPR_PREAD, id, c->buf, (size_t)k, NULL, 0) ? DROP : KEEP;
}

static int do_status(conn *c, uint32_t id)
{
    char t[GBPR_MAX_MESSAGE];
    int active = 0;
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.max_clients; i++) active += S.conns[i].used && !S.conns[i].done;
    int n = snprintf(t, sizeof t,
                     "server=gpubp-serve %s\nprotocol=%u\nuptime_s=%lld\nconnections_active=%d\n"
                     "connections_total=%lu\nmax_clients=%d\nrequests=%lu\nbytes_sent=%llu\n"
                     "token=%s\n",
                     SERVE_VERSION, GBPR_VERSION, (long long)(time(NULL) - S.started), active,
                     S.total_conns, S.max_clients, S.requests, S.bytes_sent,
                     S.have_token ? "required" : "none");
    pthread_mutex_unlock(&S.lock);
    VLOG("conn %lu %s: STATUS -> ok", c->id, c->peer);
    return reply(c, GBPR_STATUS, id, t, (size_t)n, NULL, 0) ? DROP : KEEP;
}

static int handle(conn *c, const gbpr_header *h)
{
    gbpr_cursor cur = {c->req, h->len, 0};
    pthread_mutex_lock(&S.lock);
    S.requests++;
    pthread_mutex_unlock(&S.lock);
    if (h->type == GBPR_HELLO) return do_hello(c, h->id, &cur);
    if (!c->authed) return malformed(c, h->id, "a request before HELLO");
    switch (h->type) {
    case GBPR_OPEN: return do_open(c, h->id, &cur);
    case GBPR_READ_FILE: return do_read_file(c, h->id, &cur);
    case GBPR_SIZE: return do_size(c, h->id, &cur);
    case GBPR_PREAD: return do_pread(c, h->id, &cur);
    case GBPR_CLOSE:
        if (h->len) return malformed(c, h->id, "CLOSE body");
        VLOG("conn %lu %s: CLOSE %s -> ok", c->id, c->peer, c->dsname ? c->dsname : "(none)");
        serve_close_dataset(c);
        return reply(c, GBPR_CLOSE, h->id, NULL, 0, NULL, 0) ? DROP : KEEP;
    case GBPR_STATUS:
        if (h->len) return malformed(c, h->id, "STATUS body");
        return do_status(c, h->id);
    default: return malformed(c, h->id, "unknown request type");
    }
}

void *serve_conn_main(void *arg)
{
    conn *c = arg;
    struct timeval tv = {(time_t)S.idle_timeout, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timeval sv = {60, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &sv, sizeof sv);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    VLOG("conn %lu %s: connected", c->id, c->peer);
    const char *why = "closed by the client";
    for (;;) {
        uint8_t hb[GBPR_HEADER_SIZE];
        gbpr_header h;
        size_t got;
        int r = gbp_wire_recv_all(c->fd, hb, sizeof hb, &got);
        if (r == GBP_WIRE_EOF && got == 0) break;
        if (r != 0) {
            why = r == EAGAIN || r == EWOULDBLOCK ? "idle timeout" : "truncated header";
            break;
        }
        if (gbpr_get_header(hb, &h) != 0) {
            malformed(c, 0, "bad magic or flags");
            why = "malformed";
            break;
        }
        if (h.len > GBPR_MAX_REQUEST) {
            malformed(c, h.id, "request longer than the cap");
            why = "malformed";
            break;
        }
        if (h.len && gbp_wire_recv_all(c->fd, c->req, h.len, NULL) != 0) {
            why = "truncated body";
            break;
        }
        if (handle(c, &h) == DROP) {
            why = "dropped";
            break;
        }
    }
    VLOG("conn %lu %s: disconnected (%s)", c->id, c->peer, why);
    serve_close_dataset(c);
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
    shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_lock(&S.lock);
    c->done = 1;
    pthread_mutex_unlock(&S.lock);
    char b = 'r';
    ssize_t w = write(S.sigpipe[1], &b, 1); /* wake the main loop to reap this thread */
    (void)w;
    return NULL;
}
