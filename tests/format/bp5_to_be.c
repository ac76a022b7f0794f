/* Rewrites a little-endian BP5 dataset in the big-endian encoding, as the BP5 format description
 * lays a big-endian (s390x) writer's files out (its sections 1, 3, 4-7 and 12): md.idx byte 36 = 1
 * and every md.idx number big-endian; the mmd.0 entry lengths big-endian; each FFS description
 * with record byte order 1 and floating-point representation 1 and its native numbers (name and
 * field offsets, counts, record lengths, the field table) swapped (its u16be lengths stay); every
 * FFS-encoded block's data length and every field of its records swapped by element size
 * (pointers, integers, floats, the bit field, MinMax by the variable's element size, attribute
 * values by their type; strings and chars as they are); the md.0 size tables; and every payload
 * in data.K element by element. Format ids are those of the rewritten descriptions (section 5.4,
 * ffs_id.c), in mmd.0 and in every md.0 block.
 * long double (the writer's C type; s390x's is IEEE binary128): every x87 value of the source is
 * written as the binary128 of the same value (exact), big-endian.
 * Operator buffers (§9.3): decoded with the library's decoders, their values swapped, and encoded
 * again, as a big-endian writer's operator would have: null as it was, bzip2 with libbz2 (one
 * batch), blosc with the library's encoder (zlib, byte shuffle); the operator's own header
 * integers in the writer's (big-endian) order (ADIOS2 copies them from memory), the Blosc2 chunk
 * headers little-endian (Blosc2's format). A buffer no larger than the original stays in place;
 * a larger one goes to the end of its data file; DataBlockLocation and DataBlockSize follow.
 * Not convertible (exit 77): blocks of a codec the build lacks (bzip2 without libbz2). Used by
 * test_bp5_bigendian; not installed.
 * usage (as a program, -DBP5_TO_BE_MAIN): bp5_to_be [--32] SRC.bp DST.bp (--32: bp5_to_32.c's
 * 32-bit-writer rewrite instead) */
#include "format/bp5_to_be.h"

#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_meta.h"
#include "format/bp5_op.h"
#include "format/ffs_id.h"
#include "compress/blosczlib.h"
#include "compress/bzip2_op.h"

#ifdef BP5_TO_BE_BZIP2
#include <bzlib.h>
#endif

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A re-encoded operator block: its new DataBlockLocation and DataBlockSize. */
typedef struct patch {
    size_t step;
    uint64_t w, b;
    uint32_t field;
    uint64_t loc, size;
} patch;

typedef struct patches {
    patch *v;
    size_t n, cap;
} patches;

typedef struct conv {
    const uint8_t *in; /* the block's data (base record + variable part), little-endian */
    uint8_t *out;      /* the same bytes, being swapped */
    size_t len;
    const bp5_format *f;
    int mm_ld;         /* the MinMax being swapped is long double's */
    const patches *pt; /* operator blocks re-encoded, and this block's step and writer */
    size_t step;
    uint64_t w;
    char why[256];     /* why not convertible / damaged */
} conv;

static void swap_at(uint8_t *p, size_t es)
{
    for (size_t a = 0, z = es - 1; es > 1 && a < z; a++, z--) {
        uint8_t t = p[a];
        p[a] = p[z];
        p[z] = t;
    }
}

static uint64_t ld_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
    return v;
}

static int in_range(const conv *c, uint64_t off, uint64_t bytes)
{
    return off <= c->len && bytes <= c->len - off;
}

/* n elements of es bytes at data offset off, each swapped */
static int swap_elems(conv *c, uint64_t off, uint64_t n, size_t es)
{
    if (es == 0 || n > c->len / es || !in_range(c, off, n * es)) {
        snprintf(c->why, sizeof c->why, "%llu x %zu bytes at %llu outside the block",
                 (unsigned long long)n, es, (unsigned long long)off);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) swap_at(c->out + off + i * es, es);
    return 0;
}

static int swap_struct(conv *c, int si, uint64_t base, size_t mm_es);

