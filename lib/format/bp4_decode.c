/* BP4 decoding with every length and offset checked before use. A failure names the file and
 * the offset of the field that was wrong. */
#include "format/bp4_decode.h"

typedef struct cur {
    const uint8_t *p;
    uint64_t base; /* md.0 offset of p[0] */
    size_t n;      /* bytes in the whole buffer */
    size_t at;     /* read position */
    size_t end;    /* limit of the current region */
    const char *what;
} cur;

#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int short_err(const cur *c, size_t need, const char *field)
{
    return gbp_error(GPUBP_ERR_FORMAT, 0,
                     "%s: damaged metadata at offset %llu: %s needs %zu bytes, %zu left", c->what,
                     (unsigned long long)(c->base + c->at), field, need,
                     c->end > c->at ? c->end - c->at : 0);
}

#define TRY(expr) do { int try_rc_ = (expr); if (try_rc_) return try_rc_; } while (0)

#define NEED(c, k, field) \
    do { if ((c)->end < (c)->at || (c)->end - (c)->at < (k)) return short_err((c), (k), (field)); } while (0)

static inline int rd8(cur *c, uint8_t *v, const char *f) { *v = 0; NEED(c, 1, f); *v = c->p[c->at++]; return 0; }
static inline int rd16(cur *c, uint16_t *v, const char *f) { *v = 0; NEED(c, 2, f); *v = gbp_ld16(c->p + c->at); c->at += 2; return 0; }
static inline int rd32(cur *c, uint32_t *v, const char *f) { *v = 0; NEED(c, 4, f); *v = gbp_ld32(c->p + c->at); c->at += 4; return 0; }
static inline int rd64(cur *c, uint64_t *v, const char *f) { *v = 0; NEED(c, 8, f); *v = gbp_ld64(c->p + c->at); c->at += 8; return 0; }
static inline int skip(cur *c, size_t k, const char *f) { NEED(c, k, f); c->at += k; return 0; }
static inline int rdstr(cur *c, const char **s, size_t *len, const char *f)
{
    uint16_t l;
    *s = NULL;
    *len = 0;
    TRY(rd16(c, &l, f));
    NEED(c, l, f);
    *s = (const char *)c->p + c->at;
    *len = l;
    c->at += l;
    return 0;
}

int bp4_check_idx_header(const uint8_t *p, size_t n, const char *what)
{
    if (n < BP4_HEADER_SIZE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: header is truncated (%zu of 64 bytes)", what, n);
    if (p[37] == 5)
        return gbp_error(GPUBP_ERR_BP5, 0, "%s: this is an ADIOS2 BP5 dataset (byte 37 = 5)", what);
    if (p[37] != 4 || memcmp(p, "ADIOS-BP", 8) != 0)
        return gbp_error(GPUBP_ERR_NOT_BP4, 0,
                         "%s: not a BP4 index (BP version byte 37 = %u, expected 4)", what, p[37]);
    if (p[36] != 0)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "%s: big-endian BP4 files are not supported", what);
    return GPUBP_OK;
}

int bp4_parse_idx_record(const uint8_t *p, size_t n, size_t i, uint64_t md0_size,
                         bp4_idx_record *r, const char *what)
{
    size_t off = BP4_HEADER_SIZE + i * BP4_IDX_RECORD_SIZE;
    if (off > n || n - off < BP4_IDX_RECORD_SIZE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: record %zu at offset %zu is truncated", what, i,
                         off);
    const uint8_t *q = p + off;
    r->step = gbp_ld64(q);
    r->rank = gbp_ld64(q + 8);
    r->pg_off = gbp_ld64(q + 16);
    r->var_off = gbp_ld64(q + 24);
    r->attr_off = gbp_ld64(q + 32);
    r->end = gbp_ld64(q + 40);
    r->timestamp = gbp_ld64(q + 48);
    if (r->step != i + 1)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: record at offset %zu has step %llu, expected %zu", what, off,
                         (unsigned long long)r->step, i + 1);
    if (!(r->pg_off >= BP4_HEADER_SIZE && r->pg_off <= r->var_off && r->var_off <= r->attr_off &&
          r->attr_off <= r->end && r->end <= md0_size))
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: record at offset %zu has md.0 pointers %llu/%llu/%llu/%llu out of order "
                         "or past the end of md.0 (%llu bytes)",
                         what, off, (unsigned long long)r->pg_off, (unsigned long long)r->var_off,
                         (unsigned long long)r->attr_off, (unsigned long long)r->end,
                         (unsigned long long)md0_size);
    return GPUBP_OK;
}


