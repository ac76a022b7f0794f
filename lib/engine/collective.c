/* The library's side of the abstract communicator (<gpubp/comm.h>): checked wrappers that turn a
 * failed operation into a status with a message, variable-size gathers, and the agreement on a
 * status (with the message of the rank that decided it) that every collective call ends with. */
#include "engine/collective.h"

#include <stdio.h>

/* Failed operations seen by this thread (a rank): a caller compares the count before and after a
 * collective call to tell a broken communicator from an agreed failure. */
static _Thread_local unsigned long comm_failures;

unsigned long gbp_comm_failures_seen(void) { return comm_failures; }

static int comm_err(const char *op, int code)
{
    comm_failures++;
    return gbp_error(GPUBP_ERR_IO, code, "communicator operation %s failed (code %d)", op, code);
}

#define COMM_CALL(name, call) \
    do { int c_ = (call); if (c_) return comm_err(name, c_); } while (0)

int gbp_comm_open_failed(const gpubp_comm_ops *ops, void *ctx, int rc, const char *what);

/* top: the communicator of gpubp_open_comm, whose other ranks go on to the open's agreement */
static int make(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx, int top)
{
    *out = NULL;
    gbp_comm *c = gbp_calloc(1, sizeof *c);
    if (!c) {
        int rc = gbp_nomem();
        if (top) return gbp_comm_open_failed(ops, ctx, rc, "gpubp_open");
        ops->free(ctx);
        return rc;
    }
    c->ops = ops;
    c->ctx = ctx;
    c->rank = ops->rank(ctx);
    c->size = ops->size(ctx);
    if (c->size < 1 || c->rank < 0 || c->rank >= c->size) {
        int r = c->rank, s = c->size;
        gbp_comm_free(c);
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "communicator: rank %d of size %d", r, s);
    }
    *out = c;
    return GPUBP_OK;
}

int gbp_comm_make(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx)
{
    return make(out, ops, ctx, 0);
}

int gbp_comm_open(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx)
{
    return make(out, ops, ctx, 1);
}

/* A rank that cannot open (a bad argument, no memory for the wrapper) still takes part in the
 * open's first collective, the agreement of gpubp_open (api.c, open_file), so that the other
 * ranks fail with it instead of waiting for it; then ctx is released. */
int gbp_comm_open_failed(const gpubp_comm_ops *ops, void *ctx, int rc, const char *what)
{
    gbp_comm c = {ops, ctx, ops->rank(ctx), ops->size(ctx)};
    if (c.size >= 1 && c.rank >= 0 && c.rank < c.size) rc = gbp_comm_agree_all(&c, rc, what);
    ops->free(ctx);
    return rc;
}

void gbp_comm_free(gbp_comm *c)
{
    if (!c) return;
    c->ops->free(c->ctx);
    gbp_free(c);
}

int gbp_comm_barrier(gbp_comm *c)
{
    COMM_CALL("barrier", c->ops->barrier(c->ctx));
    return GPUBP_OK;
}

int gbp_comm_bcast(gbp_comm *c, void *buf, size_t n, int root)
{
    COMM_CALL("bcast", c->ops->bcast(c->ctx, buf, n, root));
    return GPUBP_OK;
}

int gbp_comm_allreduce(gbp_comm *c, int64_t *v, size_t n, gpubp_comm_reduce op)
{
    COMM_CALL("allreduce", c->ops->allreduce_i64(c->ctx, v, n, op));
    return GPUBP_OK;
}

int gbp_comm_exscan(gbp_comm *c, uint64_t *v, size_t n)
{
    COMM_CALL("exscan", c->ops->exscan_u64(c->ctx, v, n));
    return GPUBP_OK;
}

int gbp_comm_send(gbp_comm *c, const void *buf, size_t n, int dest)
{
    COMM_CALL("send", c->ops->send(c->ctx, buf, n, dest));
    return GPUBP_OK;
}

int gbp_comm_recv(gbp_comm *c, void *buf, size_t n, int src)
{
    COMM_CALL("recv", c->ops->recv(c->ctx, buf, n, src));
    return GPUBP_OK;
}

static int wrap_sub(gbp_comm *c, void *ctx, gbp_comm **out)
{
    return gbp_comm_make(out, c->ops, ctx);
}

int gbp_comm_split(gbp_comm *c, int color, int key, gbp_comm **out)
{
    void *ctx = NULL;
    COMM_CALL("split", c->ops->split(c->ctx, color, key, &ctx));
    return wrap_sub(c, ctx, out);
}

int gbp_comm_split_node(gbp_comm *c, gbp_comm **out)
{
    void *ctx = NULL;
    COMM_CALL("split_node", c->ops->split_node(c->ctx, &ctx));
    return wrap_sub(c, ctx, out);
}

/* A root out of memory takes part in both gathers (passing NULL buffers: it discards the bytes)
 * and then returns GPUBP_ERR_NOMEM: the only status other than a failed operation's
 * GPUBP_ERR_IO, so that a caller can tell a local failure (still to be agreed on) from a
 * failed operation. A rank whose first gather failed still takes part in the second. */