/* An x87 long double (16 bytes, little-endian) as a big-endian writer's IEEE binary128. */
static void ld_to_be(uint8_t *dst, const uint8_t *src)
{
    gbp_ld_to_binary128(dst, src);
    swap_at(dst, 16);
}

/* n long doubles at data offset off */
static int conv_ld(conv *c, uint64_t off, uint64_t n)
{
    if (n > c->len / 16 || !in_range(c, off, n * 16)) {
        snprintf(c->why, sizeof c->why, "%llu long doubles at %llu outside the block",
                 (unsigned long long)n, (unsigned long long)off);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) ld_to_be(c->out + off + 16 * i, c->in + off + 16 * i);
    return 0;
}

/* the element size of an attribute's values from its name's first byte ('0' + type [+ 18]) */
static size_t attr_es(const char *name, int *complex)
{
    static const size_t es[16] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 16, 8, 16, 0, 1};
    int t = (unsigned char)name[0] - '0';
    if (t >= 18) t -= 18;
    *complex = t == 12 || t == 13;
    return t >= 1 && t <= 15 ? es[t] : 0;
}

/* One field of a structure whose record starts at data offset base. mm_es: the element size of a
 * MetaArray's MinMax (the variable's). */
static int swap_field(conv *c, const bp5_ffs_struct *st, uint32_t fi, uint64_t base, size_t mm_es)
{
    const bp5_ffs_field *fl = &st->fields[fi];
    uint64_t at = base + (uint64_t)fl->offset;
    size_t psz = (size_t)c->f->ptr_size;
    if (!fl->is_ptr) {
        uint64_t n = 1;
        for (int k = 0; k < fl->ndims; k++) n *= fl->dim[k];
        if (fl->base == BP5_FT_SUB) {
            for (uint64_t i = 0; i < n; i++) {
                int rc = swap_struct(c, fl->sub, at + i * (uint64_t)fl->size, mm_es);
                if (rc) return rc;
            }
            return 0;
        }
        return fl->base == BP5_FT_CHAR ? 0 : swap_elems(c, at, n, (size_t)fl->size);
    }
    if (!in_range(c, at, psz)) return swap_elems(c, at, 1, psz);
    uint64_t target = ld_le(c->in + at, psz);
    swap_at(c->out + at, psz);
    if (target == 0 || (fl->base == BP5_FT_STRING && fl->ndims == 0)) return 0; /* strings stay */
    uint64_t n = 1;
    for (int k = 0; k < fl->ndims; k++) {
        uint64_t d = fl->dim[k];
        if (fl->ctrl[k] >= 0) {
            const bp5_ffs_field *cf = &st->fields[fl->ctrl[k]];
            uint64_t ca = base + (uint64_t)cf->offset;
            if (!in_range(c, ca, (uint64_t)cf->size)) return swap_elems(c, ca, 1, (size_t)cf->size);
            d = ld_le(c->in + ca, (size_t)cf->size);
        }
        n *= d;
    }
    if (fl->base == BP5_FT_STRING) { /* an array of string pointers: the strings stay */
        if (swap_elems(c, target, n, psz)) return -1;
        return 0;
    }
    if (fl->base == BP5_FT_SUB) {
        for (uint64_t i = 0; i < n; i++) {
            int rc = swap_struct(c, fl->sub, target + i * (uint64_t)fl->size, 0);
            if (rc) return rc;
        }
        return 0;
    }
    if (fl->base == BP5_FT_CHAR || (fl->size == 1 && strcmp(fl->name, "Values") == 0)) {
        /* MinMax: 2 values of the variable's type per block; PrimAttr Values: the attribute's */
        if (strcmp(fl->name, "MinMax") == 0 && c->mm_ld) return conv_ld(c, target, n / 16);
        if (strcmp(fl->name, "MinMax") == 0 && mm_es > 1) return swap_elems(c, target, n / mm_es, mm_es);
        if (strcmp(fl->name, "Values") == 0 && strcmp(st->name, "PrimAttr") == 0) {
            int nf = -1;
            for (uint32_t i = 0; i < st->nfields; i++)
                if (strcmp(st->fields[i].name, "name") == 0) nf = (int)i;
            uint64_t na = nf < 0 ? 0 : base + (uint64_t)st->fields[nf].offset, no;
            if (nf < 0 || !in_range(c, na, psz) || (no = ld_le(c->in + na, psz)) == 0 ||
                !in_range(c, no, 1) || !memchr(c->in + no, 0, c->len - no)) {
                snprintf(c->why, sizeof c->why, "an attribute without a name");
                return -1;
            }
            int cx = 0;
            size_t es = attr_es((const char *)c->in + no, &cx);
            if (es == 16 && !cx) return conv_ld(c, target, n / 16);
            if (es == 0 || n % es) return 0; /* strings are StrAttr: nothing else to swap */
            return cx ? swap_elems(c, target, 2 * n / es, es / 2) : swap_elems(c, target, n / es, es);
        }
        return 0;
    }
    if (fl->base == BP5_FT_FLOAT && fl->size == 16) return conv_ld(c, target, n);
    return swap_elems(c, target, n, (size_t)fl->size);
}

