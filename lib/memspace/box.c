/* Boxes inside dense row-major arrays, and the walk over their contiguous runs. */
#include "box.h"

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

int gbp_box_foreach_run(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_run_fn fn,
                        void *ctx)
{
    size_t nd = a->ndims;
    if (gbp_box_elements(a) == 0) return 0;
    if (nd == 0) return fn(ctx, 0, 0, elsize);
    size_t ka = run_dim(a), kb = b ? run_dim(b) : ka;
    size_t k = ka > kb ? ka : kb; /* runs must be contiguous in both arrays */
    size_t run = 1;
    for (size_t i = k; i < nd; i++) run *= a->count[i];
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
