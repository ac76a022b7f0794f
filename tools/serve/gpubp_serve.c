/* gpubp-serve: serves the BP4 datasets below one root directory to gpubp:// clients (protocol:
 * lib/remote/proto.h, docs/remote-protocol.md). Outline:
 *   main thread: parse options, resolve the root, bind (loopback by default), optionally go to the
 *                background, then poll the listening socket and a self-pipe that SIGTERM/SIGINT
 *                write to; each accepted connection gets a slot and a thread (at most
 *                --max-clients; one more is told "busy" and closed). On a signal it stops
 *                accepting, shuts every connection down, joins the threads and removes its pid
 *                file.
 *   connection thread: HELLO (token) first, then OPEN / READ_FILE / SIZE / PREAD / CLOSE / STATUS
 *                      in order, one reply per request. A message that breaks the protocol gets an
 *                      ERROR reply and closes that connection only.
 * Only md.idx, md.0 and data.N of a dataset below the root are served: paths with ".." are
 * refused, and every dataset and file is resolved with realpath() and checked to lie below the
 * root (symbolic links that lead out are refused). Needs only libc and POSIX threads. */
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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
#include <time.h>
#include <unistd.h>

#define SERVE_VERSION "1.0"
#define DEFAULT_LISTEN "127.0.0.1:7390"
#define MAX_OPEN_FILES 32

typedef struct file_slot {
    char name[GBPR_MAX_NAME + 1];
    int fd;
} file_slot;

typedef struct conn {
    int used;      /* the slot holds a connection (main thread, under the lock) */
    int done;      /* its thread has finished and may be joined */
    int fd;
    pthread_t th;
    unsigned long id;
    char peer[80];
    /* below: touched only by the connection's thread */
    int authed;
    int dirfd;                 /* the open dataset, -1 when none */
    char *dspath;              /* its real path */
    char *dsname;              /* the path the client gave, for logs */
    file_slot files[MAX_OPEN_FILES];
    int nfiles, next_evict;
    uint8_t *buf;              /* PREAD/READ_FILE reply bytes */
    size_t cap;
    uint8_t req[GBPR_MAX_REQUEST];
} conn;

static struct server {
    char root[PATH_MAX];
    size_t rootlen;
    char token[GBPR_MAX_TOKEN + 1];
    size_t toklen;
    int have_token;
    int verbose;
    int max_clients;
    double idle_timeout;
    int sigpipe[2];
    conn *conns;
    pthread_mutex_t lock;
    unsigned long next_id;
    unsigned long total_conns, requests;
    unsigned long long bytes_sent;
    time_t started;
} S = {.sigpipe = {-1, -1}, .lock = PTHREAD_MUTEX_INITIALIZER};

