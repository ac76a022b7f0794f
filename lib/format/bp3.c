/* BP3 files (docs/format/bp3.md). A BP3 file NAME.bp ends with one index of every step: the PG
 * index (one entry per process group, each naming its time step), the variable index (one entry
 * per variable, its characteristic sets of every step, each with its time index) and the attribute
 * index, then a 56-byte mini-footer that locates the three. Entries and characteristic sets are
 * laid out as in BP4's md.0, where each step has indexes of its own: so the BP4 reader reads a BP3
 * file once its index is cut into steps (bp3_to_bp4), in one pass over the index: every set is
 * listed with its step, the list is ordered by step (entries keep their order), and each step's
 * entries are written with the sets of that step only. */
#include "format/bp3.h"

#include "format/bp4_decode.h"
#include "format/bp4_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bp3_parse_footer(const uint8_t f[BP3_FOOTER_SIZE], uint64_t fsize, bp3_footer *ft,
                     const char *what)
{
    memset(ft, 0, sizeof *ft);
    if (fsize >= BP3_FOOTER_SIZE && (f[55] == 1 || f[55] == 2) && f[52] <= 1)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: a BP version %u file (ADIOS 1.x): not "
                         "read (ADIOS2 reads BP version 3 and later)", what, f[55]);
    if (fsize < BP3_FOOTER_SIZE || f[55] != 3 || f[52] > 1)
        return gbp_error(GPUBP_ERR_NOT_BP4, 0, "%s is not a BP4 or BP5 dataset (not a directory) "
                         "nor a BP3 file (no BP3 mini-footer)", what);
    if (f[52] == 1)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: big-endian BP3 files are not supported",
                         what);
    ft->has_subfiles = f[54] == 3;
    for (int i = 0; i < 3; i++) ft->writer[i] = f[24 + i] - '0';
    ft->pg = gbp_ld64(f + 28);
    ft->var = gbp_ld64(f + 36);
    ft->attr = gbp_ld64(f + 44);
    uint64_t end = fsize - BP3_FOOTER_SIZE;
    if (!(ft->pg <= ft->var && ft->var - ft->pg >= 16 && ft->var <= ft->attr &&
          ft->attr - ft->var >= 12 && ft->attr <= end))
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: mini-footer at offset %llu: index offsets "
                         "%llu / %llu / %llu out of order or past the index's end (%llu)", what,
                         (unsigned long long)end, (unsigned long long)ft->pg,
                         (unsigned long long)ft->var, (unsigned long long)ft->attr,
                         (unsigned long long)end);
    return GPUBP_OK;
}

/* Steps of no process group (ADIOS2's BP3 writer's steps without puts) presented, at most: beyond,
 * the PG index is taken for damaged. */
#define BP3_MAX_EMPTY_STEPS ((size_t)1 << 20)

typedef struct pg_ent {
    uint32_t step;
    size_t at, len; /* in m: from the entry's length field */
} pg_ent;

typedef struct set_ref {
    size_t si;                     /* step index */
    size_t ord;                    /* order in the index */
    size_t entry_at, hdr, at, len; /* in the walked region */
} set_ref;

typedef struct walk {
    const uint32_t *steps;
    size_t nsteps;
    set_ref *refs;
    size_t n, cap;
    size_t last_entry; /* attributes: the entry whose first set is kept */
    uint64_t base;     /* file offset of the walked region */
    const char *what;
} walk;

static int add_ref(walk *w, size_t si, size_t entry_at, size_t hdr, size_t at, size_t len)
{
    if (w->n == w->cap) {
        size_t c = w->cap ? 2 * w->cap : 64;
        set_ref *r = gbp_realloc(w->refs, c * sizeof *r);
        if (!r) return gbp_nomem();
        w->refs = r;
        w->cap = c;
    }
    w->refs[w->n] = (set_ref){si, w->n, entry_at, hdr, at, len};
    w->n++;
    return GPUBP_OK;
}

