/* Rewrites a 64-bit writer's BP5 dataset as a 32-bit (i386) writer lays it out, following the BP5
 * format description (its sections 5.2, 6.3, 7.2, 7.4 and 12); no 32-bit ADIOS2 wrote these:
 * - every FFS description: pointer size 4 and structure alignment 4; the C structures
 *   (MetaArray..., GenericAttributes, PrimAttr, StrAttr, complex4/8) laid out as i386 lays them
 *   out (8-byte integers at 4-byte-aligned offsets, 4-byte pointers: MetaArray records of 40, 44
 *   or 48 bytes with pointers at 24, 28, 32, 36, 40; PrimAttr's TotalElementSize at 4); the
 *   structures built field by field (MetaData, the legacy Attributes) with each field at the next
 *   multiple of its own size (pointers 4 bytes); field sizes of pointers and sub-structures
 *   follow; record lengths end at the last field; the strings and the description's length stay;
 * - every FFS block of md.0 encoded again: the base record at the new offsets, then the
 *   variable part in the encoder's order (8-aligned arrays, strings 1-aligned, arrays of
 *   sub-structures element by element), 4-byte pointers as offsets from the base record;
 *   DataBlockSize written 4 bytes before the offset its description gives, which reads 0 (the
 *   32-bit writers' slip the description records, section 7.2);
 * - md.0's step blocks packed again with their new sizes, md.idx's step records pointing at them;
 *   mmd.0's descriptions rewritten in place; data.K as it was, but for
 * - operator buffers (§9.3) in place with the header a 32-bit ADIOS2 writes: its size_t fields
 *   (the sizes of null, blosc and bzip2, bzip2's batch count) are 4 bytes (ADIOS2's PutParameter
 *   copies a size_t; the description gives the 64-bit layout only), DataBlockSize follows.
 * A struct variable's description keeps its structure layout (its records in data.K are not
 * moved), with pointer size 4 as the others.
 * Format ids are those of the new descriptions (section 5.4, ffs_id.c), in mmd.0 and md.0. Not
 * converted (-2): long double (12 bytes on i386, a layout the description does not give). Used by
 * test_format_bp5_bigendian's 32-bit cases; not installed. */
#include "format/bp5_to_32.h"

#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_op.h"
#include "format/ffs_id.h"
#include "support/test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PSZ 4 /* the 32-bit writer's pointers */

typedef struct lay {   /* one structure's 32-bit layout */
    int32_t *off, *size;
    int32_t rl;
} lay;

typedef struct fmt32 {
    const bp5_format *f;
    lay *l;            /* f->nstructs */
} fmt32;

static void st_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> 8 * i);
}

static int is_ptr_string(const bp5_ffs_field *fl) { return fl->is_ptr && fl->base == BP5_FT_STRING; }

static int32_t round_up(int32_t v, int32_t m) { return m > 1 ? (v + m - 1) / m * m : v; }

/* The new layouts, sub-structures first (they always follow their users). */
static void layout(fmt32 *x)
{
    const bp5_format *f = x->f;
    int built = f->kind == BP5_FMT_METADATA || f->kind == BP5_FMT_OLD_ATTRS;
    for (size_t si = f->nstructs; si-- > 0;) {
        const bp5_ffs_struct *st = &f->structs[si];
        lay *L = &x->l[si];
        L->off = calloc(st->nfields + 1, sizeof *L->off);
        L->size = calloc(st->nfields + 1, sizeof *L->size);
        if (f->kind == BP5_FMT_OTHER) {
            /* a struct variable's own description (IO::DefineStruct): offsets and size are what
             * the writer's compiler gave and its records in data.K keep them, so the layout
             * stays (a 32-bit program may lay a struct so: explicit padding, packing) */
            for (uint32_t i = 0; i < st->nfields; i++) {
                L->off[i] = st->fields[i].offset;
                L->size[i] = st->fields[i].size;
            }
            L->rl = st->record_length;
            continue;
        }
        int32_t end = 0;
        for (uint32_t i = 0; i < st->nfields; i++) {
            const bp5_ffs_field *fl = &st->fields[i];
            int32_t sz = fl->size, occ, al;
            if (fl->base == BP5_FT_SUB) sz = x->l[fl->sub].rl;
            if (is_ptr_string(fl)) sz = PSZ;
            if (fl->is_ptr) {
                occ = PSZ;
                al = PSZ;
            } else {
                int32_t n = 1;
                for (int k = 0; k < fl->ndims; k++) n *= (int32_t)fl->dim[k];
                occ = sz * n;
                al = fl->base == BP5_FT_SUB ? 4 : sz < 4 ? sz : 4;
            }
            int32_t at = si == 0 && built ? round_up(end, sz) : round_up(end, al);
            L->off[i] = at;
            L->size[i] = sz;
            end = at + occ;
        }
        L->rl = end;
    }
}