static void logmsg(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void logmsg(const char *fmt, ...)
{
    char line[1200];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ gpubp-serve: ", ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

/* ---- sockets -------------------------------------------------------------------------------- */

static int send_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov;
        m.msg_iovlen = (size_t)n;
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        size_t done = (size_t)k;
        while (n > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

/* 1 = all n bytes, 0 = end of stream before the first byte, -1 = error, timeout or a stream that
 * ended inside the message. */
static int recv_all(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, p + got, n - got, 0);
        if (k == 0) return got == 0 ? 0 : -1;
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += (size_t)k;
    }
    return 1;
}

static int reply(conn *c, uint16_t type, uint32_t id, const void *a, size_t an, const void *b,
                 size_t bn)
{
    uint8_t h[GBPR_HEADER_SIZE];
    gbpr_put_header(h, (uint16_t)(type | GBPR_REPLY), id, (uint32_t)(an + bn));
    struct iovec iov[3] = {{h, sizeof h}, {(void *)a, an}, {(void *)b, bn}};
    if (send_all(c->fd, iov, 3) != 0) return -1;
    pthread_mutex_lock(&S.lock);
    S.bytes_sent += sizeof h + an + bn;
    pthread_mutex_unlock(&S.lock);
    return 0;
}

static int reply_error(int fd, uint32_t id, uint32_t code, int native, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static int reply_error(int fd, uint32_t id, uint32_t code, int native, const char *fmt, ...)
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
    return send_all(fd, &iov, 1);
}

/* ---- datasets and files -------------------------------------------------------------------- */

static int below_root(const char *rp)
{
    if (S.rootlen == 1) return rp[0] == '/'; /* the root is "/" */
    return !strncmp(rp, S.root, S.rootlen) && (rp[S.rootlen] == '\0' || rp[S.rootlen] == '/');
}

static void close_dataset(conn *c)
{
    for (int i = 0; i < c->nfiles; i++) close(c->files[i].fd);
    c->nfiles = 0;
    c->next_evict = 0;
    if (c->dirfd >= 0) close(c->dirfd);
    c->dirfd = -1;
    free(c->dspath);
    free(c->dsname);
    c->dspath = c->dsname = NULL;
}

/* Resolves a client path to a dataset below the root; returns 0 or an error code (with a
 * message in msg). */
static uint32_t resolve_dataset(conn *c, const char *path, size_t n, char *msg, size_t msz,
                                int *native)
{
    *native = 0;
    if (n == 0 || memchr(path, '\0', n)) {
        snprintf(msg, msz, "empty path or a NUL byte in it");
        return GBPR_E_FORBIDDEN;
    }
    if (path[0] == '/') {
        snprintf(msg, msz, "an absolute path; paths are relative to the server's root");
        return GBPR_E_FORBIDDEN;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && path[j] != '/') j++;
        if (j - i == 2 && path[i] == '.' && path[i + 1] == '.') {
            snprintf(msg, msz, "'..' in the path");
            return GBPR_E_FORBIDDEN;
        }
        i = j + 1;
    }
    char full[PATH_MAX + GBPR_MAX_PATH + 2], rp[PATH_MAX];
    snprintf(full, sizeof full, "%s/%.*s", S.rootlen == 1 ? "" : S.root, (int)n, path);
    if (!realpath(full, rp)) {
        *native = errno;
        snprintf(msg, msz, "%.*s does not exist", (int)(n > 300 ? 300 : n), path);
        return errno == ENOENT || errno == ENOTDIR ? GBPR_E_NOT_FOUND : GBPR_E_FORBIDDEN;
    }
    if (!below_root(rp)) {
        snprintf(msg, msz, "%.*s resolves outside the server's root", (int)(n > 300 ? 300 : n),
                 path);
        return GBPR_E_FORBIDDEN;
    }
    int dfd = open(rp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        *native = errno;
        snprintf(msg, msz, "%.*s is not a BP4 dataset (%s)", (int)(n > 300 ? 300 : n), path,
                 errno == ENOTDIR ? "not a directory" : strerror(errno));
        return errno == ENOTDIR ? GBPR_E_NOT_BP4 : GBPR_E_FORBIDDEN;
    }
    if (faccessat(dfd, "mmd.0", F_OK, 0) == 0) {
        close(dfd);
        snprintf(msg, msz, "%.*s is an ADIOS2 BP5 dataset (it has mmd.0); libgpubp reads BP4 only",
                 (int)(n > 300 ? 300 : n), path);
        return GBPR_E_BP5;
    }
    if (faccessat(dfd, "md.idx", F_OK, 0) && faccessat(dfd, "md.0", F_OK, 0) &&
        faccessat(dfd, "data.0", F_OK, 0)) {
        close(dfd);
        snprintf(msg, msz, "%.*s is not a BP4 dataset (no md.idx, md.0 or data.0)",
                 (int)(n > 300 ? 300 : n), path);
        return GBPR_E_NOT_BP4;
    }
    close_dataset(c);
    c->dirfd = dfd;
    c->dspath = strdup(rp);
    c->dsname = strndup(path, n);
    if (!c->dspath || !c->dsname) {
        close_dataset(c);
        snprintf(msg, msz, "out of memory");
        *native = ENOMEM;
        return GBPR_E_IO;
    }
    return 0;
}

