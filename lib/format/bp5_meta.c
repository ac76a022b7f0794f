/* FFS-encoded blocks of md.0 (§6-§8): a 24-byte header (format id, data length), the base record
 * (a copy of the writer's struct) and a variable part that pointer fields reach through offsets
 * from the base record. Fields are read at the offsets and sizes their format gives; every
 * pointer, count and string is checked against the block before it is followed. */
#include "format/bp5_meta.h"
#include "format/bp5_ffs.h"

typedef struct blk {
    const uint8_t *d;   /* the base record */
    size_t len;         /* data length: base record + variable part */
    size_t reclen;      /* base record length */
    uint64_t off;       /* md.0 offset of d[0] */
    int be, psz, swap;
    const char *what;
} blk;

#define blk_err(b, at, ...) \
    bp5_damaged((b)->what, "metadata block", (b)->off + (uint64_t)(at), __VA_ARGS__)

static int host_be(void)
{
    const uint16_t x = 1;
    uint8_t c;
    memcpy(&c, &x, 1);
    return c == 0;
}

static void swap_elems(uint8_t *p, size_t n, size_t es)
{
    for (size_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, z = es - 1; a < z; a++, z--) {
            uint8_t t = p[a];
            p[a] = p[z];
            p[z] = t;
        }
}

/* n long double elements at p (16 bytes each) into the library's layout (x87, gpubp.h): a
 * little-endian file's as they are (an x86-64 writer's); a big-endian writer's, which FFS only
 * byte-swaps, taken as IEEE binary128 and converted exactly. -1 when one cannot be. */
static int ld_from_file(const blk *b, uint8_t *p, size_t n)
{
    for (size_t i = 0; b->be && i < n; i++, p += 16) {
        swap_elems(p, 1, 16);
        if (gbp_ld_from_binary128(p, p)) return -1;
    }
    return 0;
}

/* An unsigned integer of `size` bytes at data offset at. */
static int rd_uint(const blk *b, size_t at, int size, uint64_t *v)
{
    *v = 0;
    if (at > b->len || (size_t)size > b->len - at)
        return blk_err(b, at, "a %d-byte field beyond the block's %zu bytes", size, b->len);
    const uint8_t *p = b->d + at;
    switch (size) {
    case 1: *v = p[0]; break;
    case 2: *v = bp5_ld16(p, b->be); break;
    case 4: *v = bp5_ld32(p, b->be); break;
    case 8: *v = bp5_ld64(p, b->be); break;
    default: return blk_err(b, at, "integer field of %d bytes", size);
    }
    return GPUBP_OK;
}

static int rd_ptr(const blk *b, size_t at, uint64_t *v)
{
    return rd_uint(b, at, b->psz, v);
}

/* Where `count` elements of `es` bytes that the pointer at `at` points to start; *res = 0 for
 * NULL (allowed, the caller decides). */
static int rd_target(const blk *b, size_t at, uint64_t count, size_t es, size_t *res)
{
    uint64_t o;
    *res = 0;
    GBP_FORWARD_IF_ERROR(rd_ptr(b, at, &o));
    if (o == 0) return GPUBP_OK;
    size_t bytes;
    if (count > SIZE_MAX || !gbp_mul_ok((size_t)count, es, &bytes) || o < b->reclen ||
        o > b->len || bytes > b->len - (size_t)o)
        return blk_err(b, at, "pointer to %llu x %zu bytes at %llu outside the block's %zu bytes",
                       (unsigned long long)count, es, (unsigned long long)o, b->len);
    *res = (size_t)o;
    return GPUBP_OK;
}

/* A string the pointer at `at` points to; NULL stays NULL. */
static int rd_str(const blk *b, size_t at, const char **s, size_t *sl)
{
    uint64_t o;
    *s = NULL;
    *sl = 0;
    GBP_FORWARD_IF_ERROR(rd_ptr(b, at, &o));
    if (o == 0) return GPUBP_OK;
    const uint8_t *z = o < b->reclen || o >= b->len ? NULL : memchr(b->d + o, 0, b->len - (size_t)o);
    if (!z)
        return blk_err(b, at, "string at %llu is outside the block or not terminated",
                       (unsigned long long)o);
    *s = (const char *)b->d + o;
    *sl = (size_t)(z - (b->d + o));
    return GPUBP_OK;
}

