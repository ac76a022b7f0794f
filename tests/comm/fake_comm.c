/* Threads as ranks: collectives exchange pointers through a shared slot table between barriers;
 * point-to-point messages go through per-destination queues. Two checks make protocol bugs fail
 * loudly instead of hanging CI or passing by luck: every collective checks that all ranks called
 * the same operation (same count, same root), and a rank that waits longer than
 * FC_HANG_SECONDS (default 20) in a collective or a receive aborts the test, naming the call. */
#include "comm/fake_comm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct msg {
    int src;
    size_t n;
    struct msg *next;
    unsigned char data[];
} msg;

typedef struct callrec {
    const char *op;
    size_t n;               /* (size_t)-1: counts may differ between ranks */
    int root;
} callrec;

typedef struct group {
    int size, per_node;
    pthread_mutex_t bmu;    /* the barrier */
    pthread_cond_t bcv;
    int arrived;
    unsigned long gen;
    callrec *call;          /* per rank: the collective it is in */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const void **slot;      /* collective exchange: one pointer per rank */
    size_t *len;
    void **pub;             /* split: new groups published by their leaders */
    msg **inbox;            /* per destination rank */
    int refs;
} group;

typedef struct fc_ctx {
    group *g;
    int rank;
    char fail[32];
} fc_ctx;

static group *group_new(int size, int per_node)
{
    group *g = calloc(1, sizeof *g);
    g->size = size;
    g->per_node = per_node;
    pthread_mutex_init(&g->bmu, NULL);
    pthread_cond_init(&g->bcv, NULL);
    g->call = calloc((size_t)size, sizeof *g->call);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->slot = calloc((size_t)size, sizeof *g->slot);
    g->len = calloc((size_t)size, sizeof *g->len);
    g->pub = calloc((size_t)size, sizeof *g->pub);
    g->inbox = calloc((size_t)size, sizeof *g->inbox);
    return g;
}

static void group_unref(group *g)
{
    pthread_mutex_lock(&g->mu);
    int last = --g->refs == 0;
    pthread_mutex_unlock(&g->mu);
    if (!last) return;
    for (int r = 0; r < g->size; r++)
        for (msg *m = g->inbox[r], *n; m; m = n) {
            n = m->next;
            free(m);
        }
    pthread_mutex_destroy(&g->bmu);
    pthread_cond_destroy(&g->bcv);
    free(g->call);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g->slot);
    free(g->len);
    free(g->pub);
    free(g->inbox);
    free(g);
}

static fc_ctx *ctx_new(group *g, int rank)
{
    fc_ctx *c = calloc(1, sizeof *c);
    c->g = g;
    c->rank = rank;
    pthread_mutex_lock(&g->mu);
    g->refs++;
    pthread_mutex_unlock(&g->mu);
    return c;
}

static int failing(fc_ctx *c, const char *op)
{
    if (!c->fail[0] || strcmp(c->fail, op)) return 0;
    c->fail[0] = '\0';
    return 1;
}

static struct timespec deadline(void)
{
    const char *e = getenv("FC_HANG_SECONDS");
    int secs = e && atoi(e) > 0 ? atoi(e) : 20;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += secs;
    return t;
}

static void hang(int rank, const char *op)
{
    fprintf(stderr, "fake_comm: HANG: rank %d waited more than FC_HANG_SECONDS in %s\n", rank, op);
    abort();
}

static void wait_all(group *g)
{
    pthread_mutex_lock(&g->bmu);
    unsigned long gen = g->gen;
    if (++g->arrived == g->size) {
        g->arrived = 0;
        g->gen++;
        pthread_cond_broadcast(&g->bcv);
    }
    struct timespec t = deadline();
    while (gen == g->gen) {
        if (pthread_cond_timedwait(&g->bcv, &g->bmu, &t) && gen == g->gen) {
            int r = -1;
            const char *op = "a collective";
            for (int i = 0; i < g->size && r < 0; i++)
                if (g->call[i].op) r = i, op = g->call[i].op;
            pthread_mutex_unlock(&g->bmu);
            hang(r, op);
        }
    }
    pthread_mutex_unlock(&g->bmu);
}