/* Opens a file of the open dataset (a fresh descriptor the caller closes); 0 or an error code. */
static uint32_t open_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native)
{
    *native = 0;
    if (c->dirfd < 0) {
        snprintf(msg, msz, "no dataset is open");
        return GBPR_E_NO_DATASET;
    }
    char full[PATH_MAX + GBPR_MAX_NAME + 2], rp[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", c->dspath, name);
    if (!realpath(full, rp)) {
        *native = errno;
        snprintf(msg, msz, "%s/%s: %s", c->dsname, name, strerror(errno));
        return errno == ENOENT ? GBPR_E_NOT_FOUND : GBPR_E_IO;
    }
    if (!below_root(rp)) {
        snprintf(msg, msz, "%s/%s resolves outside the server's root", c->dsname, name);
        return GBPR_E_FORBIDDEN;
    }
    int f = open(rp, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (f < 0 || fstat(f, &st) != 0) {
        *native = errno;
        snprintf(msg, msz, "%s/%s: %s", c->dsname, name, strerror(errno));
        if (f >= 0) close(f);
        return errno == ENOENT ? GBPR_E_NOT_FOUND : GBPR_E_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        snprintf(msg, msz, "%s/%s is not a regular file", c->dsname, name);
        return GBPR_E_FORBIDDEN;
    }
    *fd = f;
    return 0;
}

/* A cached descriptor of a dataset file (md.0 and data.N stay open, as in a local reader). */
static uint32_t cached_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native)
{
    for (int i = 0; i < c->nfiles; i++)
        if (!strcmp(c->files[i].name, name)) {
            *fd = c->files[i].fd;
            return 0;
        }
    int f;
    uint32_t e = open_file(c, name, msg, msz, &f, native);
    if (e) return e;
    int slot;
    if (c->nfiles < MAX_OPEN_FILES) {
        slot = c->nfiles++;
    } else {
        slot = c->next_evict;
        c->next_evict = (c->next_evict + 1) % MAX_OPEN_FILES;
        close(c->files[slot].fd);
    }
    snprintf(c->files[slot].name, sizeof c->files[slot].name, "%s", name);
    c->files[slot].fd = f;
    *fd = f;
    return 0;
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

#define VLOG(...) do { if (S.verbose) logmsg(__VA_ARGS__); } while (0)

static int malformed(conn *c, uint32_t id, const char *why)
{
    VLOG("conn %lu %s: malformed message (%s); closing the connection", c->id, c->peer, why);
    reply_error(c->fd, id, GBPR_E_MALFORMED, 0, "malformed message: %s", why);
    return DROP;
}

static int fail(conn *c, uint32_t id, const char *req, uint32_t code, int native, const char *msg)
{
    VLOG("conn %lu %s: %s -> error %u: %s", c->id, c->peer, req, (unsigned)code, msg);
    return reply_error(c->fd, id, code, native, "%s", msg) ? DROP : KEEP;
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
        reply_error(c->fd, id, GBPR_E_VERSION, 0, "protocol version %u; this server speaks 1",
                    (unsigned)ver);
        return DROP;
    }
    if (S.have_token) {
        unsigned diff = tl != S.toklen;
        for (size_t i = 0; i < S.toklen; i++) /* constant time */
            diff |= (unsigned)(S.token[i] ^ (i < tl ? tok[i] : 0));
        if (diff) {
            VLOG("conn %lu %s: HELLO -> wrong token, closing", c->id, c->peer);
            reply_error(c->fd, id, GBPR_E_AUTH, EACCES, tl ? "wrong token" : "a token is required");
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
    uint32_t e = resolve_dataset(c, path, n, msg, sizeof msg, &native);
    if (e) return fail(c, id, "OPEN", e, native, msg);
    /* md.idx and the steps' metadata (md.0 up to the end of the last step md.idx lists) come
     * with the reply when they are small, saving the client round trips */
    uint8_t head[16], mhead[4];
    uint32_t flags = 0;
    uint64_t size = 0, mend = 0;
    size_t got = 0, mgot = 0;
    int fd;
    if (open_file(c, "md.idx", msg, sizeof msg, &fd, &native) == 0) {
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
    if ((flags & GBPR_OPEN_HAVE_IDX) && got >= 128) {
        size_t nrec = (got - 64) / 64;
        mend = gbpr_ld64(c->buf + 64 + (nrec - 1) * 64 + 40); /* end of the last step */
        if (mend > 0 && mend <= GBPR_OPEN_MD0_MAX && grow(c, got + (size_t)mend) == 0 &&
            open_file(c, "md.0", msg, sizeof msg, &fd, &native) == 0) {
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
    if (send_all(c->fd, iov, 5)) return DROP;
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
        snprintf(msg, sizeof msg, "'%.*s' is not a file of a BP4 dataset (md.idx, md.0, data.N)",
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
    uint32_t e = open_file(c, name, msg, sizeof msg, &fd, &native);
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
    uint32_t e = cached_file(c, name, msg, sizeof msg, &fd, &native);
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
    uint32_t e = cached_file(c, name, msg, sizeof msg, &fd, &native);
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
        close_dataset(c);
        return reply(c, GBPR_CLOSE, h->id, NULL, 0, NULL, 0) ? DROP : KEEP;
    case GBPR_STATUS:
        if (h->len) return malformed(c, h->id, "STATUS body");
        return do_status(c, h->id);
    default: return malformed(c, h->id, "unknown request type");
    }
}

static void *conn_main(void *arg)
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
        int r = recv_all(c->fd, hb, sizeof hb);
        if (r == 0) break;
        if (r < 0) {
            why = errno == EAGAIN || errno == EWOULDBLOCK ? "idle timeout" : "truncated header";
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
        if (h.len && recv_all(c->fd, c->req, h.len) != 1) {
            why = "truncated body";
            break;
        }
        if (handle(c, &h) == DROP) {
            why = "dropped";
            break;
        }
    }
    VLOG("conn %lu %s: disconnected (%s)", c->id, c->peer, why);
    close_dataset(c);
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

/* Joins finished connection threads and frees their slots (main thread). */
static void reap(void)
{
    for (int i = 0; i < S.max_clients; i++) {
        conn *c = &S.conns[i];
        pthread_mutex_lock(&S.lock);
        int fin = c->used && c->done;
        pthread_mutex_unlock(&S.lock);
        if (!fin) continue;
        pthread_join(c->th, NULL);
        close(c->fd);
        pthread_mutex_lock(&S.lock);
        c->used = c->done = 0;
        c->fd = -1;
        pthread_mutex_unlock(&S.lock);
    }
}

/* ---- start-up ------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    int e = errno;
    stop_flag = 1;
    char b = 's';
    ssize_t w = write(S.sigpipe[1], &b, 1);
    (void)w;
    errno = e;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpubp-serve [options]\n"
            "Serves the BP4 datasets below --root to gpubp://HOST:PORT/PATH.bp readers.\n"
            "  --listen ADDR:PORT   address to listen on (default %s; [::1]:PORT for IPv6;\n"
            "                       port 0 picks a free one, see --port-file)\n"
            "  --root DIR           directory the URL paths are relative to (default: .)\n"
            "  --token-file FILE    clients must present the first line of FILE as the token\n"
            "  --max-clients N      concurrent connections (default 64)\n"
            "  --idle-timeout S     close a connection silent for S seconds (default 300)\n"
            "  --background         detach once listening (with --pid-file for fixtures)\n"
            "  --pid-file FILE      write the server's pid to FILE; removed at exit\n"
            "  --port-file FILE     write the port it listens on to FILE\n"
            "  --log-file FILE      append log lines to FILE instead of stderr\n"
            "  -v, --verbose        log one line per request\n"
            "  --stop               stop the server of --pid-file (SIGTERM, wait up to 10 s)\n"
            "  --version, -h/--help\n",
            DEFAULT_LISTEN);
}

static int write_file_atomic(const char *path, const char *text)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int stop_server(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    if (!f) {
        fprintf(stderr, "gpubp-serve --stop: no pid file %s (not running)\n", pidfile);
        return 0;
    }
    long pid = 0;
    int got = fscanf(f, "%ld", &pid);
    fclose(f);
    if (got != 1 || pid <= 1) {
        fprintf(stderr, "gpubp-serve --stop: %s does not hold a pid\n", pidfile);
        return 1;
    }
    if (kill((pid_t)pid, SIGTERM) != 0) {
        unlink(pidfile);
        return 0;
    }
    /* bounded wait: the server removes its pid file when it has shut down */
    for (int i = 0; i < 500; i++) {
        if (kill((pid_t)pid, 0) != 0 || access(pidfile, F_OK) != 0) return 0;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "gpubp-serve --stop: pid %ld did not stop in 10 s; killing it\n", pid);
    kill((pid_t)pid, SIGKILL);
    unlink(pidfile);
    return 1;
}

static int listen_on(const char *spec, int *port_out)
{
    char host[300];
    const char *colon, *h = spec;
    size_t hl;
    if (spec[0] == '[') {
        const char *e = strchr(spec, ']');
        if (!e || e[1] != ':') return -1;
        h = spec + 1;
        hl = (size_t)(e - h);
        colon = e + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon) return -1;
        hl = (size_t)(colon - spec);
    }
    if (hl >= sizeof host) return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (hl == 0) strcpy(host, "127.0.0.1");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g) {
        fprintf(stderr, "gpubp-serve: --listen %s: %s\n", spec, gai_strerror(g));
        return -2;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) break;
        fprintf(stderr, "gpubp-serve: cannot listen on %s: %s\n", spec, strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return -2;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port_out = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                         : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

static void peer_name(const struct sockaddr_storage *ss, socklen_t sl, char *out, size_t n)
{
    char h[64] = "?", p[16] = "?";
    getnameinfo((const struct sockaddr *)ss, sl, h, sizeof h, p, sizeof p,
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, n, "%s:%s", h, p);
}

/* Closes a connection that was refused, after reading what the client already sent (up to
 * 100 ms), so that the refusal arrives rather than a reset. */
static void linger_close(int fd)
{
    shutdown(fd, SHUT_WR);
    struct timeval tv = {0, 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[512];
    for (int i = 0; i < 64 && recv(fd, b, sizeof b, 0) > 0; i++) {
    }
    close(fd);
}

static void accept_one(int lfd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int cfd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (cfd < 0) return;
    conn *c = NULL;
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.max_clients && !c; i++)
        if (!S.conns[i].used) c = &S.conns[i];
    if (c) {
        c->used = 1;
        c->done = 0;
        c->fd = cfd;
        c->id = ++S.next_id;
        S.total_conns++;
    }
    pthread_mutex_unlock(&S.lock);
    char peer[80];
    peer_name(&ss, sl, peer, sizeof peer);
    if (!c) {
        VLOG("%s: refused, %d connections already", peer, S.max_clients);
        reply_error(cfd, 0, GBPR_E_BUSY, 0, "the server has %d connections; retry later",
                    S.max_clients);
        linger_close(cfd);
        return;
    }
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->authed = 0;
    c->dirfd = -1;
    c->nfiles = c->next_evict = 0;
    if (pthread_create(&c->th, NULL, conn_main, c) != 0) {
        logmsg("cannot start a thread for %s: %s", peer, strerror(errno));
        reply_error(cfd, 0, GBPR_E_BUSY, 0, "the server cannot start a thread; retry later");
        close(cfd);
        pthread_mutex_lock(&S.lock);
        c->used = 0;
        c->fd = -1;
        pthread_mutex_unlock(&S.lock);
    }
}

static int read_token_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gpubp-serve: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = fread(S.token, 1, sizeof S.token, f);
    fclose(f);
    size_t e = 0; /* the first line is the token */
    while (e < n && S.token[e] != '\n' && S.token[e] != '\r') e++;
    if (e > GBPR_MAX_TOKEN) {
        fprintf(stderr, "gpubp-serve: --token-file %s: the token is longer than %u bytes\n", path,
                GBPR_MAX_TOKEN);
        return -1;
    }
    if (e == 0) {
        fprintf(stderr, "gpubp-serve: --token-file %s: the first line is empty\n", path);
        return -1;
    }
    S.toklen = e;
    S.have_token = 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *listen_spec = DEFAULT_LISTEN, *root = ".", *token_file = NULL, *pid_file = NULL;
    const char *port_file = NULL, *log_file = NULL;
    int background = 0, stop = 0;
    S.max_clients = 64;
    S.idle_timeout = 300;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                  \
    do {                                                                         \
        if (!v) {                                                                \
            fprintf(stderr, "gpubp-serve: %s needs a value\n", a);               \
            return 2;                                                            \
        }                                                                        \
        i++;                                                                     \
    } while (0)
        if (!strcmp(a, "--listen")) { NEEDV(); listen_spec = v; }
        else if (!strcmp(a, "--root")) { NEEDV(); root = v; }
        else if (!strcmp(a, "--token-file")) { NEEDV(); token_file = v; }
        else if (!strcmp(a, "--pid-file")) { NEEDV(); pid_file = v; }
        else if (!strcmp(a, "--port-file")) { NEEDV(); port_file = v; }
        else if (!strcmp(a, "--log-file")) { NEEDV(); log_file = v; }
        else if (!strcmp(a, "--max-clients")) {
            NEEDV();
            S.max_clients = atoi(v);
            if (S.max_clients < 1 || S.max_clients > 4096) {
                fprintf(stderr, "gpubp-serve: --max-clients must be 1..4096\n");
                return 2;
            }
        } else if (!strcmp(a, "--idle-timeout")) {
            NEEDV();
            S.idle_timeout = atof(v);
            if (!(S.idle_timeout >= 1 && S.idle_timeout <= 1e6)) {
                fprintf(stderr, "gpubp-serve: --idle-timeout must be 1..1e6 seconds\n");
                return 2;
            }
        } else if (!strcmp(a, "--background")) background = 1;
        else if (!strcmp(a, "--stop")) stop = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) S.verbose = 1;
        else if (!strcmp(a, "--version")) {
            printf("gpubp-serve %s (protocol %u)\n", SERVE_VERSION, GBPR_VERSION);
            return 0;
        }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "gpubp-serve: unknown option '%s'\n", a); usage(stderr); return 2; }
#undef NEEDV
    }
    if (stop) {
        if (!pid_file) { fprintf(stderr, "gpubp-serve: --stop needs --pid-file\n"); return 2; }
        return stop_server(pid_file);
    }
    if (!realpath(root, S.root)) {
        fprintf(stderr, "gpubp-serve: --root %s: %s\n", root, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(S.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gpubp-serve: --root %s is not a directory\n", root);
        return 1;
    }
    S.rootlen = strlen(S.root);
    if (token_file && read_token_file(token_file)) return 1;
    if (log_file && !freopen(log_file, "a", stderr)) return 1;
    if (log_file) setvbuf(stderr, NULL, _IOLBF, 0);
    int port = 0;
    int lfd = listen_on(listen_spec, &port);
    if (lfd == -1) {
        fprintf(stderr, "gpubp-serve: --listen %s: expected ADDR:PORT\n", listen_spec);
        return 2;
    }
    if (lfd < 0) return 1;
    if (pipe(S.sigpipe) != 0) { perror("gpubp-serve: pipe"); return 1; }
    fcntl(S.sigpipe[0], F_SETFL, O_NONBLOCK);
    fcntl(S.sigpipe[1], F_SETFL, O_NONBLOCK);
    S.conns = calloc((size_t)S.max_clients, sizeof *S.conns);
    if (!S.conns) { fprintf(stderr, "gpubp-serve: out of memory\n"); return 1; }
    for (int i = 0; i < S.max_clients; i++) S.conns[i].fd = -1;

    /* handlers first: a SIGTERM that comes as soon as the pid file exists is a clean stop */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (background) {
        /* the socket is listening already, so clients can connect as soon as the parent returns */
        int ready[2];
        if (pipe(ready) != 0) { perror("gpubp-serve: pipe"); return 1; }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) { perror("gpubp-serve: fork"); return 1; }
        if (pid > 0) {
            close(ready[1]);
            char b = 0;
            ssize_t k;
            do k = read(ready[0], &b, 1);
            while (k < 0 && errno == EINTR);
            return k == 1 && b == 'y' ? 0 : 1;
        }
        close(ready[0]);
        setsid();
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            if (dn > 2) close(dn);
        }
        char pidtext[32];
        snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
        if (pid_file && write_file_atomic(pid_file, pidtext)) {
            fprintf(stderr, "gpubp-serve: cannot write %s: %s\n", pid_file, strerror(errno));
            return 1;
        }
        if (port_file) {
            char pt[16];
            snprintf(pt, sizeof pt, "%d\n", port);
            if (write_file_atomic(port_file, pt)) return 1;
        }
        ssize_t w = write(ready[1], "y", 1);
        (void)w;
        close(ready[1]);
    } else {
        char t[32];
        snprintf(t, sizeof t, "%ld\n", (long)getpid());
        if (pid_file && write_file_atomic(pid_file, t)) {
            fprintf(stderr, "gpubp-serve: cannot write %s: %s\n", pid_file, strerror(errno));
            return 1;
        }
        snprintf(t, sizeof t, "%d\n", port);
        if (port_file && write_file_atomic(port_file, t)) return 1;
    }

    S.started = time(NULL);
    if (S.verbose)
        logmsg("listening on %s (port %d), root %s, token %s, pid %ld", listen_spec, port, S.root,
               S.have_token ? "required" : "none", (long)getpid());

    while (!stop_flag) {
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {S.sigpipe[0], POLLIN, 0}};
        int pr = poll(p, 2, 1000);
        if (pr < 0 && errno != EINTR) break;
        if (p[1].revents & POLLIN) {
            char b[64];
            while (read(S.sigpipe[0], b, sizeof b) > 0) {
            }
        }
        reap();
        if (!stop_flag && (p[0].revents & POLLIN)) accept_one(lfd);
    }
    /* clean shutdown: no new connections, wake every connection thread, join them */
    close(lfd);
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.max_clients; i++)
        if (S.conns[i].used) shutdown(S.conns[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&S.lock);
    for (int i = 0; i < S.max_clients; i++) {
        if (!S.conns[i].used) continue;
        pthread_join(S.conns[i].th, NULL);
        close(S.conns[i].fd);
    }
    if (S.verbose) logmsg("stopped (%lu connections, %lu requests)", S.total_conns, S.requests);
    free(S.conns);
    if (pid_file) unlink(pid_file);
    return 0;
}