/* The description in place: pointer size, alignment, record lengths, field sizes and offsets. */
static void convert_desc(const fmt32 *x, uint8_t *d, size_t n)
{
    size_t at = 8;
    for (size_t si = 0; si < x->f->nstructs && at + 28 <= n; si++) {
        uint8_t *s = d + at;
        size_t len = (size_t)s[0] << 8 | s[1] | (size_t)s[24] << 24 | (size_t)s[25] << 16;
        const lay *L = &x->l[si];
        st_le(s + 12, (uint64_t)L->rl, 4);
        s[16] = PSZ;
        s[23] = 4;
        for (uint32_t i = 0; i < x->f->structs[si].nfields; i++) {
            st_le(s + s[17] + 16 * i + 8, (uint64_t)L->size[i], 4);
            st_le(s + s[17] + 16 * i + 12, (uint64_t)L->off[i], 4);
        }
        at += len;
    }
}

/* ---- FFS blocks ------------------------------------------------------------------------------ */

typedef struct enc {
    const fmt32 *x;
    const uint8_t *in; /* the 64-bit block's data */
    size_t inlen;
    uint8_t *out;      /* the 32-bit block's data */
    size_t len, cap;
    int bad;
} enc;

static uint64_t rd(enc *e, uint64_t at, size_t n)
{
    if (at > e->inlen || n > e->inlen - at) {
        e->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | e->in[at + i];
    return v;
}

static uint8_t *room(enc *e, size_t at, size_t n)
{
    if (at + n > e->cap) {
        size_t c = e->cap ? e->cap : 256;
        while (c < at + n) c *= 2;
        uint8_t *g = realloc(e->out, c);
        if (!g) {
            e->bad = 1;
            return NULL;
        }
        memset(g + e->cap, 0, c - e->cap);
        e->out = g;
        e->cap = c;
    }
    if (at + n > e->len) e->len = at + n;
    return e->out + at;
}

/* n bytes at the end of the variable part, aligned */
static size_t alloc_at(enc *e, size_t n, size_t align)
{
    size_t at = (e->len + align - 1) / align * align;
    room(e, at, n ? n : 0);
    if (e->len < at) e->len = at;
    return at;
}

static void wr(enc *e, size_t at, uint64_t v, size_t n)
{
    uint8_t *p = room(e, at, n);
    for (size_t i = 0; p && i < n; i++) p[i] = (uint8_t)(v >> 8 * i);
}

/* The fixed part of structure si: in at data offset ib (64-bit), out at ob (32-bit). */
static void copy_fixed(enc *e, int si, uint64_t ib, size_t ob)
{
    const bp5_ffs_struct *st = &e->x->f->structs[si];
    const lay *L = &e->x->l[si];
    for (uint32_t i = 0; i < st->nfields && !e->bad; i++) {
        const bp5_ffs_field *fl = &st->fields[i];
        if (fl->is_ptr) continue; /* walk() writes the pointers */
        uint64_t n = 1;
        for (int k = 0; k < fl->ndims; k++) n *= fl->dim[k];
        for (uint64_t k = 0; k < n && !e->bad; k++) {
            uint64_t from = ib + (uint64_t)fl->offset + k * (uint64_t)fl->size;
            size_t to = ob + (size_t)L->off[i] + (size_t)(k * (uint64_t)L->size[i]);
            if (fl->base == BP5_FT_SUB) {
                copy_fixed(e, fl->sub, from, to);
            } else if (from + (uint64_t)fl->size <= e->inlen) {
                uint8_t *p = room(e, to, (size_t)fl->size);
                if (p) memcpy(p, e->in + from, (size_t)fl->size);
            } else {
                e->bad = 1;
            }
        }
    }
}

/* a NUL-terminated string at in offset p, copied to the end; its new offset (0: none) */
static size_t copy_string(enc *e, uint64_t p)
{
    if (p == 0) return 0;
    if (p >= e->inlen || !memchr(e->in + p, 0, e->inlen - p)) {
        e->bad = 1;
        return 0;
    }
    size_t n = strlen((const char *)e->in + p) + 1, at = alloc_at(e, n, 1);
    uint8_t *d = room(e, at, n);
    if (d) memcpy(d, e->in + p, n);
    return at;
}

/* The variable fields of structure si (in at ib, out at ob), in the encoder's order (§6.3). */
static void walk(enc *e, int si, uint64_t ib, size_t ob)
{
    const bp5_ffs_struct *st = &e->x->f->structs[si];
    const lay *L = &e->x->l[si];
    for (uint32_t i = 0; i < st->nfields && !e->bad; i++) {
        const bp5_ffs_field *fl = &st->fields[i];
        uint64_t from = ib + (uint64_t)fl->offset;
        size_t to = ob + (size_t)L->off[i];
        if (!fl->is_ptr) {
            uint64_t n = 1;
            for (int k = 0; k < fl->ndims; k++) n *= fl->dim[k];
            for (uint64_t k = 0; fl->base == BP5_FT_SUB && k < n; k++)
                walk(e, fl->sub, from + k * (uint64_t)fl->size, to + (size_t)(k * (uint64_t)L->size[i]));
            continue;
        }
        uint64_t p = rd(e, from, 8), n = 1;
        size_t at = 0;
        for (int k = 0; k < fl->ndims; k++) {
            const bp5_ffs_field *cf = fl->ctrl[k] >= 0 ? &st->fields[fl->ctrl[k]] : NULL;
            n *= cf ? rd(e, ib + (uint64_t)cf->offset, (size_t)cf->size) : fl->dim[k];
        }
        if (p == 0 || e->bad) {
            wr(e, to, 0, PSZ);
            continue;
        }
        if (fl->base == BP5_FT_STRING && fl->ndims == 0) {
            at = copy_string(e, p);
        } else if (fl->base == BP5_FT_STRING) {
            at = alloc_at(e, (size_t)n * PSZ, 8);
            for (uint64_t k = 0; k < n && !e->bad; k++)
                wr(e, at + (size_t)k * PSZ, copy_string(e, rd(e, p + 8 * k, 8)), PSZ);
        } else if (fl->base == BP5_FT_SUB) {
            int32_t orl = fl->size, nrl = L->size[i];
            at = alloc_at(e, (size_t)n * (size_t)nrl, 8);
            for (uint64_t k = 0; k < n && !e->bad; k++)
                copy_fixed(e, fl->sub, p + k * (uint64_t)orl, at + (size_t)k * (size_t)nrl);
            for (uint64_t k = 0; k < n && !e->bad; k++)
                walk(e, fl->sub, p + k * (uint64_t)orl, at + (size_t)k * (size_t)nrl);
        } else {
            uint64_t bytes = n * (uint64_t)fl->size;
            if (p > e->inlen || bytes > e->inlen - p) {
                e->bad = 1;
                continue;
            }
            at = alloc_at(e, (size_t)bytes, 8);
            uint8_t *d = room(e, at, (size_t)bytes);
            if (d) memcpy(d, e->in + p, (size_t)bytes);
        }
        wr(e, to, at, PSZ);
    }
}

/* What a 32-bit writer cannot have written as the description lays it out: *why, or NULL. */
static const char *unconvertible(const bp5_format *f)
{
    for (size_t v = 0; v < f->nvars; v++)
        if (f->vars[v].bp5_type == 11) return "a long double (12 bytes on i386)";
    const bp5_ffs_struct *st = &f->structs[0];
    for (uint32_t i = 0; i < st->nfields; i++)
        if (st->fields[i].base == BP5_FT_FLOAT && st->fields[i].size == 16)
            return "a long double (12 bytes on i386)";
    return NULL;
}

/* What a block's conversion needs beyond its format: where its step's data lie. */
typedef struct ctx32 {
    bp5_formats *ft;
    fmt32 *xs;
    const ffs_idmap *ids;
    const bp5_idx *ix;
    size_t step;
    uint64_t w;               /* the block's writer (metadata blocks) */
    uint8_t **dat;            /* data.K, rewritten in place */
    size_t *ndat;
    int nsub;
} ctx32;

/* The operator buffer of n bytes at p (a 64-bit writer's: 8-byte size_t fields) rewritten in
 * place as a 32-bit writer's (4-byte size_t: ADIOS2's PutParameter of a size_t; the section 9.3
 * layout otherwise): the sizes (null, blosc: 4 bytes shorter; bzip2: its size and batch count,
 * 8 bytes shorter, stream offsets follow). Returns the new size, 0 when not such a buffer. */
static size_t op_to_32(uint8_t *p, size_t n)
{
    if (n < 20) return 0;
    uint64_t size = gbp_ld64(p + 4);
    if (size > UINT32_MAX) return 0;
    if (p[0] == BP5_OP_BZIP2) {
        uint64_t nb = gbp_ld64(p + 12);
        if (nb > (n - 20) / 16) return 0;
        st_le(p + 4, size, 4);
        st_le(p + 8, nb, 4);
        memmove(p + 12, p + 20, n - 20);
        for (uint64_t k = 0; k < nb; k++) st_le(p + 12 + 16 * k + 8, gbp_ld32(p + 12 + 16 * k + 8) - 8, 4);
        memset(p + n - 8, 0, 8);
        return n - 8;
    }
    if (p[0] != BP5_OP_BLOSC && p[0] != BP5_OP_NULL) return 0;
    st_le(p + 4, size, 4);
    memmove(p + 8, p + 12, n - 12);
    memset(p + n - 4, 0, 4);
    return n - 4;
}

/* The operator blocks of the MetaData record just encoded (e: 32-bit, its input the 64-bit one):
 * each buffer rewritten as a 32-bit writer's in its data file, and its DataBlockSize with it. */
static int ops_to_32(const ctx32 *c, const fmt32 *x, enc *e, char *why, size_t wn)
{
    const bp5_format *f = x->f;
    for (size_t v = 0; v < f->nvars; v++) {
        const bp5_var_field *var = &f->vars[v];
        uint32_t fi = var->field;
        if (!var->has_op || var->unsupported || var->ma.location < 0 || var->ma.dbsize < 0) continue;
        const bp5_ffs_field *bc = &f->structs[0].fields[f->f_bfcount];
        const bp5_ffs_field *bf = &f->structs[0].fields[f->f_bitfield];
        uint64_t nw = rd(e, (uint64_t)bc->offset, 8), bp = rd(e, (uint64_t)bf->offset, 8);
        if (var->bit / 64 >= nw || !bp ||
            !(rd(e, bp + 8 * ((uint64_t)var->bit / 64), 8) >> (var->bit % 64) & 1))
            continue; /* not written by this writer this step */
        const bp5_ffs_field *fl = &f->structs[0].fields[fi];
        const bp5_ffs_struct *ss = &f->structs[fl->sub];
        const lay *L = &x->l[fl->sub];
        uint64_t rb = (uint64_t)fl->offset, B = rd(e, rb + (uint64_t)ss->fields[var->ma.blockcount].offset, 8);
        uint64_t lp = rd(e, rb + (uint64_t)ss->fields[var->ma.location].offset, 8);
        uint64_t sp = rd(e, rb + (uint64_t)ss->fields[var->ma.dbsize].offset, 8);
        size_t out_sp = (size_t)gbp_ld32(e->out + x->l[0].off[fi] + L->off[var->ma.dbsize]);
        for (uint64_t b = 0; b < B && !e->bad; b++) {
            uint64_t loc = rd(e, lp + 8 * b, 8), size = rd(e, sp + 8 * b, 8), sf, off;
            if (loc == BP5_NO_DATA) continue;
            if (bp5_locate(c->ix, c->step, c->w, loc, &sf, &off, "md.0") != GPUBP_OK ||
                sf >= (uint64_t)c->nsub || off > c->ndat[sf] || size > c->ndat[sf] - off) {
                snprintf(why, wn, "'%s': operator block %llu not located", var->name,
                         (unsigned long long)b);
                return -1;
            }
            const uint8_t *ob = c->dat[sf] + off;
            if (size >= 1 && ob[0] != BP5_OP_BLOSC && ob[0] != BP5_OP_NULL &&
                ob[0] != BP5_OP_BZIP2) { /* a plugin, zfp, ...: no 32-bit form known */
                snprintf(why, wn, "'%s': an operator buffer libgpubp does not decode", var->name);
                return -2;
            }
            size_t nn = op_to_32(c->dat[sf] + off, (size_t)size);
            if (!nn) {
                snprintf(why, wn, "'%s': an operator buffer of an unknown kind", var->name);
                return -1;
            }
            wr(e, out_sp + 8 * (size_t)b, nn, 8);
        }
    }
    return e->bad ? -1 : 0;
}

/* One 64-bit FFS block (p, n bytes) as a 32-bit writer's: *out (malloc'd), *olen its slot size
 * (a multiple of 8). 0, -1 damaged, -2 not convertible. */
static int convert_block(const ctx32 *cx, const uint8_t *p, size_t n, uint8_t **out,
                         size_t *olen, char *why, size_t wn)
{
    bp5_formats *ft = cx->ft;
    fmt32 *xs = cx->xs;
    const bp5_format *f = n >= 24 ? bp5_formats_find(ft, p) : NULL;
    if (!f || !f->variant || f->rep_version < 2 || f->ptr_size != 8) {
        snprintf(why, wn, "a block without a known 64-bit variant format");
        return -1;
    }
    const char *no = unconvertible(f);
    if (no) {
        snprintf(why, wn, "%s", no);
        return -2;
    }
    fmt32 *x = NULL;
    for (size_t k = 0; k < ft->n; k++)
        if (ft->v[k] == f) x = &xs[k];
    if (!x) {
        snprintf(why, wn, "a format not in mmd.0");
        return -1;
    }
    uint64_t dl = gbp_ld64(p + 12);
    if (dl > n - 24) {
        snprintf(why, wn, "block data length %llu", (unsigned long long)dl);
        return -1;
    }
    enc e = {x, p + 24, (size_t)dl, NULL, 0, 0, 0};
    room(&e, 0, (size_t)x->l[0].rl);
    copy_fixed(&e, 0, 0, 0);
    e.len = (size_t)x->l[0].rl; /* the variable part starts 8-aligned after the record */
    walk(&e, 0, 0, 0);
    if (!e.bad && f->kind == BP5_FMT_METADATA) {
        const bp5_ffs_struct *st = &f->structs[0];
        for (uint32_t i = 0; i < st->nfields; i++)
            if (strcmp(st->fields[i].name, "DataBlockSize") == 0 && x->l[0].off[i] >= 4) {
                size_t at = (size_t)x->l[0].off[i];
                uint64_t v = gbp_ld64(e.out + at);
                wr(&e, at, 0, 8);
                wr(&e, at - 4, v, 8); /* the C structure's place: the description's reads 0 */
            }
    }
    int orc = !e.bad && f->kind == BP5_FMT_METADATA ? ops_to_32(cx, x, &e, why, wn) : 0;
    if (orc) {
        free(e.out);
        return orc; /* -2: not convertible */
    }
    if (e.bad) {
        free(e.out);
        snprintf(why, wn, "a damaged block");
        return -1;
    }
    size_t slot = (24 + e.len + 7) / 8 * 8;
    uint8_t *b = calloc(1, slot);
    memcpy(b, p, 12);
    ffs_idmap_apply(cx->ids, b);
    st_le(b + 12, e.len, 8);
    memcpy(b + 24, e.out, e.len);
    free(e.out);
    *out = b;
    *olen = slot;
    return 0;
}

/* ---- whole datasets --------------------------------------------------------------------------- */

int bp5_to_32(const char *src, const char *dst, char *why, size_t wn)
{
    size_t nidx = 0, nmmd = 0, nmd0 = 0;
    char p[4200];
    unsigned char *idx = NULL, *mmd = NULL, *md0 = NULL;
    snprintf(p, sizeof p, "%s/md.idx", src);
    idx = ts_read_file(p, &nidx);
    snprintf(p, sizeof p, "%s/mmd.0", src);
    mmd = ts_read_file(p, &nmmd);
    snprintf(p, sizeof p, "%s/md.0", src);
    md0 = ts_read_file(p, &nmd0);
    bp5_idx ix;
    bp5_formats ft;
    bp5_idx_init(&ix);
    bp5_formats_init(&ft);
    fmt32 *xs = NULL;
    ffs_idmap ids = {NULL, NULL, 0};
    uint8_t *dat[64] = {NULL};
    size_t ndat[64] = {0};
    int nsub = 0;
    for (; nsub < 64; nsub++) { /* data.K, whose operator buffers are rewritten in place */
        snprintf(p, sizeof p, "%s/data.%d", src, nsub);
        if (!(dat[nsub] = ts_read_file(p, &ndat[nsub]))) break;
    }
    uint8_t *omd = NULL;
    size_t on = 0, ocap = 0;
    int rc = -1;
    snprintf(why, wn, "cannot read the dataset");
    if (!idx || !mmd || !md0 || nidx < 64 || idx[36] != 0) goto out;
    if (bp5_idx_parse(&ix, idx, nidx, nmd0, 0, "md.idx") != GPUBP_OK ||
        bp5_formats_parse(&ft, mmd, nmmd, 0, "mmd.0") != GPUBP_OK) {
        snprintf(why, wn, "not a readable little-endian BP5 dataset: %s", gbp_error_message());
        goto out;
    }
    if (ffs_check_mmd(mmd, nmmd)) {
        snprintf(why, wn, "mmd.0's ids are not the hashes of their descriptions");
        goto out;
    }
    xs = calloc(ft.n + 1, sizeof *xs);
    for (size_t k = 0; k < ft.n; k++) {
        xs[k].f = ft.v[k];
        xs[k].l = calloc(ft.v[k]->nstructs, sizeof *xs[k].l);
        layout(&xs[k]);
    }
    /* mmd.0: every description in place (same length) */
    for (size_t at = 0, k = 0; at + 28 <= nmmd; k++) {
        uint64_t il = gbp_ld64(mmd + at + 8);
        const bp5_format *f = bp5_formats_find(&ft, mmd + at + 16);
        for (size_t j = 0; f && j < ft.n; j++)
            if (ft.v[j] == f) convert_desc(&xs[j], mmd + at + 28, (size_t)il);
        at += 28 + (size_t)il;
    }
    if (ffs_rehash_mmd(mmd, nmmd, 0, &ids)) goto out;
    /* md.0: each step's table and blocks, packed again; md.idx's records follow */
    size_t rec = 64;
    for (size_t s = 0; s < ix.nsteps; s++) {
        const bp5_step_rec *r = &ix.steps[s];
        uint64_t W = ix.maps[r->map].nwriters, at = r->md_pos + 8 + 16 * W;
        size_t base = on, total = 8 + 16 * (size_t)W;
        if (on + total > ocap) omd = realloc(omd, ocap = (on + total) * 2 + 4096);
        memset(omd + on, 0, total);
        on += total;
        for (uint64_t i = 0; i < 2 * W; i++) {
            uint64_t sz = gbp_ld64(md0 + r->md_pos + 8 + 8 * i);
            uint8_t *b = NULL;
            size_t bl = 0;
            ctx32 cx = {&ft, xs, &ids, &ix, s, i, dat, ndat, nsub};
            if (sz && (rc = convert_block(&cx, md0 + at, (size_t)sz, &b, &bl, why, wn)) != 0)
                goto out;
            rc = -1;
            if (on + bl > ocap) omd = realloc(omd, ocap = (on + bl) * 2 + 4096);
            if (bl) memcpy(omd + on, b, bl);
            free(b);
            on += bl;
            st_le(omd + base + 8 + 8 * i, bl, 8);
            at += sz;
        }
        st_le(omd + base, on - base - 8, 8);
        /* this step's 's' record: the next one in md.idx */
        while (rec + 9 <= nidx && idx[rec] != 's') rec += 9 + (size_t)gbp_ld64(idx + rec + 1);
        if (rec + 9 + 16 > nidx) goto out;
        st_le(idx + rec + 9, base, 8);
        st_le(idx + rec + 17, on - base, 8);
        rec += 9 + (size_t)gbp_ld64(idx + rec + 1);
    }
    mkdir(dst, 0777);
    snprintf(p, sizeof p, "%s/md.idx", dst);
    rc = ts_write_file(p, idx, nidx);
    snprintf(p, sizeof p, "%s/mmd.0", dst);
    rc |= ts_write_file(p, mmd, nmmd);
    snprintf(p, sizeof p, "%s/md.0", dst);
    rc |= ts_write_file(p, omd ? omd : (uint8_t *)"", on);
    for (int k = 0; k < nsub && rc == 0; k++) {
        snprintf(p, sizeof p, "%s/data.%d", dst, k);
        rc = ts_write_file(p, dat[k], ndat[k]);
    }
    if (rc) snprintf(why, wn, "cannot write %s", dst);
out:
    for (size_t k = 0; xs && k < ft.n; k++) {
        for (size_t si = 0; si < ft.v[k]->nstructs; si++) {
            free(xs[k].l[si].off);
            free(xs[k].l[si].size);
        }
        free(xs[k].l);
    }
    free(xs);
    ffs_idmap_free(&ids);
    for (int k = 0; k < nsub; k++) free(dat[k]);
    free(omd);
    bp5_idx_free(&ix);
    bp5_formats_free(&ft);
    free(idx);
    free(mmd);
    free(md0);
    return rc;
}