/* Reads the block header (§6.1): *fmt, and *b set up over the data. */
static int open_block(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                      const char *what, const bp5_format **fmt, blk *b)
{
    blk h = {p, n, 0, file_off, 0, 8, 0, what};
    if (n < 16) return blk_err(&h, 0, "block of %zu bytes", n);
    const bp5_format *f = bp5_formats_find(ft, p);
    if (!f)
        return blk_err(&h, 0, "format id %02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x is not in mmd.0",
                       p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]);
    size_t hdr = 16;
    uint64_t dl = (uint64_t)f->structs[0].record_length;
    if (f->variant) {
        h.be = f->big_endian;
        if (f->rep_version >= 2) {
            if (n < 24) return blk_err(&h, 0, "block of %zu bytes", n);
            dl = bp5_ld64(p + 12, f->big_endian);
            hdr = 24;
        } else {
            dl = bp5_ld32(p + 12, f->big_endian);
        }
    }
    if (dl > n - hdr || dl < (uint64_t)f->structs[0].record_length)
        return blk_err(&h, 12, "data length %llu (record %d) in a block of %zu bytes",
                       (unsigned long long)dl, f->structs[0].record_length, n);
    b->d = p + hdr;
    b->len = (size_t)dl;
    b->reclen = (size_t)f->structs[0].record_length;
    b->off = file_off + hdr;
    b->be = f->big_endian;
    b->psz = f->ptr_size;
    b->swap = f->big_endian != host_be();
    b->what = what;
    *fmt = f;
    return GPUBP_OK;
}

/* n integers of field fl (element size fl->size) at data offset o into out[]. */
static int rd_ints(const blk *b, size_t o, const bp5_ffs_field *fl, uint64_t n, uint64_t *out)
{
    for (uint64_t i = 0; i < n; i++)
        GBP_FORWARD_IF_ERROR(rd_uint(b, o + (size_t)i * (size_t)fl->size, fl->size, &out[i]));
    return GPUBP_OK;
}

static int scratch_u(bp5_scratch *s, size_t n)
{
    return gbp_grow((void **)&s->u, &s->cap_u, n ? n : 1, sizeof *s->u);
}

static int scratch_b(bp5_scratch *s, size_t n)
{
    return gbp_grow((void **)&s->b, &s->cap_b, n ? n : 1, 1);
}

void bp5_scratch_free(bp5_scratch *s)
{
    if (!s) return;
    gbp_free(s->u);
    gbp_free(s->b);
    memset(s, 0, sizeof *s);
}

static void reverse(uint64_t *d, uint64_t n)
{
    for (uint64_t a = 0, z = n - 1; a < z; a++, z--) {
        uint64_t t = d[a];
        d[a] = d[z];
        d[z] = t;
    }
}

/* The dimension and block counts of the MetaArray record at data offset base (§7.4); *a is
 * cleared otherwise. */
static int array_blocks(const blk *b, const bp5_format *f, const bp5_var_field *v, size_t base,
                        bp5_array_rec *a)
{
    const bp5_ffs_field *F = f->structs[f->structs[0].fields[v->field].sub].fields;
    const bp5_meta_array *ma = &v->ma;
    uint64_t D, B, DB;
    GBP_FORWARD_IF_ERROR(rd_uint(b, base + (size_t)F[ma->dims].offset, F[ma->dims].size, &D));
    GBP_FORWARD_IF_ERROR(rd_uint(b, base + (size_t)F[ma->blockcount].offset, F[ma->blockcount].size, &B));
    GBP_FORWARD_IF_ERROR(rd_uint(b, base + (size_t)F[ma->dbcount].offset, F[ma->dbcount].size, &DB));
    if (D == 0 || D > GBP_MAX_DIMS || B == 0 || B > b->len || DB != D * B)
        return blk_err(b, base, "variable '%s': %llu dimensions, %llu blocks, DBCount %llu", v->name,
                       (unsigned long long)D, (unsigned long long)B, (unsigned long long)DB);
    memset(a, 0, sizeof *a);
    a->ndims = D;
    a->nblocks = B;
    return GPUBP_OK;
}