/* Parses one characteristic set at c->at into blk (dims into dimbuf, 3 * GBP_MAX_DIMS).
 * For attributes, attr receives the value. A type this library cannot read (es 0, not a string)
 * keeps what comes before its first value-sized characteristic (ADIOS2 writes time, file index
 * and dimensions first) and skips the rest of the set: it is listed, never read. */
static int parse_charset(cur *c, int type, size_t es, gbp_block *blk, uint64_t *dimbuf,
                         gbp_op *op, gbp_attr *attr)
{
    uint8_t cnt;
    uint32_t len;
    TRY(rd8(c, &cnt, "characteristic count"));
    TRY(rd32(c, &len, "characteristic length"));
    NEED(c, len, "characteristic set");
    size_t saved_end = c->end;
    c->end = c->at + len;
    blk->vmd_offset = blk->payload_offset = 0;
    blk->str = NULL;
    blk->op = NULL;
    blk->subfile = blk->step = blk->str_len = 0;
    blk->ndims = blk->has_minmax = blk->has_value = 0;
    blk->split = 0;
    blk->dims = dimbuf;
    int have_dims = 0;
    uint32_t bitmap = 0;
    while (c->at < c->end) {
        size_t id_at = c->at;
        uint8_t id;
        TRY(rd8(c, &id, "characteristic id"));
        if (es == 0 && type != GPUBP_TYPE_STRING && type != BP4_TYPE_STRING_ARRAY &&
            (id == BP4_CHR_VALUE || id == BP4_CHR_MIN || id == BP4_CHR_MAX ||
             id == BP4_CHR_MINMAX || id == BP4_CHR_STAT || id == BP4_CHR_TRANSFORM)) {
            if (attr) attr->n = (have_dims && blk->ndims >= 1) ? (size_t)dimbuf[0] : 1;
            c->at = c->end;
            break;
        }
        switch (id) {
        case BP4_CHR_TIME_INDEX: TRY(rd32(c, &blk->step, "time index")); break;
        case BP4_CHR_FILE_INDEX: TRY(rd32(c, &blk->subfile, "file index")); break;
        case BP4_CHR_OFFSET: TRY(rd64(c, &blk->vmd_offset, "offset")); break;
        case BP4_CHR_PAYLOAD_OFFSET:
            TRY(rd64(c, &blk->payload_offset, "payload offset"));
            break;
        case BP4_CHR_DIMENSIONS: {
            uint8_t nd;
            uint16_t dl;
            TRY(rd8(c, &nd, "dimension count"));
            TRY(rd16(c, &dl, "dimension length"));
            if (nd > GBP_MAX_DIMS)
                return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: %u dimensions (limit %d)",
                                 c->what, id_at, nd, GBP_MAX_DIMS);
            NEED(c, (size_t)nd * 24, "dimensions");
            blk->ndims = nd;
            for (size_t i = 0; i < nd; i++) {
                dimbuf[i] = gbp_ld64(c->p + c->at);
                dimbuf[nd + i] = gbp_ld64(c->p + c->at + 8);
                dimbuf[2 * nd + i] = gbp_ld64(c->p + c->at + 16);
                c->at += 24;
            }
            have_dims = 1;
            break;
        }
        case BP4_CHR_VALUE:
            if (attr) {
                if (attr->data || attr->strings)
                    return gbp_error(GPUBP_ERR_FORMAT, 0,
                                     "%s: offset %zu: attribute has two values", c->what, id_at);
                /* attribute: count from the dimensions (1 when absent) */
                size_t n = (have_dims && blk->ndims >= 1) ? (size_t)dimbuf[0] : 1;
                if (type == GPUBP_TYPE_STRING || type == BP4_TYPE_STRING_ARRAY) {
                    if (type == GPUBP_TYPE_STRING) n = 1;
                    if (n > c->end - c->at)
                        return gbp_error(GPUBP_ERR_FORMAT, 0,
                                         "%s: offset %zu: %zu strings cannot fit", c->what, id_at, n);
                    attr->strings = gbp_calloc(n ? n : 1, sizeof(char *));
                    if (!attr->strings) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
                    attr->n = n;
                    for (size_t i = 0; i < n; i++) {
                        const char *s;
                        size_t sl;
                        TRY(rdstr(c, &s, &sl, "attribute string"));
                        attr->strings[i] = gbp_strndup(s, sl);
                        if (!attr->strings[i]) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
                    }
                } else {
                    size_t bytes;
                    if (es == 0 || !gbp_mul_ok(n, es, &bytes) || bytes > c->end - c->at)
                        return gbp_error(GPUBP_ERR_FORMAT, 0,
                                         "%s: offset %zu: attribute value of %zu elements does not fit",
                                         c->what, id_at, n);
                    attr->data = gbp_malloc(bytes);
                    if (!attr->data) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
                    memcpy(attr->data, c->p + c->at, bytes);
                    c->at += bytes;
                    attr->n = n;
                }
            } else if (type == GPUBP_TYPE_STRING) {
                const char *s;
                size_t sl;
                TRY(rdstr(c, &s, &sl, "string value"));
                blk->str = (char *)s; /* not NUL-terminated: str_len counts */
                blk->str_len = (uint32_t)sl;
                blk->has_value = 1;
            } else {
                /* a value of Count[0] elements when Count[0] > 1 (not for variables we read) */
                size_t n = 1;
                if (have_dims && blk->ndims >= 1 && dimbuf[0] > 1 &&
                    dimbuf[blk->ndims] != BP4_LOCAL_VALUE_DIM)
                    n = (size_t)dimbuf[0];
                size_t bytes;
                if (!gbp_mul_ok(n, es, &bytes)) bytes = SIZE_MAX;
                TRY(skip(c, bytes, "value"));
                memcpy(blk->mm, c->p + c->at - bytes, es);
                blk->has_value = 1;
            }
            break;
        case BP4_CHR_MIN:
        case BP4_CHR_MAX:
            TRY(skip(c, es, "min/max"));
            memcpy(blk->mm + (id == BP4_CHR_MAX ? 16 : 0), c->p + c->at - es, es);
            blk->has_minmax = 1;
            break;
        case BP4_CHR_MINMAX: {
            uint16_t m;
            TRY(rd16(c, &m, "minmax count"));
            TRY(skip(c, 2 * es, "minmax"));
            memcpy(blk->mm, c->p + c->at - 2 * es, es);
            memcpy(blk->mm + 16, c->p + c->at - es, es);
            blk->has_minmax = 1;
            if (m > 1) {
                TRY(skip(c, 1 + 8 + 2 * (size_t)blk->ndims, "minmax divisions"));
                size_t bytes;
                if (!gbp_mul_ok((size_t)2 * m, es, &bytes)) bytes = SIZE_MAX;
                TRY(skip(c, bytes, "minmax sub-blocks"));
            }
            break;
        }
        case BP4_CHR_BITMAP: TRY(rd32(c, &bitmap, "bitmap")); break;
        case BP4_CHR_STAT:
            /* the statistics the bitmap announces, in bit order; the count is libgpubp's split
             * marker, min and max are kept, the others skipped */
            for (int bit = BP4_STAT_MIN; bit <= BP4_STAT_FINITE; bit++) {
                if (!(bitmap & (1u << bit))) continue;
                if (bit == BP4_STAT_HIST || ((bit == BP4_STAT_MIN || bit == BP4_STAT_MAX) && !es))
                    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                                     "%s: offset %zu: statistic %d of a stat characteristic is not "
                                     "supported", c->what, id_at, bit);
                if (bit == BP4_STAT_CNT) {
                    TRY(rd32(c, &blk->split, "split marker"));
                } else if (bit == BP4_STAT_MIN || bit == BP4_STAT_MAX) {
                    TRY(skip(c, es, "statistic"));
                    memcpy(blk->mm + (bit == BP4_STAT_MAX ? 16 : 0), c->p + c->at - es, es);
                    blk->has_minmax = 1;
                } else {
                    TRY(skip(c, bit == BP4_STAT_FINITE ? 1 : 8, "statistic"));
                }
            }
            break;
        case BP4_CHR_TRANSFORM: {
            uint8_t tl, pre, nd;
            uint16_t dl, ml;
            TRY(rd8(c, &tl, "operator name length"));
            NEED(c, tl, "operator name");
            memset(op, 0, sizeof *op);
            size_t cl = tl < GBP_MAX_OP_NAME ? tl : GBP_MAX_OP_NAME;
            memcpy(op->name, c->p + c->at, cl);
            c->at += tl;
            TRY(rd8(c, &pre, "operator type"));
            TRY(rd8(c, &nd, "operator dimension count"));
            TRY(rd16(c, &dl, "operator dimension length"));
            TRY(skip(c, (size_t)nd * 24, "operator dimensions"));
            TRY(rd16(c, &ml, "operator metadata length"));
            NEED(c, ml, "operator metadata");
            if (ml >= 16) {
                op->raw_size = gbp_ld64(c->p + c->at);
                op->size = gbp_ld64(c->p + c->at + 8);
            }
            c->at += ml;
            op->pre_type = pre;
            blk->op = op;
            break;
        }
        default:
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: unknown characteristic id %u",
                             c->what, id_at, id);
        }
    }
    if (c->at != c->end)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: offset %zu: characteristics overrun their length", c->what, c->at);
    c->end = saved_end;
    (void)cnt;
    return 0;
}