static int var_set(void *ctx, size_t entry_at, size_t hdr, size_t at, size_t len, uint32_t step)
{
    walk *w = ctx;
    size_t lo = 0, hi = w->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->steps[mid] < step) lo = mid + 1;
        else hi = mid;
    }
    if (lo == w->nsteps || w->steps[lo] != step)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: variable index, offset %llu: a block of time "
                         "step %u, which no process group has", w->what,
                         (unsigned long long)(w->base + at), step);
    return add_ref(w, (size_t)step - 1, entry_at, hdr, at, len);
}

/* ADIOS2's BP3 reader defines each attribute from its entry's first set */
static int attr_set(void *ctx, size_t entry_at, size_t hdr, size_t at, size_t len, uint32_t step)
{
    (void)step;
    walk *w = ctx;
    if (w->n && w->last_entry == entry_at) return GPUBP_OK;
    w->last_entry = entry_at;
    return add_ref(w, 0, entry_at, hdr, at, len);
}

static int cmp_ref(const void *a, const void *b)
{
    const set_ref *x = a, *y = b;
    if (x->si != y->si) return x->si < y->si ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* process groups by step, in index order within a step */
static int cmp_pg(const void *a, const void *b)
{
    const pg_ent *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* A step no process group has: ADIOS2's BP3 writer leaves a step without puts out of the PG
 * index, while the blocks of later steps keep counting it in their time index (ADIOS2 lists their
 * blocks by it); BP4 and BP5 writers keep such a step, empty. So does this reader: an entry with
 * an empty IO name, the first one's order flag, rank 0, the step's number, offset 0 (no data):
 * EMPTY_PG_MAX bytes at most. */
#define EMPTY_PG_MAX (2 + 2 + 1 + 4 + 2 + 10 + 4 + 8)

static void put_empty_pg(gbp_buf *o, const uint8_t *m, const pg_ent *first, uint32_t step)
{
    char sn[16];
    int sl = snprintf(sn, sizeof sn, "%u", step);
    size_t nl = gbp_ld16(m + first->at + 2);
    gbp_buf_u16(o, (uint16_t)(sl + 21));
    gbp_buf_bpstr(o, "", 0);
    gbp_buf_u8(o, m[first->at + 4 + nl]); /* the column-major flag */
    gbp_buf_u32(o, 0);
    gbp_buf_bpstr(o, sn, (size_t)sl);
    gbp_buf_u32(o, step);
    gbp_buf_u64(o, 0);
}

/* Appends an index (u32 count, u64 length, entries) of the refs [*k, n) of step si, the sets of
 * each entry after its header with the set count and the entry length rewritten. */
static void put_index(gbp_buf *o, const uint8_t *p, const set_ref *r, size_t n, size_t *k,
                      size_t si)
{
    size_t head = o->len;
    gbp_buf_u32(o, 0);
    gbp_buf_u64(o, 0);
    uint32_t count = 0;
    while (*k < n && r[*k].si == si) {
        const set_ref *e = &r[*k];
        size_t at = o->len;
        gbp_buf_put(o, p + e->entry_at, e->hdr);
        uint64_t nsets = 0;
        for (; *k < n && r[*k].si == si && r[*k].entry_at == e->entry_at; (*k)++, nsets++)
            gbp_buf_put(o, p + r[*k].at, r[*k].len);
        if (!gbp_buf_ok(o)) return;
        gbp_buf_set_u64(o, at + e->hdr - 8, nsets);
        gbp_buf_set_u32(o, at, (uint32_t)(o->len - at - 4));
        count++;
    }
    if (!gbp_buf_ok(o)) return;
    gbp_buf_set_u32(o, head, count);
    gbp_buf_set_u64(o, head + 4, o->len - head - 12);
}

/* The PG index: m[16, end) holds entries of a u16 length and that many bytes */
static int read_pgs(const uint8_t *m, size_t end, uint64_t base, pg_ent **out, size_t *nout,
                    const char *what)
{
    pg_ent *pg = NULL;
    size_t n = 0, cap = 0;
    /* each: u16 length, then name (u16 + bytes), column-major flag, process id (u32), step name
     * (u16 + bytes), step (u32), offset (u64) */
    for (size_t at = 16; at < end;) {
        size_t len = end - at >= 2 ? (size_t)gbp_ld16(m + at) + 2 : 0, nl = 0, sn = 0;
        int ok = len >= 4 && len <= end - at;
        if (ok) nl = gbp_ld16(m + at + 2);
        ok = ok && nl + 11 <= len;
        if (ok) sn = gbp_ld16(m + at + 4 + nl + 5);
        if (!ok || nl + sn + 23 > len) {
            gbp_free(pg);
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: damaged PG index entry at offset %llu",
                             what, (unsigned long long)(base + at));
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            pg_ent *q = gbp_realloc(pg, cap * sizeof *q);
            if (!q) {
                gbp_free(pg);
                return gbp_nomem();
            }
            pg = q;
        }
        pg[n++] = (pg_ent){gbp_ld32(m + at + 4 + nl + 5 + 2 + sn), at, len};
        at += len;
    }
    if (n == 0) return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the PG index at offset %llu is empty",
                                 what, (unsigned long long)base);
    *out = pg;
    *nout = n;
    return GPUBP_OK;
}