/* One MetaArray record at data offset base (§7.4). */
static int decode_array(const blk *b, const bp5_format *f, const bp5_var_field *v, size_t base,
                        int column_major, bp5_scratch *s, bp5_array_rec *a)
{
    const bp5_ffs_struct *st = &f->structs[f->structs[0].fields[v->field].sub];
    const bp5_ffs_field *F = st->fields;
    const bp5_meta_array *ma = &v->ma;
    GBP_FORWARD_IF_ERROR(array_blocks(b, f, v, base, a));
    uint64_t D = a->ndims, B = a->nblocks, DB = D * B;
    size_t nu = (size_t)(D + 2 * DB + 2 * B);
    GBP_FORWARD_IF_ERROR(scratch_u(s, nu));
    uint64_t *shape = s->u, *count = shape + D, *start = count + DB, *loc = start + DB, *st_sz = loc + B;
    size_t o;
    /* Shape */
    GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->shape].offset, D, (size_t)F[ma->shape].size, &o));
    if (o) {
        GBP_FORWARD_IF_ERROR(rd_ints(b, o, &F[ma->shape], D, shape));
        a->shape = shape;
    }
    if ((v->kind == GPUBP_SHAPE_LOCAL_ARRAY) != (a->shape == NULL))
        return blk_err(b, base, "variable '%s': %s", v->name,
                       a->shape ? "a local array with a shape" : "an array without a shape");
    /* Count */
    GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->count].offset, DB, (size_t)F[ma->count].size, &o));
    if (!o) return blk_err(b, base, "variable '%s': no block counts", v->name);
    GBP_FORWARD_IF_ERROR(rd_ints(b, o, &F[ma->count], DB, count));
    a->count = count;
    /* Offset */
    GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->offset].offset, DB, (size_t)F[ma->offset].size, &o));
    if (o) {
        GBP_FORWARD_IF_ERROR(rd_ints(b, o, &F[ma->offset], DB, start));
        a->start = start;
    }
    if (v->kind == GPUBP_SHAPE_GLOBAL_ARRAY && !a->start)
        return blk_err(b, base, "variable '%s': a global array without block offsets", v->name);
    /* DataBlockLocation */
    GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->location].offset, B, (size_t)F[ma->location].size, &o));
    if (!o) return blk_err(b, base, "variable '%s': no block locations", v->name);
    GBP_FORWARD_IF_ERROR(rd_ints(b, o, &F[ma->location], B, loc));
    a->location = loc;
    if (ma->dbsize >= 0) {
        GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->dbsize].offset, B, (size_t)F[ma->dbsize].size, &o));
        if (!o) return blk_err(b, base, "variable '%s': no stored block sizes", v->name);
        GBP_FORWARD_IF_ERROR(rd_ints(b, o, &F[ma->dbsize], B, st_sz));
        a->stored = st_sz;
    }
    /* ADIOS2 computes no min/max of char, complex and struct arrays; 2.9 still wrote the MinMax
     * of every type, holding its initial values (char 0xFF / 0x00, complex zeros), and a struct
     * of 1, 2, 4, 8 or 16 bytes gets a MinMax it never fills: none, as ADIOS2 2.10 and later
     * read them */
    int no_stats = v->bp5_type == 12 || v->bp5_type == 13 || v->bp5_type == 15 || v->bp5_type == 16;
    if (ma->minmax >= 0 && !no_stats) {
        size_t mb = (size_t)B * 2 * v->esize;
        GBP_FORWARD_IF_ERROR(rd_target(b, base + (size_t)F[ma->minmax].offset, B, 2 * (size_t)v->esize, &o));
        if (o) {
            GBP_FORWARD_IF_ERROR(scratch_b(s, mb));
            memcpy(s->b, b->d + o, mb);
            a->minmax = s->b;
            if (v->bp5_type == 11) { /* not exactly convertible: no statistics */
                if (ld_from_file(b, s->b, 2 * (size_t)B)) a->minmax = NULL;
            } else if (b->swap) {
                swap_elems(s->b, 2 * (size_t)B, v->esize);
            }
        }
    }
    if (v->kind == GPUBP_SHAPE_JOINED_ARRAY) {
        uint64_t nj = 0;
        for (uint64_t k = 0; k < D; k++) nj += shape[k] == BP5_JOINED_DIM;
        if (nj != 1) return blk_err(b, base, "joined array '%s' with %llu joined dimensions", v->name,
                                    (unsigned long long)nj);
    }
    if (column_major && D > 1) {
        if (a->shape) reverse(shape, D);
        for (uint64_t i = 0; i < B; i++) {
            reverse(count + i * D, D);
            if (a->start) reverse(start + i * D, D);
        }
    }
    return GPUBP_OK;
}