/* Enters a collective: all ranks must be in the same one (checked after the first barrier). */
static void enter(fc_ctx *c, const char *op, size_t n, int root)
{
    group *g = c->g;
    g->call[c->rank] = (callrec){op, n, root};
    wait_all(g);
    const callrec *a = &g->call[0], *b = &g->call[c->rank];
    if (strcmp(a->op, b->op) || a->root != b->root || (a->n != (size_t)-1 && a->n != b->n)) {
        fprintf(stderr, "fake_comm: MISMATCH: rank 0 is in %s(n=%zu, root=%d), rank %d in "
                "%s(n=%zu, root=%d)\n", a->op, a->n, a->root, c->rank, b->op, b->n, b->root);
        abort();
    }
}

static int f_rank(void *ctx) { return ((fc_ctx *)ctx)->rank; }
static int f_size(void *ctx) { return ((fc_ctx *)ctx)->g->size; }

static int f_barrier(void *ctx)
{
    enter(ctx, "barrier", 0, 0);
    wait_all(((fc_ctx *)ctx)->g);
    return failing(ctx, "barrier") ? 99 : 0;
}

static int f_bcast(void *ctx, void *buf, size_t n, int root)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    if (c->rank == root) g->slot[root] = buf;
    enter(c, "bcast", n, root);
    if (c->rank != root && n) memcpy(buf, g->slot[root], n);
    wait_all(g);
    return failing(c, "bcast") ? 99 : 0;
}

static int f_gather(void *ctx, const void *send, size_t n, void *recv, const size_t *counts,
                    int root)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    g->slot[c->rank] = send;
    g->len[c->rank] = n;
    enter(c, "gather", (size_t)-1, root);
    if (c->rank == root && recv) {
        size_t at = 0;
        for (int r = 0; r < g->size; r++) {
            if (counts[r] != g->len[r]) abort(); /* the library's counts must be right */
            if (g->len[r]) memcpy((unsigned char *)recv + at, g->slot[r], g->len[r]);
            at += counts[r];
        }
    }
    wait_all(g);
    return failing(c, "gather") ? 99 : 0;
}

static int f_allreduce(void *ctx, int64_t *v, size_t n, gpubp_comm_reduce op)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    int64_t *t = malloc((n ? n : 1) * sizeof *t);
    g->slot[c->rank] = v;
    enter(c, "allreduce", n, (int)op);
    for (size_t i = 0; i < n; i++) {
        int64_t a = ((const int64_t *)g->slot[0])[i];
        for (int r = 1; r < g->size; r++) {
            int64_t b = ((const int64_t *)g->slot[r])[i];
            a = op == GPUBP_COMM_MIN ? (b < a ? b : a) : op == GPUBP_COMM_MAX ? (b > a ? b : a) : a + b;
        }
        t[i] = a;
    }
    wait_all(g);
    memcpy(v, t, n * sizeof *t);
    free(t);
    return failing(c, "allreduce") ? 99 : 0;
}

static int f_exscan(void *ctx, uint64_t *v, size_t n)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    uint64_t *t = calloc(n ? n : 1, sizeof *t);
    g->slot[c->rank] = v;
    enter(c, "exscan", n, 0);
    for (int r = 0; r < c->rank; r++)
        for (size_t i = 0; i < n; i++) t[i] += ((const uint64_t *)g->slot[r])[i];
    wait_all(g);
    memcpy(v, t, n * sizeof *t);
    free(t);
    return failing(c, "exscan") ? 99 : 0;
}

