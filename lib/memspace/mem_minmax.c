/* Min/max of device blocks: a reduction on the device per block whose result lands in a pinned
 * entry (pages of GBP_MM_PAGE_ENTRIES entries), handed to the caller's pointers at
 * gbp_mem_wait_staged / gbp_mem_sync. */
#include "memspace/mem_minmax.h"

#include <string.h>

#include "memspace/mem_ctx.h"

static int mm_entry(gbp_mem *m, uint8_t **entry)
{
    size_t page = m->mm_used / GBP_MM_PAGE_ENTRIES, at = m->mm_used % GBP_MM_PAGE_ENTRIES;
    mm_page **pp = &m->pages;
    for (size_t i = 0; i < page && *pp; i++) pp = &(*pp)->next;
    if (!*pp) {
        mm_page *p = gbp_calloc(1, sizeof *p);
        if (!p) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (min/max results)");
        int rc = m->ops->host_alloc(m->dctx, (void **)&p->mem, GBP_MM_PAGE_ENTRIES * GBP_MM_ENTRY);
        if (rc) {
            gbp_free(p);
            return rc;
        }
        *pp = p;
    }
    *entry = (*pp)->mem + at * GBP_MM_ENTRY;
    m->mm_used++;
    return GPUBP_OK;
}

typedef struct mm_ctx {
    gbp_mem *m;
    int type;
    const uint8_t *base;
} mm_ctx;

static int mm_piece(void *vc, const gbp_piece *p)
{
    mm_ctx *c = vc;
    return c->m->ops->minmax_region(c->m->dctx, c->type, c->base + p->a_off, p->width, p->height,
                                    p->depth, p->apitch, p->aslice);
}

int gbp_mem_minmax_queue(gbp_mem *m, const void *base, int type, const gbp_box *src, void *min,
                         void *max)
{
    if (m->npend == m->cap_pend) {
        size_t cap = m->cap_pend ? m->cap_pend * 2 : 64;
        mm_pending *p = gbp_realloc(m->pend, cap * sizeof *p);
        if (!p) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (min/max results)");
        m->pend = p;
        m->cap_pend = cap;
    }
    uint8_t *entry = NULL;
    GBP_FORWARD_IF_ERROR(mm_entry(m, &entry));
    GBP_FORWARD_IF_ERROR(m->ops->minmax_begin(m->dctx, type));
    mm_ctx c = {m, type, base};
    GBP_FORWARD_IF_ERROR(gbp_box_walk3d(src, src, gbp_type_size(type), mm_piece, &c));
    GBP_FORWARD_IF_ERROR(m->ops->minmax_end(m->dctx, type, entry));
    m->pend[m->npend++] = (mm_pending){min, max, type, entry};
    return GPUBP_OK;
}

/* After the device copies completed: min/max results to their owners, the user's stream told
 * that the buffers are free. Nothing on a failure so far (the step fails). */
void gbp_mem_minmax_deliver(gbp_mem *m)
{
    if (!gbp_memctx_has_error(m)) {
        for (size_t i = 0; i < m->npend; i++) {
            size_t el = gbp_type_size(m->pend[i].type);
            memcpy(m->pend[i].min, m->pend[i].entry, el);
            memcpy(m->pend[i].max, m->pend[i].entry + el, el);
        }
        if (m->user_stream) gbp_memctx_keep_error(m, m->ops->signal_user_stream(m->dctx));
    }
    m->npend = 0;
    m->mm_used = 0;
}