/* An index entry's head: its length (c->end is set to the entry's end), member id, group, name,
 * the two bytes BP4 keeps for the order (BP3: an empty path), type and set count. */
typedef struct entry_head {
    uint32_t elen, member;
    const char *group, *name;
    size_t gl, nl;
    uint8_t order, zero, type;
    uint64_t nsets;
} entry_head;

static int read_entry_head(cur *c, entry_head *h)
{
    TRY(rd32(c, &h->elen, "entry length"));
    NEED(c, h->elen, "entry");
    c->end = c->at + h->elen;
    TRY(rd32(c, &h->member, "member id"));
    TRY(rdstr(c, &h->group, &h->gl, "group name"));
    TRY(rdstr(c, &h->name, &h->nl, "name"));
    TRY(rd8(c, &h->order, "order"));
    TRY(rd8(c, &h->zero, "path"));
    TRY(rd8(c, &h->type, "type"));
    return rd64(c, &h->nsets, "set count");
}

/* One characteristic set skipped: its count, its length, the bytes it says */
static int skip_set(cur *c)
{
    uint8_t cnt;
    uint32_t len;
    TRY(rd8(c, &cnt, "characteristic count"));
    TRY(rd32(c, &len, "characteristic length"));
    return skip(c, len, "characteristic set");
}