static int decode_value(const blk *b, const bp5_format *f, const bp5_var_field *v,
                        bp5_value_rec *val)
{
    const bp5_ffs_field *fl = &f->structs[0].fields[v->field];
    size_t at = (size_t)fl->offset;
    memset(val, 0, sizeof *val);
    if (v->bp5_type == 14) {
        GBP_FORWARD_IF_ERROR(rd_str(b, at, &val->str, &val->str_len));
        if (!val->str) val->str = "";
        return GPUBP_OK;
    }
    size_t es = (size_t)fl->size;
    if (at > b->len || es > b->len - at || es > sizeof val->bytes)
        return blk_err(b, at, "value '%s' of %zu bytes beyond the block", v->name, es);
    memcpy(val->bytes, b->d + at, es);
    if (v->bp5_type == 11) {
        if (es == 16 && ld_from_file(b, val->bytes, 1) == 0) return GPUBP_OK;
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: md.0 offset %llu: long double value '%s' "
                         "of a big-endian writer (IEEE binary128) has no exact x87 80-bit value",
                         b->what, (unsigned long long)(b->off + at), v->name);
    }
    if (b->swap) {
        if (v->bp5_type == 12 || v->bp5_type == 13) swap_elems(val->bytes, 2, es / 2);
        else swap_elems(val->bytes, 1, es);
    }
    return GPUBP_OK;
}

int bp5_decode_metadata(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                        uint64_t writer, int column_major, bp5_scratch *s,
                        const bp5_md_sink *sink, const char *what)
{
    const bp5_format *f = NULL; /* set by open_block on success */
    blk b;
    GBP_FORWARD_IF_ERROR(open_block(ft, p, n, file_off, what, &f, &b));
    if (f->kind != BP5_FMT_METADATA)
        return blk_err(&b, 0, "writer %llu's metadata block has format '%s'",
                       (unsigned long long)writer, f->structs[0].name);
    const bp5_ffs_field *F = f->structs[0].fields;
    uint64_t nbf;
    size_t bfo;
    GBP_FORWARD_IF_ERROR(rd_uint(&b, (size_t)F[f->f_bfcount].offset, F[f->f_bfcount].size, &nbf));
    GBP_FORWARD_IF_ERROR(rd_target(&b, (size_t)F[f->f_bitfield].offset, nbf, 8, &bfo));
    if (!bfo && nbf) return blk_err(&b, (size_t)F[f->f_bitfield].offset, "no bit field");
    for (size_t i = 0; i < f->nvars; i++) {
        const bp5_var_field *v = &f->vars[i];
        uint64_t word = 0;
        if (v->bit / 64 < nbf) GBP_FORWARD_IF_ERROR(rd_uint(&b, bfo + 8 * (size_t)(v->bit / 64), 8, &word));
        if (!(word >> (v->bit % 64) & 1)) continue;
        if (sink->only && strcmp(sink->only, v->name) != 0) continue;
        if (v->unsupported) {
            GBP_FORWARD_IF_ERROR(sink->var(sink->ctx, writer, v, NULL, NULL));
        } else if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE || v->kind == GPUBP_SHAPE_LOCAL_VALUE) {
            bp5_value_rec val;
            GBP_FORWARD_IF_ERROR(decode_value(&b, f, v, &val));
            GBP_FORWARD_IF_ERROR(sink->var(sink->ctx, writer, v, NULL, &val));
        } else if (sink->light && sink->light(sink->ctx, v)) {
            bp5_array_rec a;
            GBP_FORWARD_IF_ERROR(array_blocks(&b, f, v, (size_t)F[v->field].offset, &a));
            GBP_FORWARD_IF_ERROR(sink->var(sink->ctx, writer, v, &a, NULL));
        } else {
            bp5_array_rec a;
            GBP_FORWARD_IF_ERROR(decode_array(&b, f, v, (size_t)F[v->field].offset, column_major, s, &a));
            GBP_FORWARD_IF_ERROR(sink->var(sink->ctx, writer, v, &a, NULL));
        }
    }
    return GPUBP_OK;
}

