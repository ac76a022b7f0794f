/* Merging the step metadata of several writers (ranks) into one md.0 step block, as ADIOS2's BP4
 * writer does (docs/format/bp4.md sections 5, 10): the PG entries back to back in rank order; one
 * entry per variable holding every rank's characteristic sets in rank order, its header taken
 * from the first rank that has the variable and its set count summed; each attribute from the
 * first rank that has it. Every input is a step block as one writer alone would write it. */
#include "format/bp4_merge.h"
#include "format/bp4_encode.h"

#include <stdio.h>

typedef struct mseg {
    const uint8_t *p;  /* characteristic sets (variables) or the whole entry (attributes) */
    size_t len;
    uint32_t slot;
} mseg;

typedef struct mslot {
    const uint8_t *head; /* entry from its length field through the set count */
    size_t head_len;
    const uint8_t *name;
    size_t name_len;
    uint64_t nsets;
    uint64_t body;       /* bytes of characteristic sets */
    size_t first_rank;
    int type;
} mslot;

typedef struct mtable {
    mslot *slots;
    size_t n, cap;
    size_t *hash;        /* slot + 1, 0 empty */
    size_t hcap;
} mtable;

static uint64_t hash_name(const uint8_t *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static int table_grow_hash(mtable *t)
{
    size_t cap = t->hcap ? t->hcap * 2 : 64;
    size_t *h = gbp_calloc(cap, sizeof *h);
    if (!h) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (metadata merge)");
    for (size_t i = 0; i < t->n; i++) {
        size_t j = (size_t)hash_name(t->slots[i].name, t->slots[i].name_len) & (cap - 1);
        while (h[j]) j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    gbp_free(t->hash);
    t->hash = h;
    t->hcap = cap;
    return GPUBP_OK;
}

/* The slot of name, created (unset) when new: *isnew tells. */
static int table_slot(mtable *t, const uint8_t *name, size_t nl, size_t *slot, int *isnew)
{
    if ((t->n + 1) * 2 > t->hcap) GBP_FORWARD_IF_ERROR(table_grow_hash(t));
    size_t j = (size_t)hash_name(name, nl) & (t->hcap - 1);
    while (t->hash[j]) {
        mslot *s = &t->slots[t->hash[j] - 1];
        if (s->name_len == nl && !memcmp(s->name, name, nl)) {
            *slot = t->hash[j] - 1;
            *isnew = 0;
            return GPUBP_OK;
        }
        j = (j + 1) & (t->hcap - 1);
    }
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&t->slots, &t->cap, t->n + 1, sizeof *t->slots));
    memset(&t->slots[t->n], 0, sizeof t->slots[t->n]);
    t->slots[t->n].name = name;
    t->slots[t->n].name_len = nl;
    t->hash[j] = t->n + 1;
    *slot = t->n++;
    *isnew = 1;
    return GPUBP_OK;
}

static void table_free(mtable *t)
{
    gbp_free(t->slots);
    gbp_free(t->hash);
}

static int bad(const char *what, size_t r, size_t at, const char *field)
{
    return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: metadata of rank %zu is damaged at byte %zu (%s)",
                     what, r, at, field);
}

/* One rank's section: count (u32 or u64) + u64 length + entries. *at advances past it. */
static int section(const uint8_t *p, size_t n, size_t *at, int count64, size_t *body,
                   size_t *blen, const char *what, size_t r)
{
    size_t hl = count64 ? 16 : 12;
    if (n - *at < hl) return bad(what, r, *at, "section header");
    uint64_t l = gbp_ld64(p + *at + hl - 8);
    if (l > n - *at - hl) return bad(what, r, *at, "section length");
    *body = *at + hl;
    *blen = (size_t)l;
    *at += hl + (size_t)l;
    return GPUBP_OK;
}

/* Walks the element entries of one section, adding them to the table (variables: their sets
 * become segments; attributes: only a rank's first copy of a new name). */
static int add_entries(mtable *t, mseg **segs, size_t *nsegs, size_t *cap, const uint8_t *p,
                       size_t body, size_t blen, int attrs, const char *what, size_t r)
{
    size_t at = body, end = body + blen;
    while (at < end) {
        if (end - at < 4) return bad(what, r, at, "entry length");
        size_t el = gbp_ld32(p + at), e = at + 4;
        if (el > end - e || el < 4 + 2) return bad(what, r, at, "entry length");
        size_t gl = gbp_ld16(p + e + 4);
        size_t q = e + 6 + gl;
        if (q + 2 > e + el) return bad(what, r, at, "entry group name");
        size_t nl = gbp_ld16(p + q);
        const uint8_t *name = p + q + 2;
        size_t hl = (q + 2 + nl + 3 + 8) - at;
        if (at + hl > e + el) return bad(what, r, at, "entry header");
        int type = p[q + 2 + nl + 2];
        uint64_t nsets = gbp_ld64(p + q + 2 + nl + 3);
        size_t slot;
        int isnew;
        GBP_FORWARD_IF_ERROR(table_slot(t, name, nl, &slot, &isnew));
        mslot *s = &t->slots[slot];
        if (isnew) {
            s->head = p + at;
            s->head_len = hl;
            s->type = type;
            s->first_rank = r;
        } else if (attrs) {
            at = e + el;
            continue; /* the first rank's attribute wins */
        } else if (s->type != type) {
            return gbp_error(GPUBP_ERR_TYPE_MISMATCH, 0,
                             "%s: variable '%.*s' is %s on rank %zu but %s on rank %zu", what,
                             (int)nl, (const char *)name, gbp_type_name(s->type), s->first_rank,
                             gbp_type_name(type), r);
        }
        s->nsets += nsets;
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)segs, cap, *nsegs + 1, sizeof **segs));
        mseg *g = &(*segs)[(*nsegs)++];
        g->slot = (uint32_t)slot;
        g->p = attrs ? p + at : p + at + hl;
        g->len = attrs ? 4 + el : 4 + el - hl;
        s->body += g->len;
        at = e + el;
    }
    return GPUBP_OK;
}