static int swap_struct(conv *c, int si, uint64_t base, size_t mm_es)
{
    const bp5_ffs_struct *st = &c->f->structs[si];
    for (uint32_t i = 0; i < st->nfields; i++) {
        int rc = swap_field(c, st, i, base, mm_es);
        if (rc) return rc;
    }
    return 0;
}

/* The integer array element b that pointer field fi of the MetaArray record at data offset base
 * points to, set to v (big-endian). */
static int set_elem(conv *c, const bp5_ffs_struct *ss, int fi, uint64_t base, uint64_t b, uint64_t v)
{
    size_t psz = (size_t)c->f->ptr_size;
    uint64_t at = base + (uint64_t)ss->fields[fi].offset, t;
    if (fi < 0 || !in_range(c, at, psz) || (t = ld_le(c->in + at, psz)) == 0 ||
        !in_range(c, t + 8 * b, 8)) {
        snprintf(c->why, sizeof c->why, "an operator block's location out of the block");
        return -1;
    }
    for (int k = 0; k < 8; k++) c->out[t + 8 * b + (uint64_t)k] = (uint8_t)(v >> (56 - 8 * k));
    return 0;
}

/* The main structure of a block: MetaData variable fields pass their element size for MinMax;
 * long double values become binary128; re-encoded operator blocks get their new place and size. */
static int swap_record(conv *c)
{
    const bp5_ffs_struct *st = &c->f->structs[0];
    for (uint32_t i = 0; i < st->nfields; i++) {
        size_t mm_es = 0;
        const bp5_var_field *var = NULL;
        for (size_t v = 0; v < c->f->nvars; v++)
            if (c->f->vars[v].field == i) {
                var = &c->f->vars[v];
                mm_es = var->esize;
            }
        const bp5_ffs_field *fl = &st->fields[i];
        int rc;
        if (fl->base == BP5_FT_FLOAT && fl->size == 16 && !fl->is_ptr) {
            rc = conv_ld(c, (uint64_t)fl->offset, 1); /* a long double value or old attribute */
        } else {
            c->mm_ld = var && var->bp5_type == 11;
            rc = swap_field(c, st, i, 0, mm_es);
            c->mm_ld = 0;
        }
        if (rc) return rc;
        for (size_t k = 0; var && var->has_op && k < c->pt->n; k++) {
            const patch *p = &c->pt->v[k];
            if (p->step != c->step || p->w != c->w || p->field != i) continue;
            const bp5_ffs_struct *ss = &c->f->structs[fl->sub];
            if (set_elem(c, ss, var->ma.location, (uint64_t)fl->offset, p->b, p->loc) ||
                set_elem(c, ss, var->ma.dbsize, (uint64_t)fl->offset, p->b, p->size))
                return -1;
        }
    }
    return 0;
}

/* ---- whole files ------------------------------------------------------------------------------ */