/* ---- attributes ------------------------------------------------------------------------------ */

/* Hands a finished attribute to the sink, or frees it on error. */
static int emit_attr(const bp5_md_sink *sink, gbp_attr *a, int rc)
{
    if (!rc && sink->attr) {
        rc = sink->attr(sink->ctx, a);
        if (!rc) return GPUBP_OK;
    }
    gbp_attr_free(a);
    return rc;
}

/* Numeric attribute values: n elements of the type's size from p, in host order. */
static int attr_numbers(const blk *b, gbp_attr *a, int bp5_type, const uint8_t *p, size_t bytes,
                        size_t at)
{
    size_t es = gbp_type_size(a->type);
    if (bp5_type == 11) es = 16;
    if (es == 0 || bytes % es)
        return blk_err(b, at, "attribute '%s': %zu bytes of type %d", a->name, bytes, bp5_type);
    a->n = bytes / es;
    a->data = gbp_malloc(bytes ? bytes : 1);
    if (!a->data) return GPUBP_ERR_NOMEM;
    memcpy(a->data, p, bytes);
    if (bp5_type == 11) {
        if (ld_from_file(b, a->data, a->n) == 0) return GPUBP_OK;
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: md.0 offset %llu: long double attribute "
                         "'%s' of a big-endian writer (IEEE binary128) has no exact x87 80-bit "
                         "value", b->what, (unsigned long long)(b->off + at), a->name);
    }
    if (b->swap) {
        if (bp5_type == 12 || bp5_type == 13) swap_elems(a->data, 2 * a->n, es / 2);
        else swap_elems(a->data, a->n, es);
    }
    return GPUBP_OK;
}

static int attr_strings(const blk *b, gbp_attr *a, size_t ptrs, uint64_t n)
{
    a->type = GPUBP_TYPE_STRING;
    a->strings = gbp_calloc(n ? (size_t)n : 1, sizeof *a->strings);
    if (!a->strings) return GPUBP_ERR_NOMEM;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t sl;
        GBP_FORWARD_IF_ERROR(rd_str(b, ptrs + (size_t)i * (size_t)b->psz, &s, &sl));
        a->strings[i] = gbp_strndup(s ? s : "", sl);
        if (!a->strings[i]) return GPUBP_ERR_NOMEM;
        a->n = (size_t)i + 1;
    }
    return GPUBP_OK;
}