int gbp_comm_gatherv(gbp_comm *c, const void *p, size_t n, int root, uint8_t **all,
                     size_t **counts)
{
    *all = NULL;
    *counts = NULL;
    int me = c->rank == root;
    size_t sz = (size_t)c->size;
    uint64_t mine = n, *lens = NULL;
    size_t *eights = NULL, *cnt = NULL, total = 0;
    if (me) {
        lens = gbp_malloc(sz * sizeof *lens);
        eights = gbp_malloc(sz * sizeof *eights);
        cnt = gbp_malloc(sz * sizeof *cnt);
    }
    int nomem = me && (!lens || !eights || !cnt);
    for (size_t r = 0; me && !nomem && r < sz; r++) eights[r] = 8;
    int rc = c->ops->gather(c->ctx, &mine, 8, nomem ? NULL : lens, nomem ? NULL : eights, root);
    int known = me && !nomem && !rc; /* the root knows every rank's count */
    for (size_t r = 0; known && r < sz; r++) {
        cnt[r] = (size_t)lens[r];
        total += cnt[r];
    }
    uint8_t *buf = known ? gbp_malloc(total ? total : 1) : NULL;
    if (known && !buf) nomem = 1;
    int rc2 = c->ops->gather(c->ctx, p, n, buf, buf ? cnt : NULL, root);
    gbp_free(lens);
    gbp_free(eights);
    if (rc || rc2 || nomem) {
        gbp_free(buf);
        gbp_free(cnt);
        return rc || rc2 ? comm_err("gather", rc ? rc : rc2)
                         : gbp_nomem();
    }
    if (me) {
        *all = buf;
        *counts = cnt;
    }
    return GPUBP_OK;
}

int gbp_comm_agree(gbp_comm *c, int rc, int root)
{
    char msg[1024];
    int64_t head[2];
    head[0] = rc;
    snprintf(msg, sizeof msg, "%s", rc == GPUBP_OK ? "" : gbp_error_message());
    head[1] = (int64_t)gbp_error_native();
    /* both broadcasts, even after a failed first one: no rank is left in the second */
    int b1 = gbp_comm_bcast(c, head, sizeof head, root);
    int b2 = gbp_comm_bcast(c, msg, sizeof msg, root);
    GBP_FORWARD_IF_ERROR(b1);
    GBP_FORWARD_IF_ERROR(b2);
    msg[sizeof msg - 1] = '\0';
    if (head[0] == GPUBP_OK) return GPUBP_OK;
    return gbp_error((int)head[0], (int)head[1], "%s", msg);
}

int gbp_comm_agree_all(gbp_comm *c, int rc, const char *what)
{
    /* every rank's status and message go to rank 0, which names the failing ranks */
    uint8_t rec[12 + 400];
    int64_t st = rc;
    uint32_t ml = 0;
    if (rc != GPUBP_OK) {
        const char *m = gbp_error_message();
        ml = (uint32_t)(strlen(m) < 400 ? strlen(m) : 400);
        memcpy(rec + 12, m, ml);
    }
    memcpy(rec, &st, 8);
    memcpy(rec + 8, &ml, 4);
    uint8_t *all = NULL;
    size_t *cnt = NULL;
    int out = gbp_comm_gatherv(c, rec, 12 + ml, 0, &all, &cnt);
    if (out == GPUBP_OK && c->rank == 0) out = gbp_comm_failures(c, all, cnt, what);
    gbp_free(all);
    gbp_free(cnt);
    return gbp_comm_agree(c, out, 0);
}

int gbp_comm_check(gbp_comm *c, int rc, const char *what)
{
    /* the usual case costs one allreduce of the number of failing ranks */
    int64_t nfail = rc < 0;
    GBP_FORWARD_IF_ERROR(gbp_comm_allreduce(c, &nfail, 1, GPUBP_COMM_SUM));
    if (!nfail) return rc;
    return gbp_comm_agree_all(c, rc < 0 ? rc : GPUBP_OK, what);
}

int gbp_comm_failures(gbp_comm *c, const uint8_t *all, const size_t *cnt, const char *what)
{
    gbp_buf m;
    gbp_buf_init(&m);
    int first = GPUBP_OK, nfail = 0;
    size_t at = 0;
    for (int r = 0; r < c->size; r++) {
        int64_t st;
        uint32_t ml;
        memcpy(&st, all + at, 8);
        memcpy(&ml, all + at + 8, 4);
        if (st != GPUBP_OK) {
            if (first == GPUBP_OK) first = (int)st;
            if (nfail < 8) {
                char h[64];
                int hl = snprintf(h, sizeof h, "%srank %d: ", nfail ? "; " : "", r);
                gbp_buf_put(&m, h, (size_t)hl);
                gbp_buf_put(&m, all + at + 12, ml);
            }
            nfail++;
        }
        at += cnt[r];
    }
    int rc = GPUBP_OK;
    if (nfail) {
        gbp_buf_u8(&m, 0);
        rc = gbp_error(first, 0, "%s failed on %d of %d ranks: %s%s", what, nfail, c->size,
                       gbp_buf_ok(&m) ? (const char *)m.data : "(out of memory)",
                       nfail > 8 ? "; ..." : "");
    }
    gbp_buf_free(&m);
    return rc;
}
