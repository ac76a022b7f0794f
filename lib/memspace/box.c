/* Boxes inside dense row-major arrays, and the walk over their contiguous runs. */
#include "memspace/box.h"

#include <string.h>

void gbp_box_dense(gbp_box *b, size_t ndims, const size_t *count)
{
    b->ndims = ndims;
    for (size_t i = 0; i < ndims; i++) {
        b->dims[i] = count[i];
        b->start[i] = 0;
        b->count[i] = count[i];
    }
}

size_t gbp_box_elements(const gbp_box *b)
{
    size_t n = 1;
    for (size_t i = 0; i < b->ndims; i++) n *= b->count[i];
    return n;
}

size_t gbp_box_offset(const gbp_box *b)
{
    size_t off = 0;
    for (size_t i = 0; i < b->ndims; i++) off = off * b->dims[i] + b->start[i];
    return off;
}

/* Index of the first dimension k such that dims k+1.. are whole in the box: the box is made of
 * runs that span dims k.. (count[k] * prod(dims[k+1..]) elements each). */
static size_t run_dim(const gbp_box *b)
{
    size_t k = b->ndims;
    while (k > 0) {
        k--;
        if (b->count[k] != b->dims[k] || b->start[k] != 0) return k;
    }
    return 0;
}

int gbp_box_is_contiguous(const gbp_box *b)
{
    if (b->ndims == 0) return 1;
    size_t k = run_dim(b);
    for (size_t i = 0; i < k; i++)
        if (b->count[i] != 1) return 0;
    return 1;
}

/* The dimension the runs of a (and b) span from, and the elements of a run. */
static size_t run_dim2(const gbp_box *a, const gbp_box *b, size_t *run)
{
    size_t ka = run_dim(a), kb = b ? run_dim(b) : ka;
    size_t k = ka > kb ? ka : kb; /* runs must be contiguous in both arrays */
    *run = 1;
    for (size_t i = k; i < a->ndims; i++) *run *= a->count[i];
    return k;
}

size_t gbp_box_run_bytes(const gbp_box *a, const gbp_box *b, size_t elsize)
{
    size_t run = 1;
    if (a->ndims > 0) (void)run_dim2(a, b, &run);
    return run * elsize;
}

size_t gbp_box_span(const gbp_box *a, size_t elsize)
{
    if (gbp_box_elements(a) == 0) return 0;
    size_t first = 0, last = 0;
    for (size_t i = 0; i < a->ndims; i++) {
        first = first * a->dims[i] + a->start[i];
        last = last * a->dims[i] + a->start[i] + a->count[i] - 1;
    }
    return (last - first + 1) * elsize;
}

int gbp_box_sparse_pays(size_t span, size_t bytes, size_t run)
{
    if (run == 0 || bytes == 0 || span <= bytes) return 0;
    return (span - bytes) / GBP_SPARSE_GAP + 1 >= bytes / run; /* n runs: n - 1 gaps */
}

int gbp_box_foreach_run(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_run_fn fn,
                        void *ctx)
{
    size_t nd = a->ndims;
    if (gbp_box_elements(a) == 0) return 0;
    if (nd == 0) return fn(ctx, 0, 0, elsize);
    size_t run;
    size_t k = run_dim2(a, b, &run);
    size_t idx[GBP_MAX_DIMS] = {0};
    for (;;) {
        size_t oa = 0, ob = 0;
        for (size_t i = 0; i < nd; i++) {
            oa = oa * a->dims[i] + a->start[i] + (i < k ? idx[i] : 0);
            if (b) ob = ob * b->dims[i] + b->start[i] + (i < k ? idx[i] : 0);
        }
        int rc = fn(ctx, oa * elsize, ob * elsize, run * elsize);
        if (rc) return rc;
        size_t i = k;
        while (i > 0) {
            i--;
            if (++idx[i] < a->count[i]) break;
            idx[i] = 0;
            if (i == 0) return 0;
        }
        if (k == 0) return 0;
    }
}

typedef struct copy_ctx {
    const uint8_t *src;
    size_t sub;
    uint8_t *dst;
} copy_ctx;

static int copy_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    copy_ctx *c = ctx;
    memcpy(c->dst + b_off, c->src + (a_off - c->sub), bytes);
    return 0;
}

void gbp_box_copy_runs(const gbp_box *a, const gbp_box *b, size_t elsize, const uint8_t *src,
                       size_t sub, uint8_t *dst)
{
    copy_ctx c = {src, sub, dst};
    (void)gbp_box_foreach_run(a, b, elsize, copy_run, &c);
}

/* ---- 3-D pieces ------------------------------------------------------------------------------ */
typedef struct wdim {
    size_t cnt, sa, sb; /* count, byte strides in a and b */
} wdim;