/* The metadata bp3_to_bp4 would make, counted before it is made: each step repeats the header of
 * every entry it has sets of, and each step of no process group gets one made up, so a small
 * index can describe much more (long names over many steps, a step number far beyond the others).
 * More than BP3_MAX_GROWTH times the index and BP3_MAX_EXTRA bytes is refused. */
#define BP3_MAX_GROWTH 16
#define BP3_MAX_EXTRA ((uint64_t)64 << 20)

static int check_size(const walk *vw, const walk *aw, const pg_ent *pg, size_t npg, size_t ns,
                      size_t nd, size_t n, const char *what)
{
    uint64_t total = 2 * BP4_HEADER_SIZE + (uint64_t)ns * (16 + 12 + 12 + BP4_IDX_RECORD_SIZE) +
                     (uint64_t)(ns - nd) * EMPTY_PG_MAX;
    for (size_t i = 0; i < npg; i++) total += pg[i].len;
    for (size_t i = 0; i < vw->n; i++) {
        const set_ref *r = &vw->refs[i];
        int first = i == 0 || r->si != r[-1].si || r->entry_at != r[-1].entry_at;
        total += r->len + (first ? r->hdr : 0);
    }
    for (size_t i = 0; i < aw->n; i++) total += aw->refs[i].len + aw->refs[i].hdr;
    uint64_t limit = (uint64_t)n * BP3_MAX_GROWTH + BP3_MAX_EXTRA;
    if (total > limit)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: its index of %zu bytes describes %llu bytes of "
                         "step metadata (%zu steps; at most %llu are made from an index of this "
                         "size): damaged", what, n, (unsigned long long)total, ns,
                         (unsigned long long)limit);
    return GPUBP_OK;
}