static int decode_generic_attrs(const blk *b, const bp5_format *f, const bp5_md_sink *sink)
{
    const bp5_ffs_field *F = f->structs[0].fields;
    for (int list = 0; list < 2; list++) {
        int fc = list ? f->a_scount : f->a_pcount, fa = list ? f->a_strs : f->a_prims;
        const bp5_ffs_struct *es = &f->structs[F[fa].sub];
        uint64_t cnt;
        size_t arr;
        GBP_FORWARD_IF_ERROR(rd_uint(b, (size_t)F[fc].offset, F[fc].size, &cnt));
        GBP_FORWARD_IF_ERROR(rd_target(b, (size_t)F[fa].offset, cnt, (size_t)F[fa].size, &arr));
        if (!arr && cnt) return blk_err(b, (size_t)F[fa].offset, "%llu attributes and no array",
                                        (unsigned long long)cnt);
        for (uint64_t i = 0; i < cnt; i++) {
            size_t e = arr + (size_t)i * (size_t)F[fa].size;
            const bp5_ffs_field *E = es->fields;
            int fn = list ? f->a_sname : f->a_pname, fs = list ? f->a_scount_e : f->a_psize,
                fv = list ? f->a_svals : f->a_pvals;
            const char *name;
            size_t nl;
            uint64_t k;
            GBP_FORWARD_IF_ERROR(rd_str(b, e + (size_t)E[fn].offset, &name, &nl));
            if (!name || nl < 2) return blk_err(b, e, "attribute without a name");
            int t = (unsigned char)name[0] - '0', is_array = 0;
            if (t >= 18) {
                t -= 18;
                is_array = 1;
            }
            if (t < 1 || t > 15 || (list == 1) != (t == 14))
                return blk_err(b, e, "attribute '%s': type %d", name + 1, t);
            GBP_FORWARD_IF_ERROR(rd_uint(b, e + (size_t)E[fs].offset, E[fs].size, &k));
            size_t vo;
            GBP_FORWARD_IF_ERROR(rd_target(b, e + (size_t)E[fv].offset, k,
                                           list ? (size_t)b->psz : 1, &vo));
            if (!vo && k) return blk_err(b, e, "attribute '%s' without values", name + 1);
            gbp_attr a = {0};
            a.name = gbp_strndup(name + 1, nl - 1);
            a.type = bp5_gpubp_type(t);
            a.is_array = is_array;
            int rc = a.name ? GPUBP_OK : GPUBP_ERR_NOMEM;
            if (!rc && list)
                rc = attr_strings(b, &a, vo, k);
            else if (!rc)
                rc = attr_numbers(b, &a, t, b->d + vo, (size_t)k, e);
            if (!rc && !is_array && a.n != 1)
                rc = blk_err(b, e, "single-value attribute '%s' with %zu values", a.name, a.n);
            GBP_FORWARD_IF_ERROR(emit_attr(sink, &a, rc));
        }
    }
    return GPUBP_OK;
}

/* The legacy encoding (§8.2): one field per attribute, arrays with an _ElemCount field before. */
static int decode_old_attrs(const blk *b, const bp5_format *f, const bp5_md_sink *sink)
{
    const bp5_ffs_struct *st = &f->structs[0];
    for (uint32_t i = 0; i < st->nfields; i++) {
        const bp5_ffs_field *fl = &st->fields[i];
        const char *n = fl->name;
        size_t at = (size_t)fl->offset;
        gbp_attr a = {0};
        int rc = GPUBP_OK;
        if (strncmp(n, "BPg_", 4) == 0) {
            /* BPg_<esize>_<type>_<name> */
            const char *p = n + 4;
            uint64_t es = 0, t = 0;
            while (*p >= '0' && *p <= '9' && es < 1000) es = es * 10 + (uint64_t)(*p++ - '0');
            if (*p++ != '_') return blk_err(b, at, "attribute field '%s'", n);
            while (*p >= '0' && *p <= '9' && t < 1000) t = t * 10 + (uint64_t)(*p++ - '0');
            if (*p++ != '_' || t < 1 || t > 15 || fl->ndims)
                return blk_err(b, at, "attribute field '%s'", n);
            a.name = gbp_strdup(p);
            a.type = bp5_gpubp_type((int)t);
            if (!a.name) rc = GPUBP_ERR_NOMEM;
            else if (t == 14) {
                const char *s;
                size_t sl;
                rc = rd_str(b, at, &s, &sl);
                a.type = GPUBP_TYPE_STRING;
                if (!rc) a.strings = gbp_calloc(1, sizeof *a.strings);
                if (!rc && !a.strings) rc = GPUBP_ERR_NOMEM;
                if (!rc) a.strings[0] = gbp_strndup(s ? s : "", sl);
                if (!rc && !a.strings[0]) rc = GPUBP_ERR_NOMEM;
                if (!rc) a.n = 1;
            } else if (fl->size != (int32_t)es || at + es > b->len) {
                rc = blk_err(b, at, "attribute field '%s' of %d bytes", n, fl->size);
            } else {
                rc = attr_numbers(b, &a, (int)t, b->d + at, (size_t)es, at);
            }
        } else if (strncmp(n, "BPG_", 4) == 0 && fl->ndims == 0 && i + 1 < st->nfields) {
            /* BPG_<name>_ElemCount, then BPG_<name> of type <ffs>[BPG_<name>_ElemCount] */
            const bp5_ffs_field *vf = &st->fields[i + 1];
            size_t nl = strlen(n);
            if (nl < 14 || strcmp(n + nl - 10, "_ElemCount") != 0 || vf->ndims != 1 ||
                vf->ctrl[0] != (int)i || strncmp(vf->name, n, nl - 10) != 0 || vf->name[nl - 10])
                return blk_err(b, at, "attribute field '%s'", n);
            i++;
            uint64_t k;
            size_t vo;
            GBP_FORWARD_IF_ERROR(rd_uint(b, at, fl->size, &k));
            int t = vf->base == BP5_FT_STRING ? 14 : bp5_ffs_value_type(f, vf);
            GBP_FORWARD_IF_ERROR(rd_target(b, (size_t)vf->offset, k, (size_t)vf->size, &vo));
            if (!t) return blk_err(b, (size_t)vf->offset, "attribute field '%s' of type '%s'", vf->name, vf->type);
            if (!vo && k) return blk_err(b, (size_t)vf->offset, "attribute '%s' without values", vf->name + 4);
            a.name = gbp_strdup(vf->name + 4);
            a.type = bp5_gpubp_type(t);
            a.is_array = 1;
            if (!a.name) rc = GPUBP_ERR_NOMEM;
            else if (t == 14) rc = attr_strings(b, &a, vo, k);
            else rc = attr_numbers(b, &a, t, b->d + vo, (size_t)k * (size_t)vf->size, at);
        } else {
            return blk_err(b, at, "attribute field '%s'", n);
        }
        GBP_FORWARD_IF_ERROR(emit_attr(sink, &a, rc));
    }
    return GPUBP_OK;
}