int gbp_box_walk3d(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_piece_fn fn, void *ctx)
{
    size_t nd = a->ndims;
    if (gbp_box_elements(a) == 0) return 0;
    size_t stra = elsize, strb = elsize, base_a = 0, base_b = 0;
    wdim d[GBP_MAX_DIMS];
    size_t n = 0;
    /* inner to outer: strides, drop count-1 dims, merge dims contiguous in both arrays */
    for (size_t i = nd; i-- > 0;) {
        base_a += a->start[i] * stra;
        base_b += b->start[i] * strb;
        if (a->count[i] != 1) {
            if (n > 0 && d[n - 1].sa * d[n - 1].cnt == stra && d[n - 1].sb * d[n - 1].cnt == strb) {
                d[n - 1].cnt *= a->count[i];
            } else {
                d[n].cnt = a->count[i];
                d[n].sa = stra;
                d[n].sb = strb;
                n++;
            }
        }
        stra *= a->dims[i];
        strb *= b->dims[i];
    }
    /* d[0] is the innermost remaining dim */
    gbp_piece p = {base_a, base_b, elsize, 1, 1, 0, 0, 0, 0};
    size_t k = 0;
    if (n > 0 && d[0].sa == elsize && d[0].sb == elsize) p.width = d[k++].cnt * elsize;
    if (k < n) { p.height = d[k].cnt; p.apitch = d[k].sa; p.bpitch = d[k].sb; k++; }
    if (k < n) { p.depth = d[k].cnt; p.aslice = d[k].sa; p.bslice = d[k].sb; k++; }
    /* the remaining dims d[k..n-1] are walked one piece at a time */
    size_t idx[GBP_MAX_DIMS] = {0};
    for (;;) {
        gbp_piece q = p;
        for (size_t j = k; j < n; j++) {
            q.a_off += idx[j] * d[j].sa;
            q.b_off += idx[j] * d[j].sb;
        }
        int rc = fn(ctx, &q);
        if (rc) return rc;
        size_t j = k;
        for (; j < n; j++) {
            if (++idx[j] < d[j].cnt) break;
            idx[j] = 0;
        }
        if (j == n) return 0;
    }
}

/* ---- chunks ---------------------------------------------------------------------------------- */
static void array_strides(const gbp_box *b, size_t elsize, size_t *stride)
{
    size_t s = elsize;
    for (size_t i = b->ndims; i-- > 0;) {
        stride[i] = s;
        s *= b->dims[i];
    }
}

void gbp_chunker_init(gbp_chunker *c, const gbp_box *box, size_t elsize, size_t limit, int by_span)
{
    memset(c, 0, sizeof *c);
    c->box = *box;
    c->elsize = elsize;
    size_t nd = box->ndims;
    if (gbp_box_elements(box) == 0) {
        c->done = 1;
        return;
    }
    if (nd == 0) {
        c->cut = 0;
        c->step = 1;
        return;
    }
    size_t stride[GBP_MAX_DIMS];
    array_strides(box, elsize, stride);
    /* inner[i]: size of one index of dim i with everything inside (packed bytes or span) */
    size_t inner = elsize, cut = nd - 1;
    size_t inner_at[GBP_MAX_DIMS];
    for (size_t i = nd; i-- > 0;) {
        inner_at[i] = inner;
        if (by_span) inner = (box->count[i] - 1) * stride[i] + inner;
        else inner = box->count[i] * inner;
    }
    for (size_t i = 0; i < nd; i++) {
        if (inner_at[i] <= limit) {
            cut = i;
            break;
        }
    }
    size_t step;
    if (by_span) step = 1 + (limit - inner_at[cut]) / stride[cut];
    else step = limit / inner_at[cut];
    if (step > box->count[cut]) step = box->count[cut];
    if (step == 0) step = 1;
    c->cut = cut;
    c->step = step;
}

int gbp_chunker_next(gbp_chunker *c, gbp_chunk *out)
{
    if (c->done) return 0;
    const gbp_box *b = &c->box;
    size_t nd = b->ndims, cut = c->cut;
    size_t stride[GBP_MAX_DIMS];
    array_strides(b, c->elsize, stride);
    out->a = *b;
    size_t packed = 0, elems = 1, span_off = 0, span_last = 0;
    for (size_t i = 0; i < nd; i++) {
        size_t cnt;
        if (i < cut) cnt = 1;
        else if (i == cut) cnt = b->count[i] - c->idx[i] < c->step ? b->count[i] - c->idx[i] : c->step;
        else cnt = b->count[i];
        out->rel[i] = c->idx[i];
        out->count[i] = cnt;
        out->a.start[i] = b->start[i] + c->idx[i];
        out->a.count[i] = cnt;
        packed = packed * b->count[i] + c->idx[i];
        elems *= cnt;
        span_off += out->a.start[i] * stride[i];
        span_last += (out->a.start[i] + cnt - 1) * stride[i];
    }
    out->packed_off = packed * c->elsize;
    out->bytes = elems * c->elsize;
    out->span_off = span_off;
    out->span = span_last + c->elsize - span_off;
    /* advance: dim cut by step, then the dims before it as an odometer */
    if (nd == 0) {
        c->done = 1;
        return 1;
    }
    c->idx[cut] += out->count[cut];
    if (c->idx[cut] < b->count[cut]) return 1;
    c->idx[cut] = 0;
    size_t i = cut;
    while (i-- > 0) {
        if (++c->idx[i] < b->count[i]) return 1;
        c->idx[i] = 0;
    }
    c->done = 1;
    return 1;
}

void gbp_box_sub(gbp_box *out, const gbp_box *in, const size_t *rel, const size_t *count)
{
    *out = *in;
    for (size_t i = 0; i < in->ndims; i++) {
        out->start[i] = in->start[i] + rel[i];
        out->count[i] = count[i];
    }
}