/* Appends the merged entries of one table: counting sort of the segments by slot keeps the rank
 * order inside each slot. */
static int emit(gbp_buf *out, mtable *t, mseg *segs, size_t nsegs, int attrs)
{
    size_t hdr = out->len;
    gbp_buf_u32(out, (uint32_t)t->n);
    gbp_buf_u64(out, 0);
    size_t *first = gbp_calloc(t->n + 1, sizeof *first);
    mseg *sorted = gbp_malloc((nsegs ? nsegs : 1) * sizeof *sorted);
    if (!first || !sorted) {
        gbp_free(first);
        gbp_free(sorted);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (metadata merge)");
    }
    for (size_t i = 0; i < nsegs; i++) first[segs[i].slot + 1]++;
    for (size_t i = 0; i < t->n; i++) first[i + 1] += first[i];
    for (size_t i = 0; i < nsegs; i++) sorted[first[segs[i].slot]++] = segs[i];
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        mslot *s = &t->slots[i];
        if (attrs) {
            gbp_buf_put(out, sorted[k].p, sorted[k].len);
            k++;
            continue;
        }
        size_t at = out->len;
        gbp_buf_put(out, s->head, s->head_len);
        if (gbp_buf_ok(out)) gbp_buf_set_u64(out, at + s->head_len - 8, s->nsets);
        for (; k < nsegs && sorted[k].slot == i; k++) gbp_buf_put(out, sorted[k].p, sorted[k].len);
        if (gbp_buf_ok(out)) bp4_entry_end(out, at);
    }
    gbp_free(first);
    gbp_free(sorted);
    if (gbp_buf_ok(out)) gbp_buf_set_u64(out, hdr + 4, (uint64_t)(out->len - hdr - 12));
    return gbp_buf_ok(out) ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (metadata merge)");
}

int bp4_merge_steps(gbp_buf *out, size_t n, const uint8_t *const *blk, const size_t *len,
                    const char *what)
{
    mtable vars = {0}, attrs = {0};
    mseg *vsegs = NULL, *asegs = NULL;
    size_t nv = 0, cv = 0, na = 0, ca = 0;
    size_t *pos = gbp_calloc(n ? 3 * n : 1, sizeof *pos);
    int rc = pos ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (metadata merge)");
    /* 1. the PG index: counts summed, entries concatenated */
    uint64_t npg = 0, pglen = 0;
    for (size_t r = 0; r < n && rc == GPUBP_OK; r++) {
        size_t at = 0, body = 0, blen = 0;
        rc = section(blk[r], len[r], &at, 1, &body, &blen, what, r);
        if (rc != GPUBP_OK) break;
        npg += gbp_ld64(blk[r]);
        pglen += blen;
        pos[3 * r] = at;
    }
    if (rc == GPUBP_OK) {
        gbp_buf_u64(out, npg);
        gbp_buf_u64(out, pglen);
        for (size_t r = 0; r < n; r++) gbp_buf_put(out, blk[r] + 16, pos[3 * r] - 16);
    }
    /* 2. variables and attributes */
    for (size_t r = 0; r < n && rc == GPUBP_OK; r++) {
        size_t at = pos[3 * r], body = 0, blen = 0;
        rc = section(blk[r], len[r], &at, 0, &body, &blen, what, r);
        if (rc == GPUBP_OK) rc = add_entries(&vars, &vsegs, &nv, &cv, blk[r], body, blen, 0, what, r);
        if (rc == GPUBP_OK) rc = section(blk[r], len[r], &at, 0, &body, &blen, what, r);
        if (rc == GPUBP_OK) rc = add_entries(&attrs, &asegs, &na, &ca, blk[r], body, blen, 1, what, r);
        if (rc == GPUBP_OK && at != len[r]) rc = bad(what, r, at, "trailing bytes");
    }
    if (rc == GPUBP_OK) rc = emit(out, &vars, vsegs, nv, 0);
    if (rc == GPUBP_OK) rc = emit(out, &attrs, asegs, na, 1);
    table_free(&vars);
    table_free(&attrs);
    gbp_free(vsegs);
    gbp_free(asegs);
    gbp_free(pos);
    return rc;
}