static int f_split(void *ctx, int color, int key, void **out)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    int me[2] = {color, key};
    g->slot[c->rank] = me;
    enter(c, "split", (size_t)-1, 0);
    /* my group: ranks of my color ordered by (key, rank); its first member creates it */
    int m = 0, pos = 0, leader = -1;
    for (int r = 0; r < g->size; r++) {
        const int *o = g->slot[r];
        if (o[0] != color) continue;
        m++;
        if (o[1] < key || (o[1] == key && r < c->rank)) pos++;
    }
    for (int r = 0; r < g->size && leader < 0; r++) {
        const int *o = g->slot[r];
        if (o[0] != color) continue;
        int p = 0;
        for (int q = 0; q < g->size; q++) {
            const int *oq = g->slot[q];
            if (oq[0] == color && (oq[1] < o[1] || (oq[1] == o[1] && q < r))) p++;
        }
        if (p == 0) leader = r;
    }
    wait_all(g);
    if (c->rank == leader) g->pub[c->rank] = group_new(m, g->per_node);
    wait_all(g);
    *out = ctx_new(g->pub[leader], pos);
    wait_all(g);
    return failing(c, "split") ? 99 : 0;
}

static int f_split_node(void *ctx, void **out)
{
    fc_ctx *c = ctx;
    int per = c->g->per_node > 0 ? c->g->per_node : c->g->size;
    return f_split(ctx, c->rank / per, c->rank, out);
}

static int f_send(void *ctx, const void *buf, size_t n, int dest)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    msg *m = malloc(sizeof *m + n);
    m->src = c->rank;
    m->n = n;
    m->next = NULL;
    if (n) memcpy(m->data, buf, n);
    pthread_mutex_lock(&g->mu);
    msg **p = &g->inbox[dest];
    while (*p) p = &(*p)->next;
    *p = m;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return failing(c, "send") ? 99 : 0;
}

static int f_recv(void *ctx, void *buf, size_t n, int src)
{
    fc_ctx *c = ctx;
    group *g = c->g;
    pthread_mutex_lock(&g->mu);
    struct timespec t = deadline();
    for (;;) {
        msg **p = &g->inbox[c->rank];
        while (*p && (*p)->src != src) p = &(*p)->next;
        if (*p) {
            msg *m = *p;
            *p = m->next;
            pthread_mutex_unlock(&g->mu);
            if (m->n != n) abort(); /* sizes must match, as the library promises */
            if (n) memcpy(buf, m->data, n);
            free(m);
            return failing(c, "recv") ? 99 : 0;
        }
        if (pthread_cond_timedwait(&g->cv, &g->mu, &t)) {
            pthread_mutex_unlock(&g->mu);
            hang(c->rank, "recv");
        }
    }
}

static void f_free(void *ctx)
{
    fc_ctx *c = ctx;
    group_unref(c->g);
    free(c);
}

const gpubp_comm_ops fc_ops = {
    GPUBP_COMM_OPS_VERSION, f_rank, f_size, f_barrier, f_bcast, f_gather, f_allreduce, f_exscan,
    f_split, f_split_node, f_send, f_recv, f_free,
};

void *fc_dup(void *ctx)
{
    fc_ctx *c = ctx;
    return ctx_new(c->g, c->rank);
}

void fc_fail_next(void *ctx, const char *op)
{
    fc_ctx *c = ctx;
    snprintf(c->fail, sizeof c->fail, "%s", op ? op : "");
}

typedef struct runner {
    fc_ctx *ctx;
    int size;
    fc_body body;
    void *arg;
} runner;

static void *run_one(void *p)
{
    runner *r = p;
    r->body(r->ctx, r->ctx->rank, r->size, r->arg);
    f_free(r->ctx);
    return NULL;
}

int fc_run(int n, int ranks_per_node, fc_body body, void *arg)
{
    group *g = group_new(n, ranks_per_node);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    runner *rs = calloc((size_t)n, sizeof *rs);
    g->refs = 1; /* this function's reference */
    int rc = 0, started = 0;
    for (int r = 0; r < n; r++) {
        rs[r] = (runner){ctx_new(g, r), n, body, arg};
        if (pthread_create(&t[r], NULL, run_one, &rs[r])) {
            rc = -1;
            abort(); /* half-started ranks would wait forever */
        }
        started++;
    }
    for (int r = 0; r < started; r++) pthread_join(t[r], NULL);
    free(t);
    free(rs);
    group_unref(g);
    return rc;
}