typedef struct dataset {
    uint8_t *idx, *mmd, *md0;
    size_t nidx, nmmd, nmd0;
    uint8_t *data[16], *odata[16];
    size_t ndata[16];
    int nsub;
} dataset;

static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(l > 0 ? (size_t)l : 1);
    if (b && l > 0 && fread(b, 1, (size_t)l, f) != (size_t)l) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = l > 0 ? (size_t)l : 0;
    return b;
}

static int spill(const char *dir, const char *name, const uint8_t *b, size_t n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    int ok = fwrite(b, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void swap64(uint8_t *p) { swap_at(p, 8); }

/* md.idx: the header's byte order and file id, every record's length and numbers */
static void convert_idx(uint8_t *p, size_t n)
{
    p[36] = 1;
    swap_at(p + 42, 4);
    for (size_t at = 64; at + 9 <= n;) {
        uint64_t len = ld_le(p + at + 1, 8);
        swap64(p + at + 1);
        for (uint64_t i = 0; i < len / 8 && at + 9 + 8 * i + 8 <= n; i++) swap64(p + at + 9 + 8 * i);
        at += 9 + (size_t)len;
    }
}

/* One FFS description in place (lengths are u16be already; the native numbers are swapped). */
static void convert_desc(uint8_t *d, size_t n)
{
    d[2] = 1;
    for (size_t at = 8; at + 28 <= n;) {
        uint8_t *s = d + at;
        size_t len = (size_t)s[0] << 8 | s[1] | (size_t)s[24] << 24 | (size_t)s[25] << 16;
        uint32_t nf = (uint32_t)ld_le(s + 8, 4), hsz = s[17];
        s[3] = 1;
        swap_at(s + 4, 4);
        swap_at(s + 8, 4);
        swap_at(s + 12, 4);
        s[18] = 1; /* IEEE-754 big-endian: the u16 1, little-endian bytes 01 00 -> 00 01 */
        s[19] = 0;
        swap_at(s + 18, 2);
        swap_at(s + 20, 2);
        swap_at(s + 26, 2);
        for (uint32_t i = 0; i < nf && hsz + 16 * (size_t)(i + 1) <= len; i++)
            for (int k = 0; k < 4; k++) swap_at(s + hsz + 16 * i + 4 * k, 4);
        if (len < 28) break;
        at += len;
    }
}

/* One FFS block of md.0 at p (n bytes) with the formats of the little-endian dataset: writer w's
 * block of step s (attribute blocks: any w). */
static int convert_block(bp5_formats *ft, uint8_t *p, size_t n, const patches *pt, size_t s,
                         uint64_t w, char *why, size_t wn)
{
    const bp5_format *f = n >= 24 ? bp5_formats_find(ft, p) : NULL;
    if (!f || !f->variant || f->rep_version < 2) {
        snprintf(why, wn, "a block without a known variant format");
        return -1;
    }
    uint64_t dl = ld_le(p + 12, 8);
    if (dl > n - 24) {
        snprintf(why, wn, "block data length %llu", (unsigned long long)dl);
        return -1;
    }
    conv c;
    memset(&c, 0, sizeof c);
    c.in = malloc(dl ? (size_t)dl : 1);
    memcpy((uint8_t *)c.in, p + 24, (size_t)dl);
    c.out = p + 24;
    c.len = (size_t)dl;
    c.f = f;
    c.pt = pt;
    c.step = s;
    c.w = w;
    int rc = swap_record(&c);
    swap64(p + 12);
    if (rc) snprintf(why, wn, "%s", c.why);
    free((void *)c.in);
    return rc;
}

/* The payload swap: every block of every step (a sink of the library's own decoder). */
typedef struct payload_ctx {
    bp5_formats *ft;
    const bp5_idx *ix;
    size_t step;
    dataset *ds;
    patches *pt;
    int rc;
    char why[256];
} payload_ctx;

/* The records of a struct array (bytes at p): each field's elements as values_to_be swaps a
 * variable of the field's type (the layout from the struct's description in ft). */
static void struct_to_be(bp5_formats *ft, const bp5_var_field *f, uint8_t *p, uint64_t bytes)
{
    const bp5_format *sf = bp5_formats_find(ft, f->sid);
    gbp_struct_def *d = NULL;
    const char *why = NULL;
    if (!sf || bp5_struct_def(sf, f->esize, &d, &why) != GPUBP_OK || !d) return;
    for (uint64_t r = 0; r + d->size <= bytes; r += d->size)
        for (size_t i = 0; i < d->nfields; i++) {
            const gbp_struct_field *fl = &d->fields[i];
            uint8_t *q = p + r + fl->offset, t[16];
            size_t es = gbp_type_size(fl->type);
            if (fl->type == GPUBP_TYPE_LONG_DOUBLE) {
                for (size_t k = 0; k < fl->count; k++) {
                    ld_to_be(t, q + 16 * k);
                    memcpy(q + 16 * k, t, 16);
                }
                continue;
            }
            int cx = fl->type == GPUBP_TYPE_FLOAT_COMPLEX || fl->type == GPUBP_TYPE_DOUBLE_COMPLEX;
            size_t unit = cx ? es / 2 : es;
            for (size_t k = 0; unit > 1 && k < fl->count * es; k += unit) swap_at(q + k, unit);
        }
    gbp_struct_def_free(d);
}

/* n values of v (es bytes each) at p: each element (each half of a complex) swapped; long double
 * as binary128; struct records field by field */
static void values_to_be(bp5_formats *ft, const bp5_var_field *f, uint8_t *p, uint64_t bytes)
{
    uint8_t t[16];
    if (f->bp5_type == 16) {
        struct_to_be(ft, f, p, bytes);
        return;
    }
    if (f->bp5_type == 11) {
        for (uint64_t i = 0; i + 16 <= bytes; i += 16) {
            ld_to_be(t, p + i);
            memcpy(p + i, t, 16);
        }
        return;
    }
    size_t es = f->esize / (f->bp5_type == 12 || f->bp5_type == 13 ? 2 : 1);
    for (uint64_t i = 0; es > 1 && i + es <= bytes; i += es) swap_at(p + i, es);
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int k = 0; k < n; k++) p[k] = (uint8_t)(v >> (8 * (n - 1 - k)));
}

/* An operator buffer z (n bytes, little-endian) re-encoded with big-endian values and header:
 * *out (malloc'd), *olen. 0, -1 (damaged: pc->why), -2 (no libbz2). */
static int reencode(payload_ctx *pc, const bp5_var_field *f, const uint8_t *z, size_t n,
                    uint64_t raw, uint8_t **out, size_t *olen)
{
    uint8_t *r = malloc(raw ? (size_t)raw : 1), *o = NULL;
    int rc = 0, t = n >= 12 ? z[0] : -1;
    size_t ol = 0;
    if (t == BP5_OP_NULL && n >= 12 + raw) {
        memcpy(r, z + 12, (size_t)raw);
    } else if (t == BP5_OP_BZIP2) {
        int d = gbp_bzip2_decompress(z, n, r, (size_t)raw);
        rc = d == GPUBP_OK ? 0 : d == GPUBP_ERR_CODEC ? -2 : -1;
    } else if (t == BP5_OP_BLOSC) {
        int d = gbp_blosc_decompress(z, n, r, (size_t)raw, 1);
        rc = d == GPUBP_OK ? 0 : d == GPUBP_ERR_CODEC ? -2 : -1; /* a codec not built in: -2 */
    } else if (t >= 0) {
        rc = -3; /* an operator libgpubp does not decode (a plugin, zfp, ...): not converted */
    } else {
        rc = -1;
    }
    if (rc == 0) values_to_be(pc->ft, f, r, raw);
    if (rc == 0 && t == BP5_OP_NULL) {
        ol = 12 + (size_t)raw;
        o = malloc(ol);
        memcpy(o, z, 4);
        put_be(o + 4, raw, 8);
        memcpy(o + 12, r, (size_t)raw);
    } else if (rc == 0 && t == BP5_OP_BZIP2) {
#ifdef BP5_TO_BE_BZIP2
        unsigned int cl = (unsigned int)(raw + raw / 100 + 600);
        o = malloc(36 + (size_t)cl);
        if (BZ2_bzBuffToBuffCompress((char *)o + 36, &cl, (char *)r, (unsigned int)raw, 1, 0, 0) != BZ_OK) {
            rc = -1;
        } else {
            memcpy(o, z, 4);
            put_be(o + 4, raw, 8);
            put_be(o + 12, 1, 8); /* one batch: (0, raw, 36, cl) */
            put_be(o + 20, 0, 4);
            put_be(o + 24, raw, 4);
            put_be(o + 28, 36, 4);
            put_be(o + 32, cl, 4);
            ol = 36 + cl;
        }
#else
        rc = -2;
#endif
    } else if (rc == 0) {
        size_t cap = gbp_blosc_bound((size_t)raw);
        o = malloc(cap);
        if (gbp_blosc_compress(r, (size_t)raw, f->esize, GBP_BLOSC_ZLIB, 5, GBP_BLOSC_SHUFFLE, 1, o,
                               cap, &ol) != GPUBP_OK || ol < 23) {
            rc = -1;
        } else {
            swap_at(o + 4, 8);
            if (!(o[15] | o[16] | o[17] | o[18])) swap_at(o + 19, 4); /* the chunk count */
        }
    }
    if (rc) snprintf(pc->why, sizeof pc->why, "'%s': operator buffer %s", f->name,
                     rc == -2 ? "of a codec this build lacks" :
                     rc == -3 ? "of an operator libgpubp does not decode" : "not re-encoded");
    if (rc == -3) rc = -2;
    free(r);
    if (rc) free(o);
    else {
        *out = o;
        *olen = ol;
    }
    return rc;
}

/* Re-encodes block b (an operator buffer at offset off of data.sf) and records where it went. */
static int op_block(payload_ctx *pc, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                    uint64_t b, uint64_t sf, uint64_t off)
{
    dataset *ds = pc->ds;
    uint64_t old = a->stored[b], ne = 1;
    for (uint64_t k = 0; k < a->ndims; k++) ne *= a->count[b * a->ndims + k];
    if (old > ds->ndata[sf] || off > ds->ndata[sf] - old) {
        snprintf(pc->why, sizeof pc->why, "'%s': operator block past data.%llu", f->name,
                 (unsigned long long)sf);
        return -1;
    }
    uint8_t *o = NULL;
    size_t ol = 0;
    int rc = reencode(pc, f, ds->data[sf] + off, (size_t)old, ne * f->esize, &o, &ol);
    if (rc) return rc;
    uint64_t loc = a->location[b];
    if (ol <= old) { /* in place */
        memset(ds->odata[sf] + off, 0, (size_t)old);
        memcpy(ds->odata[sf] + off, o, ol);
    } else { /* at the end of the data file, in the writer's final piece */
        const bp5_step_rec *r = &pc->ix->steps[pc->step];
        const uint64_t *pcs = r->pieces + w * (2 * r->nflush + 1);
        uint64_t sum = 0, at = (ds->ndata[sf] + 15) / 16 * 16;
        for (uint64_t i = 0; i < r->nflush; i++) sum += pcs[2 * i + 1];
        uint8_t *g = realloc(ds->odata[sf], (size_t)at + ol);
        if (!g) {
            free(o);
            return -1;
        }
        memset(g + ds->ndata[sf], 0, (size_t)at - ds->ndata[sf]);
        memcpy(g + at, o, ol);
        ds->odata[sf] = g;
        ds->ndata[sf] = (size_t)at + ol;
        loc = sum + (at - pcs[2 * r->nflush]);
    }
    free(o);
    patches *pt = pc->pt;
    if (pt->n == pt->cap) {
        pt->cap = pt->cap ? 2 * pt->cap : 64;
        pt->v = realloc(pt->v, pt->cap * sizeof *pt->v);
    }
    pt->v[pt->n++] = (patch){pc->step, w, b, f->field, loc, ol};
    return 0;
}

static int swap_payload(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                        const bp5_value_rec *v)
{
    payload_ctx *pc = ctx;
    (void)v;
    if (!a || f->unsupported) return GPUBP_OK;
    for (uint64_t b = 0; b < a->nblocks; b++) {
        if (a->location[b] == BP5_NO_DATA) continue;
        uint64_t sf, off, ne = 1;
        if (bp5_locate(pc->ix, pc->step, w, a->location[b], &sf, &off, "md.0") != GPUBP_OK ||
            sf >= (uint64_t)pc->ds->nsub) {
            snprintf(pc->why, sizeof pc->why, "'%s': block %llu not located", f->name,
                     (unsigned long long)b);
            pc->rc = -1;
            return GPUBP_ERR_FORMAT;
        }
        if (a->stored) {
            int rc = op_block(pc, w, f, a, b, sf, off);
            if (rc) {
                pc->rc = rc;
                return GPUBP_ERR_NOT_SUPPORTED;
            }
            continue;
        }
        for (uint64_t k = 0; k < a->ndims; k++) ne *= a->count[b * a->ndims + k];
        size_t es = f->esize;
        if (ne * es > pc->ds->ndata[sf] || off > pc->ds->ndata[sf] - ne * es) {
            snprintf(pc->why, sizeof pc->why, "'%s': block past data.%llu", f->name,
                     (unsigned long long)sf);
            pc->rc = -1;
            return GPUBP_ERR_FORMAT;
        }
        values_to_be(pc->ft, f, pc->ds->odata[sf] + off, ne * es);
    }
    return GPUBP_OK;
}

static int no_attr(void *ctx, gbp_attr *a)
{
    (void)ctx;
    gbp_attr_free(a);
    return GPUBP_OK;
}

int bp5_to_be(const char *src, const char *dst, char *why, size_t wn)
{
    dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = -1;
    bp5_idx ix;
    bp5_formats ft;
    bp5_scratch scr;
    patches pt = {NULL, 0, 0};
    ffs_idmap ids = {NULL, NULL, 0};
    bp5_idx_init(&ix);
    bp5_formats_init(&ft);
    memset(&scr, 0, sizeof scr);
    snprintf(why, wn, "cannot read the dataset");
    ds.idx = slurp(src, "md.idx", &ds.nidx);
    ds.mmd = slurp(src, "mmd.0", &ds.nmmd);
    ds.md0 = slurp(src, "md.0", &ds.nmd0);
    for (ds.nsub = 0; ds.nsub < 16; ds.nsub++) {
        char nm[32];
        snprintf(nm, sizeof nm, "data.%d", ds.nsub);
        ds.data[ds.nsub] = slurp(src, nm, &ds.ndata[ds.nsub]);
        if (!ds.data[ds.nsub]) break;
        ds.odata[ds.nsub] = malloc(ds.ndata[ds.nsub] ? ds.ndata[ds.nsub] : 1);
        memcpy(ds.odata[ds.nsub], ds.data[ds.nsub], ds.ndata[ds.nsub]);
    }
    if (!ds.idx || !ds.mmd || !ds.md0 || ds.nidx < 64 || ds.idx[36] != 0) goto out;
    if (bp5_idx_parse(&ix, ds.idx, ds.nidx, ds.nmd0, 0, "md.idx") != GPUBP_OK ||
        bp5_formats_parse(&ft, ds.mmd, ds.nmmd, 0, "mmd.0") != GPUBP_OK) {
        snprintf(why, wn, "not a readable little-endian BP5 dataset: %s", gbp_error_message());
        goto out;
    }
    if (ffs_check_mmd(ds.mmd, ds.nmmd)) {
        snprintf(why, wn, "mmd.0's ids are not the hashes of their descriptions");
        goto out;
    }
    /* the payloads first: they are found through the little-endian metadata */
    for (size_t s = 0; s < ix.nsteps; s++) {
        payload_ctx pc = {&ft, &ix, s, &ds, &pt, 0, ""};
        bp5_md_sink sink = {&pc, swap_payload, no_attr, NULL, NULL};
        const bp5_step_rec *r = &ix.steps[s];
        if (bp5_decode_step(&ix, &ft, s, ds.md0 + r->md_pos, (size_t)r->md_size, &scr, &sink,
                            "md.0") != GPUBP_OK) {
            snprintf(why, wn, "%s", pc.rc ? pc.why : gbp_error_message());
            rc = pc.rc ? pc.rc : -1;
            goto out;
        }
    }
    /* mmd.0: entry lengths and descriptions */
    for (size_t at = 0; at + 28 <= ds.nmmd;) {
        uint64_t il = ld_le(ds.mmd + at + 8, 8);
        convert_desc(ds.mmd + at + 28, (size_t)il);
        swap64(ds.mmd + at);
        swap64(ds.mmd + at + 8);
        at += 28 + (size_t)il;
    }
    if (ffs_rehash_mmd(ds.mmd, ds.nmmd, 1, &ids)) {
        snprintf(why, wn, "mmd.0 cut");
        goto out;
    }
    /* md.0: each step's size table and blocks */
    uint8_t *md = malloc(ds.nmd0 ? ds.nmd0 : 1);
    memcpy(md, ds.md0, ds.nmd0);
    for (size_t s = 0; s < ix.nsteps; s++) {
        const bp5_step_rec *r = &ix.steps[s];
        uint64_t W = ix.maps[r->map].nwriters, at = r->md_pos + 8 + 16 * W;
        uint8_t *p = md + r->md_pos;
        for (uint64_t i = 0; i < 2 * W; i++) {
            uint64_t sz = ld_le(ds.md0 + r->md_pos + 8 + 8 * i, 8);
            if (sz && convert_block(&ft, md + at, (size_t)sz, &pt, s, i, why, wn)) {
                rc = -1;
                free(md);
                goto out;
            }
            if (sz) ffs_idmap_apply(&ids, md + at);
            at += sz;
        }
        for (uint64_t i = 0; i < 1 + 2 * W; i++) swap64(p + 8 * i);
    }
    convert_idx(ds.idx, ds.nidx);
    mkdir(dst, 0777);
    rc = spill(dst, "md.idx", ds.idx, ds.nidx) | spill(dst, "mmd.0", ds.mmd, ds.nmmd) |
         spill(dst, "md.0", md, ds.nmd0);
    for (int k = 0; k < ds.nsub; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "data.%d", k);
        rc |= spill(dst, nm, ds.odata[k], ds.ndata[k]);
    }
    free(md);
    if (rc) snprintf(why, wn, "cannot write %s", dst);
out:
    bp5_idx_free(&ix);
    bp5_formats_free(&ft);
    bp5_scratch_free(&scr);
    free(pt.v);
    ffs_idmap_free(&ids);
    free(ds.idx);
    free(ds.mmd);
    free(ds.md0);
    for (int k = 0; k < ds.nsub; k++) {
        free(ds.data[k]);
        free(ds.odata[k]);
    }
    return rc;
}

#ifdef BP5_TO_BE_MAIN
#include "format/bp5_to_32.h"

int main(int argc, char **argv)
{
    char why[512];
    int w32 = argc == 4 && strcmp(argv[1], "--32") == 0;
    if (argc != 3 && !w32) {
        fprintf(stderr, "usage: bp5_to_be [--32] SRC.bp DST.bp\n");
        return 2;
    }
    const char *src = argv[argc - 2], *dst = argv[argc - 1];
    int rc = w32 ? bp5_to_32(src, dst, why, sizeof why) : bp5_to_be(src, dst, why, sizeof why);
    if (rc) fprintf(stderr, "bp5_to_be: %s: %s\n", src, why);
    return rc == 0 ? 0 : rc == -2 ? 77 : 1;
}
#endif