static int parse_entries(cur *c, int is_attr, const gbp_step_sink *sink)
{
    uint64_t dimbuf[3 * GBP_MAX_DIMS];
    gbp_op op;
    while (c->at < c->end) {
        size_t entry_at = c->at, saved_end = c->end;
        entry_head h;
        TRY(read_entry_head(c, &h));
        const char *name = h.name;
        size_t nl = h.nl;
        uint8_t type = h.type;
        uint64_t nsets = h.nsets;
        uint32_t elen = h.elen;
        if (nl == 0 || memchr(name, 0, nl))
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: %s name is empty or has a NUL "
                             "byte", c->what, entry_at, is_attr ? "attribute" : "variable");
        /* ADIOS2 skips entries of types it does not know; they are kept here (without values),
         * so that the API lists them and answers GPUBP_ERR_UNSUPPORTED_TYPE to reads */
        int known = gbp_type_known(type) || (is_attr && type == BP4_TYPE_STRING_ARRAY);
        size_t es = gbp_type_size(type);
        if (is_attr) {
            while (c->at < c->end) {
                gbp_block blk;
                gbp_attr a;
                memset(&a, 0, sizeof a);
                int rc = parse_charset(c, type, es, &blk, dimbuf, &op, &a);
                if (rc == 0 && known && !a.data && !a.strings)
                    rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: attribute %.*s has no value",
                                   c->what, entry_at, (int)nl, name);
                if (rc == 0) {
                    a.name = gbp_strndup(name, nl);
                    if (!a.name) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
                }
                if (rc) {
                    gbp_attr_free(&a);
                    return rc;
                }
                a.is_array = type == BP4_TYPE_STRING_ARRAY || a.n > 1;
                a.type = type == BP4_TYPE_STRING_ARRAY ? GPUBP_TYPE_STRING : type;
                a.step = blk.step;
                rc = sink->attr(sink->ctx, &a);
                gbp_attr_free(&a);
                if (rc) return rc;
            }
        } else {
            int how = sink->var_begin(sink->ctx, name, nl, type, nsets, c->base + entry_at, elen);
            if (how < 0) return how;
            if (how == GBP_SINK_COUNT) {
                uint64_t nb = 0;
                for (; c->at < c->end; nb++) TRY(skip_set(c));
                TRY(sink->var_count(sink->ctx, nb));
            } else {
                while (c->at < c->end) {
                    gbp_block blk;
                    TRY(parse_charset(c, type, es, &blk, dimbuf, &op, NULL));
                    TRY(sink->var_block(sink->ctx, &blk));
                }
            }
        }
        c->end = saved_end;
    }
    return 0;
}