int bp5_decode_attrs(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                     const bp5_md_sink *sink, const char *what)
{
    const bp5_format *f = NULL; /* set by open_block on success */
    blk b;
    GBP_FORWARD_IF_ERROR(open_block(ft, p, n, file_off, what, &f, &b));
    if (f->kind == BP5_FMT_ATTRS) return decode_generic_attrs(&b, f, sink);
    if (f->kind == BP5_FMT_OLD_ATTRS) return decode_old_attrs(&b, f, sink);
    return blk_err(&b, 0, "attribute block has format '%s'", f->structs[0].name);
}

/* ---- a step ------------------------------------------------------------------------------------- */

int bp5_decode_step(const bp5_idx *ix, bp5_formats *ft, size_t s, const uint8_t *p, size_t n,
                    bp5_scratch *scr, const bp5_md_sink *sink, const char *what)
{
    const bp5_step_rec *r = &ix->steps[s];
    uint64_t W = ix->maps[r->map].nwriters;
    int be = ix->big_endian;
    blk h = {p, n, 0, r->md_pos, be, 8, 0, what};
    if (n != r->md_size || n < 8 + 16 * W || bp5_ld64(p, be) != n - 8)
        return blk_err(&h, 0, "step %zu: block of %zu bytes, total %llu, for %llu writers", s, n,
                       n >= 8 ? (unsigned long long)bp5_ld64(p, be) : 0ULL, (unsigned long long)W);
    uint64_t at = 8 + 16 * W;
    for (uint64_t i = 0; i < 2 * W; i++) {
        uint64_t sz = bp5_ld64(p + 8 + 8 * i, be);
        if (sz > n - at)
            return blk_err(&h, 8 + 8 * (size_t)i, "step %zu: %s block %llu of %llu bytes, %llu left", s,
                           i < W ? "metadata" : "attribute", (unsigned long long)(i % W),
                           (unsigned long long)sz, (unsigned long long)(n - at));
        at += sz;
    }
    if (at != n)
        return blk_err(&h, 0, "step %zu: blocks of %llu bytes in %zu", s, (unsigned long long)at, n);
    at = 8 + 16 * W;
    for (uint64_t w = 0; w < 2 * W; w++) {
        size_t sz = (size_t)bp5_ld64(p + 8 + 8 * w, be);
        if (w < W)
            GBP_FORWARD_IF_ERROR(bp5_decode_metadata(ft, p + at, sz, r->md_pos + at, w,
                                                     ix->column_major, scr, sink, what));
        else if (sz)
            GBP_FORWARD_IF_ERROR(bp5_decode_attrs(ft, p + at, sz, r->md_pos + at, sink, what));
        at += sz;
    }
    return GPUBP_OK;
}
