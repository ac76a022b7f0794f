/* The staged encoder's puts for an outside codec (a GPU codes the streams): put_ext cuts the
 * input into units and lists their streams, emit_ext takes the codec's results as compress_task's
 * and emits (blosc_enc.c). */
#include "compress/blosc_encx.h"

#include <string.h>

#define SWAP(T, a, b) do { T t_ = (a); (a) = (b); (b) = t_; } while (0)

/* The pending put's units and streams <-> the held put's. */
static void swap_held(gbp_blosc_enc *e)
{
    SWAP(unit *, e->u, e->hu);
    SWAP(gbp_blosc_xstream *, e->xs, e->hxs);
    SWAP(size_t, e->nu, e->hnu);
    SWAP(size_t, e->cap_u, e->hcap_u);
    SWAP(size_t, e->nxs, e->hnxs);
    SWAP(size_t, e->cap_xs, e->hcap_xs);
}

int gbp_blosc_enc_put_ext(gbp_blosc_enc *e, size_t len, const gbp_blosc_xstream **xs, size_t *nxs)
{
    GBP_CHECK_ARG(e);
    GBP_CHECK_ARG(xs);
    GBP_CHECK_ARG(nxs);
    GBP_RETURN_ERROR_IF(e->taken > 0 && !e->xmode, GPUBP_ERR_INVALID_ARG, "blosc: put_ext after put");
    /* ahead of the pending put's emit: cut into the held arrays (the units of a chunk that its
     * emit abandons are cut as if it did not: emit places them raw, as within one put) */
    int ahead = e->put_pending && e->xmode;
    GBP_RETURN_ERROR_IF(ahead && e->held, GPUBP_ERR_INVALID_ARG, "blosc: a third put_ext before an emit");
    if (ahead) swap_held(e);
    e->put_pending = 0;
    e->xmode = 1;
    e->nxs = 0;
    int rc = gbp_blosc_enc_cut(e, NULL, len);
    for (size_t t = 0; rc == GPUBP_OK && t < e->nu; t++) {
        unit *r = &e->u[t];
        r->sidx = e->nxs;
        if (r->kind == BLK_SKIP) continue;
        rc = gbp_blosc_enc_grow((void **)&e->xs, &e->cap_xs, e->nxs + r->nst, sizeof *e->xs);
        size_t neblock = r->len / r->nst;
        for (unsigned s = 0; rc == GPUBP_OK && s < r->nst; s++)
            e->xs[e->nxs++] = (gbp_blosc_xstream){r->in_off + s * neblock, neblock};
    }
    *xs = e->xs;
    *nxs = e->nxs;
    if (ahead) {
        swap_held(e);
        e->put_pending = 1;
        e->held = rc == GPUBP_OK;
    }
    return rc;
}

int gbp_blosc_enc_emit_ext(gbp_blosc_enc *e, const int16_t *run, const size_t *clen, uint8_t *out,
                           size_t cap, const gbp_blosc_extent **ext, size_t *next,
                           const gbp_dz_seg **seg, size_t *nseg)
{
    GBP_CHECK_ARG(e);
    GBP_CHECK_ARG(seg);
    GBP_CHECK_ARG(nseg);
    GBP_RETURN_ERROR_IF(!e->xmode || !e->put_pending, GPUBP_ERR_INVALID_ARG,
                        "blosc: emit_ext without put_ext");
    GBP_RETURN_ERROR_IF(e->nxs && (!run || !clen), GPUBP_ERR_INVALID_ARG,
                        "blosc: emit_ext without results");
    for (size_t t = 0; t < e->nu; t++) { /* the outside codec's results, as compress_task's */
        unit *r = &e->u[t];
        if (r->kind == BLK_SKIP) continue;
        size_t neblock = r->len / r->nst;
        for (unsigned s = 0; s < r->nst; s++) {
            size_t i = r->sidx + s;
            r->sk[s] = run[i] >= 0 ? S_RUN : clen[i] > 0 && clen[i] < neblock ? S_CODED : S_RAW;
            r->run[s] = run[i] >= 0 ? (uint8_t)run[i] : 0;
            r->clen[s] = r->sk[s] == S_CODED ? (uint32_t)clen[i] : 0;
        }
        r->kind = BLK_DONE;
    }
    e->nseg = 0;
    int rc = gbp_blosc_enc_emit(e, out, cap, ext, next);
    *seg = e->seg;
    *nseg = rc == GPUBP_OK ? e->nseg : 0;
    if (rc == GPUBP_OK && e->held) { /* the held put is the pending one now */
        swap_held(e);
        e->held = 0;
        e->put_pending = 1;
    }
    return rc;
}