int bp4_parse_var_entries(const uint8_t *p, uint64_t base, size_t n, const gbp_step_sink *sink,
                          const char *what)
{
    cur c = {p, base, n, 0, n, what};
    return parse_entries(&c, 0, sink);
}

int bp4_walk_sets(const uint8_t *p, uint64_t base, size_t n, int timed, bp4_set_fn fn,
                  void *ctx, const char *what)
{
    cur c = {p, base, n, 0, n, what};
    uint64_t dimbuf[3 * GBP_MAX_DIMS];
    gbp_op op;
    while (c.at < c.end) {
        size_t entry_at = c.at;
        entry_head h;
        TRY(read_entry_head(&c, &h));
        /* BP3 reads the order bytes as a path (u16 length + bytes), empty in every file ADIOS2
         * writes; ADIOS 1.x's paths are not read */
        if (h.order || h.zero)
            return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: offset %llu: entry '%.*s' has a path "
                             "(an ADIOS 1.x file): not read", c.what,
                             (unsigned long long)(base + entry_at), (int)h.nl, h.name);
        size_t hdr = c.at - entry_at, es = gbp_type_size(h.type);
        while (c.at < c.end) {
            size_t set_at = c.at;
            gbp_block blk;
            blk.step = 0;
            if (timed) TRY(parse_charset(&c, h.type, es, &blk, dimbuf, &op, NULL));
            else TRY(skip_set(&c));
            TRY(fn(ctx, entry_at, hdr, set_at, c.at - set_at, blk.step));
        }
        c.end = n;
    }
    return 0;
}

static int off_in(const cur *c, uint64_t off, size_t *at)
{
    if (off < c->base || off - c->base > c->n)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %llu is outside the metadata read",
                         c->what, (unsigned long long)off);
    *at = (size_t)(off - c->base);
    return 0;
}

int bp4_parse_step(const uint8_t *p, uint64_t base, size_t n, const bp4_idx_record *r,
                   int *column_major, const gbp_step_sink *sink, const char *what)
{
    cur c = {p, base, n, 0, 0, what};
    size_t pg = 0, var = 0, attr = 0, end = 0;
    *column_major = 0;
    TRY(off_in(&c, r->pg_off, &pg));
    TRY(off_in(&c, r->var_off, &var));
    TRY(off_in(&c, r->attr_off, &attr));
    TRY(off_in(&c, r->end, &end));
    c.at = pg;
    c.end = var;
    /* PG index */
    uint64_t pgcount, pglen;
    TRY(rd64(&c, &pgcount, "PG count"));
    TRY(rd64(&c, &pglen, "PG length"));
    if (pgcount == 0 || pglen == 0)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %llu: step %llu has no process group",
                         what, (unsigned long long)r->pg_off, (unsigned long long)r->step);
    {
        uint16_t l;
        const char *s;
        size_t sl;
        uint8_t cm;
        TRY(rd16(&c, &l, "PG entry length"));
        TRY(rdstr(&c, &s, &sl, "PG name"));
        TRY(rd8(&c, &cm, "PG column-major flag"));
        *column_major = cm == 'y';
    }
    if (sink->step_begin) TRY(sink->step_begin(sink->ctx, *column_major));
    /* variable index */
    c.at = var;
    c.end = attr;
    uint32_t vc;
    uint64_t vl;
    TRY(rd32(&c, &vc, "variable count"));
    TRY(rd64(&c, &vl, "variable index length"));
    NEED(&c, vl, "variable index");
    c.end = c.at + (size_t)vl;
    TRY(parse_entries(&c, 0, sink));
    /* attribute index */
    c.at = attr;
    c.end = end;
    uint32_t ac;
    uint64_t al;
    TRY(rd32(&c, &ac, "attribute count"));
    TRY(rd64(&c, &al, "attribute index length"));
    NEED(&c, al, "attribute index");
    c.end = c.at + (size_t)al;
    return parse_entries(&c, 1, sink);
}
