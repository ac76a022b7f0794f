/* tools/serve/serve_state.h: the state of gpubp-serve shared by its files: the server (options, the
 * connection slots, counters), one connection's slot, and the log. Implemented in serve_state.c.
 *
 * Threads: the main thread owns the slot table (used, fd, th, id, peer) and writes it under
 * S.lock; a connection's thread owns the fields below "touched only by the connection's thread";
 * counters (requests, bytes_sent, total_conns) change under S.lock. */
#ifndef SERVE_H
#define SERVE_H

#include "remote/proto.h"

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SERVE_VERSION "1.0"
#define MAX_OPEN_FILES 32 /* descriptors a connection keeps open (serve_root.c's cache) */

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

struct server {
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
};

/* The one server of the process (serve_state.c). */
extern struct server S;

/* Writes one line to stderr (the log file with --log-file), prefixed with the UTC time and
 * "gpubp-serve: ". Lines longer than about 1 KiB are cut. Thread-safe. */
void logmsg(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* logmsg, with -v only. */
#define VLOG(...) do { if (S.verbose) logmsg(__VA_ARGS__); } while (0)

#endif /* SERVE_H */