int bp3_to_bp4(const uint8_t *m, size_t n, const bp3_footer *ft, gbp_buf *md0, gbp_buf *idx,
               const char *what)
{
    size_t var = (size_t)(ft->var - ft->pg), attr = (size_t)(ft->attr - ft->pg);
    if (n < BP3_FOOTER_SIZE || attr > n - BP3_FOOTER_SIZE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the index is cut short", what);
    if (n - BP3_FOOTER_SIZE - attr < 12) /* the attribute index's count and length */
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the attribute index at offset %llu is cut short "
                         "(%zu bytes before the mini-footer, 12 at least)", what,
                         (unsigned long long)ft->attr, n - BP3_FOOTER_SIZE - attr);
    pg_ent *pg = NULL;
    size_t npg = 0;
    GBP_FORWARD_IF_ERROR(read_pgs(m, var, ft->pg, &pg, &npg, what));
    uint32_t *steps = gbp_malloc(npg * sizeof *steps);
    walk vw = {0}, aw = {0};
    int rc = steps ? GPUBP_OK : gbp_nomem();
    size_t nd = 0, ns = 0; /* distinct steps of the PG index; steps presented: 1 .. the last */
    if (rc == GPUBP_OK) {
        qsort(pg, npg, sizeof *pg, cmp_pg);
        for (size_t i = 0; i < npg; i++) steps[i] = pg[i].step;
        for (size_t i = 0; i < npg; i++)
            if (i == 0 || steps[i] != steps[nd - 1]) steps[nd++] = steps[i];
        ns = steps[nd - 1];
        if (steps[0] == 0 || ns - nd > BP3_MAX_EMPTY_STEPS)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the PG index at offset %llu has steps %u to "
                           "%u in %zu process groups", what, (unsigned long long)ft->pg,
                           steps[0], steps[nd - 1], npg);
    }
    if (rc == GPUBP_OK) {
        vw = (walk){steps, nd, NULL, 0, 0, 0, ft->var + 12, what};
        aw = (walk){steps, nd, NULL, 0, 0, 0, ft->attr + 12, what};
        rc = bp4_walk_sets(m + var + 12, ft->var + 12, attr - var - 12, 1, var_set, &vw, what);
    }
    if (rc == GPUBP_OK)
        rc = bp4_walk_sets(m + attr + 12, ft->attr + 12, n - BP3_FOOTER_SIZE - attr - 12, 0,
                           attr_set, &aw, what);
    if (rc == GPUBP_OK && vw.n) qsort(vw.refs, vw.n, sizeof *vw.refs, cmp_ref);
    if (rc == GPUBP_OK) rc = check_size(&vw, &aw, pg, npg, ns, nd, n, what);
    if (rc == GPUBP_OK) {
        uint8_t h[BP4_HEADER_SIZE];
        bp4_make_header(h, BP4_KIND_METADATA, 0);
        gbp_buf_put(md0, h, sizeof h);
        bp4_make_header(h, BP4_KIND_INDEX, 0);
        gbp_buf_put(idx, h, sizeof h);
        size_t kv = 0, ka = 0, kp = 0;
        for (size_t s = 0; s < ns && gbp_buf_ok(md0); s++) {
            bp4_idx_record r = {s + 1, 0, md0->len, 0, 0, 0, 0};
            size_t k0 = kp, head = md0->len;
            gbp_buf_u64(md0, 0);
            gbp_buf_u64(md0, 0);
            for (; kp < npg && pg[kp].step == s + 1; kp++)
                gbp_buf_put(md0, m + pg[kp].at, pg[kp].len);
            if (kp == k0) put_empty_pg(md0, m, &pg[0], (uint32_t)(s + 1));
            if (!gbp_buf_ok(md0)) break;
            gbp_buf_set_u64(md0, head, kp == k0 ? 1 : kp - k0);
            gbp_buf_set_u64(md0, head + 8, md0->len - head - 16);
            r.var_off = md0->len;
            put_index(md0, m + var + 12, vw.refs, vw.n, &kv, s);
            r.attr_off = md0->len;
            put_index(md0, m + attr + 12, aw.refs, s == 0 ? aw.n : 0, &ka, 0);
            r.end = md0->len;
            uint8_t rec[BP4_IDX_RECORD_SIZE];
            bp4_make_idx_record(rec, &r);
            gbp_buf_put(idx, rec, sizeof rec);
        }
        if (!gbp_buf_ok(md0) || !gbp_buf_ok(idx)) rc = gbp_nomem();
    }
    gbp_free(vw.refs);
    gbp_free(aw.refs);
    gbp_free(steps);
    gbp_free(pg);
    return rc;
}
