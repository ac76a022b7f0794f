/* mmd.0 and the FFS format descriptions in it (§4, §5): each entry is u64 IdLen, u64 InfoLen, the
 * 12-byte id, the description. A description is an 8-byte top header and N+1 structure
 * descriptions (28-byte header, a 16-byte entry per field, NUL-terminated names and types). The
 * lengths in the headers are big-endian, everything else in the writer's byte order.
 *
 * Only descriptions are interpreted here; which structures BP5 builds from them (MetaData with its
 * variable fields, GenericAttributes, the legacy Attributes) is worked out once per format so that
 * decoding a block is a walk over precomputed offsets. */
#include "format/bp5_ffs.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct fctx {
    bp5_format *f;
    const char *what;
    uint64_t off; /* mmd.0 offset of the description */
} fctx;

int bp5_damaged(const char *what, const char *region, uint64_t off, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: damaged %s at offset %llu: %s", what, region,
                     (unsigned long long)off, msg);
}

#define ffs_err(what, off, ...) bp5_damaged((what), "format description", (off), __VA_ARGS__)

void bp5_format_free(bp5_format *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->nstructs; i++) gbp_free(f->structs[i].fields);
    for (size_t i = 0; i < f->nvars; i++) {
        gbp_free(f->vars[i].name);
        gbp_free(f->vars[i].expr);
    }
    gbp_free(f->structs);
    gbp_free(f->vars);
    gbp_free(f->desc);
    memset(f, 0, sizeof *f);
}

/* The NUL-terminated string at offset o of a structure description s[0, len). */
static const char *str_at(const uint8_t *s, size_t len, uint32_t o)
{
    if (o >= len) return NULL;
    if (!memchr(s + o, 0, len - o)) return NULL;
    return (const char *)s + o;
}

static int find_field(const bp5_ffs_struct *st, const char *name)
{
    for (uint32_t i = 0; i < st->nfields; i++)
        if (strcmp(st->fields[i].name, name) == 0) return (int)i;
    return -1;
}

/* Parses a field's type string: base name, then "[N]" or "[ControlField]" dimensions. Sub-structure
 * bases are resolved later (sub = -2 until then). */
static int parse_type(const fctx *c, bp5_ffs_struct *st, bp5_ffs_field *fl, uint64_t at)
{
    const char *t = fl->type, *br = strchr(t, '[');
    size_t bl = br ? (size_t)(br - t) : strlen(t);
    fl->sub = -1;
#define IS(s) (bl == sizeof(s) - 1 && memcmp(t, s, bl) == 0)
    if (IS("integer")) fl->base = BP5_FT_INT;
    else if (IS("unsigned integer")) fl->base = BP5_FT_UINT;
    else if (IS("float") || IS("double")) fl->base = BP5_FT_FLOAT;
    else if (IS("char")) fl->base = BP5_FT_CHAR;
    else if (IS("string")) fl->base = BP5_FT_STRING;
    else if (bl == 0 || t[0] == '*' || memchr(t, '(', bl) || IS("enumeration") || IS("boolean"))
        return ffs_err(c->what, c->off + at, "field '%s': type '%s' is not one BP5 uses", fl->name, t);
    else {
        fl->base = BP5_FT_SUB;
        fl->sub = -2;
    }
#undef IS
    fl->ndims = 0;
    while (br) {
        const char *e = strchr(br, ']');
        if (!e || e == br + 1 || fl->ndims == BP5_FFS_MAX_DIMS)
            return ffs_err(c->what, c->off + at, "field '%s': bad dimensions in '%s'", fl->name, t);
        size_t dl = (size_t)(e - br - 1);
        int k = fl->ndims++;
        fl->ctrl[k] = -1;
        fl->dim[k] = 0;
        if (br[1] >= '0' && br[1] <= '9') {
            for (size_t i = 1; i <= dl; i++) {
                if (br[i] < '0' || br[i] > '9' || fl->dim[k] > (1u << 30))
                    return ffs_err(c->what, c->off + at, "field '%s': bad dimension in '%s'",
                                   fl->name, t);
                fl->dim[k] = fl->dim[k] * 10 + (uint64_t)(br[i] - '0');
            }
        } else {
            for (uint32_t i = 0; i < st->nfields; i++) {
                const char *nm = st->fields[i].name;
                if (nm && strlen(nm) == dl && memcmp(nm, br + 1, dl) == 0) fl->ctrl[k] = (int)i;
            }
            if (fl->ctrl[k] < 0)
                return ffs_err(c->what, c->off + at, "field '%s': no control field for '%s'",
                               fl->name, t);
        }
        br = e[1] == '[' ? e + 1 : NULL;
        if (!br && e[1] != 0)
            return ffs_err(c->what, c->off + at, "field '%s': bad type '%s'", fl->name, t);
    }
    fl->is_ptr = fl->base == BP5_FT_STRING;
    for (int k = 0; k < fl->ndims; k++)
        if (fl->ctrl[k] >= 0) fl->is_ptr = 1;
    return GPUBP_OK;
}

/* One structure description at d[0, len): returns its length in *slen. */
static int parse_struct(const fctx *c, const uint8_t *s, size_t avail, uint64_t at,
                        bp5_ffs_struct *st, size_t *slen)
{
    bp5_format *f = c->f;
    if (avail < 28) return ffs_err(c->what, c->off + at, "structure header is truncated");
    size_t len = (size_t)s[0] << 8 | s[1] | ((size_t)s[24] << 24 | (size_t)s[25] << 16);
    int be = s[3];
    if (s[2] != 1 && s[2] != 2)
        return ffs_err(c->what, c->off + at, "structure version %u is not supported", s[2]);
    if (be > 1 || be != f->big_endian)
        return ffs_err(c->what, c->off + at + 3, "structure byte order %u", s[3]);
    if (len < 28 || len > avail)
        return ffs_err(c->what, c->off + at, "structure length %zu (%zu bytes left)", len, avail);
    uint32_t name_off = bp5_ld32(s + 4, be), nf = bp5_ld32(s + 8, be);
    int32_t reclen = (int32_t)bp5_ld32(s + 12, be);
    int psz = s[16], hsz = s[17];
    if (psz != 4 && psz != 8) return ffs_err(c->what, c->off + at + 16, "pointer size %d", psz);
    if (f->ptr_size && psz != f->ptr_size)
        return ffs_err(c->what, c->off + at + 16, "pointer size %d after %d", psz, f->ptr_size);
    f->ptr_size = psz;
    if (hsz < 28 || (size_t)hsz > len || nf > (len - (size_t)hsz) / 16 || reclen < 0)
        return ffs_err(c->what, c->off + at, "%u fields, header %d, record length %d in %zu bytes",
                       nf, hsz, reclen, len);
    st->name = str_at(s, len, name_off);
    if (!st->name) return ffs_err(c->what, c->off + at + 4, "structure name outside the structure");
    st->record_length = reclen;
    st->nfields = 0;
    st->fields = gbp_calloc(nf ? nf : 1, sizeof *st->fields);
    if (!st->fields) return GPUBP_ERR_NOMEM;
    st->nfields = nf;
    for (uint32_t i = 0; i < nf; i++) {
        const uint8_t *e = s + hsz + 16 * (size_t)i;
        bp5_ffs_field *fl = &st->fields[i];
        fl->name = str_at(s, len, bp5_ld32(e, be));
        fl->type = str_at(s, len, bp5_ld32(e + 4, be));
        fl->size = (int32_t)bp5_ld32(e + 8, be);
        fl->offset = (int32_t)bp5_ld32(e + 12, be);
        if (!fl->name || !fl->type)
            return ffs_err(c->what, c->off + at + (uint64_t)(e - s), "field %u: name or type outside the structure", i);
    }
    for (uint32_t i = 0; i < nf; i++) {
        bp5_ffs_field *fl = &st->fields[i];
        uint64_t fat = at + (uint64_t)hsz + 16 * (uint64_t)i;
        GBP_FORWARD_IF_ERROR(parse_type(c, st, fl, fat));
        uint64_t inl = (uint64_t)(fl->is_ptr ? psz : fl->size);
        for (int k = 0; !fl->is_ptr && k < fl->ndims; k++) /* saturating: dims up to 2^30 each */
            inl = fl->dim[k] && inl > UINT64_MAX / fl->dim[k] ? UINT64_MAX : inl * fl->dim[k];
        if (fl->size <= 0 || fl->size > (1 << 24) || fl->offset < 0 || fl->offset > reclen ||
            inl > (uint64_t)reclen - (uint64_t)fl->offset)
            return ffs_err(c->what, c->off + fat, "field '%s': size %d at %d in a record of %d",
                           fl->name, fl->size, fl->offset, reclen);
        for (int k = 0; k < fl->ndims; k++) {
            if (fl->ctrl[k] < 0) continue;
            const bp5_ffs_field *cf = &st->fields[fl->ctrl[k]];
            if ((cf->base != BP5_FT_INT && cf->base != BP5_FT_UINT) || cf->ndims || cf->size > 8)
                return ffs_err(c->what, c->off + fat, "field '%s': control field '%s' is not an integer",
                               fl->name, cf->name);
        }
    }
    *slen = len;
    return GPUBP_OK;
}

static int is_complex_sub(const bp5_format *f, int sub, int size)
{
    if (sub <= 0) return 0;
    const bp5_ffs_struct *st = &f->structs[sub];
    if (st->nfields != 2 || st->record_length != 2 * size) return 0;
    for (int i = 0; i < 2; i++) {
        const bp5_ffs_field *fl = &st->fields[i];
        if (fl->base != BP5_FT_FLOAT || fl->size != size || fl->ndims || fl->offset != i * size) return 0;
    }
    return 1;
}

/* The ADIOS type of a single value from its FFS type (§7.5): a DataType number or 0. */
int bp5_ffs_value_type(const bp5_format *f, const bp5_ffs_field *fl)
{
    switch (fl->base) {
    case BP5_FT_INT:
    case BP5_FT_CHAR:
        if (fl->base == BP5_FT_CHAR && fl->size != 1) return 0;
        return fl->size == 1 ? 1 : fl->size == 2 ? 2 : fl->size == 4 ? 3 : fl->size == 8 ? 4 : 0;
    case BP5_FT_UINT:
        return fl->size == 1 ? 5 : fl->size == 2 ? 6 : fl->size == 4 ? 7 : fl->size == 8 ? 8 : 0;
    case BP5_FT_FLOAT:
        return fl->size == 4 ? 9 : fl->size == 8 ? 10 : fl->size == 16 ? 11 : 0;
    case BP5_FT_STRING:
        return 14;
    case BP5_FT_SUB:
        if (is_complex_sub(f, fl->sub, 4) && fl->size == 8) return 12;
        if (is_complex_sub(f, fl->sub, 8) && fl->size == 16) return 13;
        return 0;
    default:
        return 0;
    }
}

int bp5_gpubp_type(int t)
{
    switch (t) {
    case 1: return GPUBP_TYPE_INT8;
    case 2: return GPUBP_TYPE_INT16;
    case 3: return GPUBP_TYPE_INT32;
    case 4: return GPUBP_TYPE_INT64;
    case 5: return GPUBP_TYPE_UINT8;
    case 6: return GPUBP_TYPE_UINT16;
    case 7: return GPUBP_TYPE_UINT32;
    case 8: return GPUBP_TYPE_UINT64;
    case 9: return GPUBP_TYPE_FLOAT;
    case 10: return GPUBP_TYPE_DOUBLE;
    case 11: return BP5_GPUBP_LONG_DOUBLE;
    case 12: return GPUBP_TYPE_FLOAT_COMPLEX;
    case 13: return GPUBP_TYPE_DOUBLE_COMPLEX;
    case 14: return GPUBP_TYPE_STRING;
    case 15: return GPUBP_TYPE_CHAR;
    default: return -1;
    }
}

static const uint32_t bp5_esizes[17] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 16, 8, 16, 0, 1, 0};

/* The text of n base64 characters at b (NUL-terminated, the NUL ADIOS2 encodes dropped), or NULL
 * (damaged or out of memory). */
static char *base64_text(const char *b, size_t n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = gbp_malloc(n / 4 * 3 + 4);
    if (!out) return NULL;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && b[i] != '='; i++) {
        const char *q = memchr(al, b[i], 64);
        if (!q || !b[i]) {
            gbp_free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)(q - al);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    out[o] = 0;
    return out;
}

static int hex_digit(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : -1;
}

/* "<digits>_": a decimal number up to the next '_'; advances *s. */
static int take_num(const char **s, uint64_t *v)
{
    const char *p = *s;
    *v = 0;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') {
        if (*v > (1u << 30)) return 0;
        *v = *v * 10 + (uint64_t)(*p++ - '0');
    }
    if (*p != '_') return 0;
    *s = p + 1;
    return 1;
}

/* Works out one variable field of a MetaData structure (§7.3, §7.4). */
static int setup_var(const fctx *c, const bp5_ffs_field *fl, uint32_t idx, bp5_var_field *v)
{
    bp5_format *f = c->f;
    const char *n = fl->name;
    memset(&v->ma, -1, sizeof v->ma);
    v->field = idx;
    if (strncmp(n, "BP", 2) != 0 || !n[2] || (n[3] != '_' && n[3] != '-'))
        return ffs_err(c->what, c->off, "MetaData field '%s' is not a BP5 variable field", n);
    char k = n[2];
    const char *rest = n + 4;
    if ((k == 'g' || k == 'l') && n[3] == '_') {
        int t = fl->ndims ? 0 : bp5_ffs_value_type(f, fl);
        if (!t && !fl->ndims && fl->base == BP5_FT_FLOAT && (fl->size == 10 || fl->size == 12))
            t = -1; /* a long double not of 16 bytes (i386: 12): listed as not read */
        if (t < 0) {
            v->kind = k == 'g' ? GPUBP_SHAPE_GLOBAL_VALUE : GPUBP_SHAPE_LOCAL_VALUE;
            v->unsupported = BP5_UNSUP_LDOUBLE;
            v->type = -1;
            v->name = gbp_strdup(rest);
            return v->name ? GPUBP_OK : GPUBP_ERR_NOMEM;
        }
        if (!t)
            return ffs_err(c->what, c->off, "value field '%s' has type '%s' of size %d", n, fl->type,
                           fl->size);
        v->kind = k == 'g' ? GPUBP_SHAPE_GLOBAL_VALUE : GPUBP_SHAPE_LOCAL_VALUE;
        v->bp5_type = t;
        v->type = bp5_gpubp_type(t);
        v->esize = t == 14 ? 0 : bp5_esizes[t];
        v->name = gbp_strdup(rest);
        return v->name ? GPUBP_OK : GPUBP_ERR_NOMEM;
    }
    if (k != 'G' && k != 'L' && k != 'J')
        return ffs_err(c->what, c->off, "MetaData field '%s': unknown kind '%c'", n, k);
    v->kind = k == 'G' ? GPUBP_SHAPE_GLOBAL_ARRAY : k == 'L' ? GPUBP_SHAPE_LOCAL_ARRAY
                                                               : GPUBP_SHAPE_JOINED_ARRAY;
    uint64_t es = 0, t = 0;
    if (n[3] == '-') {
        /* derived, stored without data (ADIOS2's DerivedVarType StatsOnly, ExpressionString):
         * "BPK-len-<expr in base64, len characters>-esize_type_name"; its records are an
         * array's, every block without data */
        uint64_t len = 0;
        const char *p = rest;
        while (*p >= '0' && *p <= '9' && len < (1u << 20)) len = len * 10 + (uint64_t)(*p++ - '0');
        if (*p != '-' || strlen(p + 1) <= len || p[1 + len] != '-' ||
            !(v->expr = base64_text(p + 1, (size_t)len)))
            return ffs_err(c->what, c->off, "derived array field '%s': no expression", n);
        rest = p + 2 + len;
    }
    if (!take_num(&rest, &es) || !take_num(&rest, &t))
        return ffs_err(c->what, c->off, "array field '%s': no element size and type", n);
    v->bp5_type = (int)t;
    v->esize = (uint32_t)es;
    if (t == 16) { /* a struct array: "<hex id of its description>_name" (bp5_struct_def) */
        for (size_t i = 0; i < 2 * BP5_ID_LEN; i++) {
            int h = hex_digit(rest[i]);
            if (h < 0)
                return ffs_err(c->what, c->off, "struct array field '%s': no description id", n);
            v->sid[i / 2] = (uint8_t)(v->sid[i / 2] << 4 | h);
        }
        if (rest[2 * BP5_ID_LEN] != '_' || es == 0)
            return ffs_err(c->what, c->off, "struct array field '%s': no description id", n);
        rest += 2 * BP5_ID_LEN + 1;
        v->type = GPUBP_TYPE_STRUCT;
    } else if (t == 11 && (es == 10 || es == 12)) { /* a long double not of 16 bytes (i386: 12) */
        v->unsupported = BP5_UNSUP_LDOUBLE;
        v->type = -1;
        v->name = gbp_strdup(rest);
        return v->name ? GPUBP_OK : GPUBP_ERR_NOMEM;
    } else {
        v->type = bp5_gpubp_type((int)t);
        if (v->type < 0 || t == 14 || bp5_esizes[t] != es)
            return ffs_err(c->what, c->off, "array field '%s': type %llu with element size %llu",
                           n, (unsigned long long)t, (unsigned long long)es);
    }
    if (fl->base != BP5_FT_SUB || fl->is_ptr || fl->ndims || fl->sub <= 0 ||
        strncmp(f->structs[fl->sub].name, "MetaArray", 9) != 0)
        return ffs_err(c->what, c->off, "array field '%s' has type '%s'", n, fl->type);
    const bp5_ffs_struct *st = &f->structs[fl->sub];
    const char *sn = st->name + 9;
    if (strncmp(sn, "Op", 2) == 0) {
        v->has_op = 1;
        sn += 2;
    }
    if (strncmp(sn, "MM", 2) == 0) v->has_mm = 1;
    bp5_meta_array *ma = &v->ma;
    ma->dims = find_field(st, "Dims");
    ma->blockcount = find_field(st, "BlockCount");
    ma->dbcount = find_field(st, "DBCount");
    ma->shape = find_field(st, "Shape");
    ma->count = find_field(st, "Count");
    ma->offset = find_field(st, "Offset");
    ma->location = find_field(st, "DataBlockLocation");
    ma->dbsize = v->has_op ? find_field(st, "DataBlockSize") : -1;
    ma->minmax = v->has_mm ? find_field(st, "MinMax") : -1;
    int ok = ma->dims >= 0 && ma->blockcount >= 0 && ma->dbcount >= 0 && ma->shape >= 0 &&
             ma->count >= 0 && ma->offset >= 0 && ma->location >= 0 &&
             (!v->has_op || ma->dbsize >= 0) && (!v->has_mm || ma->minmax >= 0);
    const int scal[3] = {ma->dims, ma->blockcount, ma->dbcount};
    for (int i = 0; ok && i < 3; i++) {
        const bp5_ffs_field *q = &st->fields[scal[i]];
        ok = (q->base == BP5_FT_INT || q->base == BP5_FT_UINT) && !q->ndims;
    }
    const int arr[5] = {ma->shape, ma->count, ma->offset, ma->location, ma->dbsize};
    for (int i = 0; ok && i < 5; i++) {
        if (arr[i] < 0) continue;
        const bp5_ffs_field *q = &st->fields[arr[i]];
        ok = (q->base == BP5_FT_INT || q->base == BP5_FT_UINT) && q->ndims == 1 && q->ctrl[0] >= 0 &&
             q->size <= 8;
    }
    if (ok && ma->minmax >= 0) {
        const bp5_ffs_field *q = &st->fields[ma->minmax];
        ok = q->base == BP5_FT_CHAR && q->size == 1 && q->ndims == 2 && q->ctrl[0] < 0 &&
             q->dim[0] == 2 * (uint64_t)es && q->ctrl[1] == ma->blockcount;
    }
    if (!ok)
        return ffs_err(c->what, c->off, "array field '%s': structure '%s' is not a BP5 MetaArray", n,
                       st->name);
    v->name = gbp_strdup(rest);
    return v->name ? GPUBP_OK : GPUBP_ERR_NOMEM;
}

static int setup_metadata(const fctx *c)
{
    bp5_format *f = c->f;
    const bp5_ffs_struct *st = &f->structs[0];
    f->f_bfcount = find_field(st, "BitFieldCount");
    f->f_bitfield = find_field(st, "BitField");
    int dbs = find_field(st, "DataBlockSize");
    if (f->f_bfcount < 0 || f->f_bitfield < 0 || dbs < 0 ||
        st->fields[f->f_bitfield].ndims != 1 || st->fields[f->f_bitfield].ctrl[0] != f->f_bfcount ||
        st->fields[f->f_bitfield].size != 8)
        return ffs_err(c->what, c->off, "MetaData without BitFieldCount, BitField, DataBlockSize");
    f->vars = gbp_calloc(st->nfields, sizeof *f->vars);
    if (!f->vars) return GPUBP_ERR_NOMEM;
    for (uint32_t i = 0; i < st->nfields; i++) {
        if ((int)i == f->f_bfcount || (int)i == f->f_bitfield || (int)i == dbs) continue;
        bp5_var_field *v = &f->vars[f->nvars];
        v->bit = (uint32_t)f->nvars;
        int rc = setup_var(c, &st->fields[i], i, v);
        if (rc) {
            gbp_free(v->name);
            gbp_free(v->expr);
            v->name = v->expr = NULL;
            return rc;
        }
        f->nvars++;
    }
    return GPUBP_OK;
}

static int setup_attrs(const fctx *c)
{
    bp5_format *f = c->f;
    const bp5_ffs_struct *st = &f->structs[0];
    f->a_pcount = find_field(st, "PrimAttrCount");
    f->a_prims = find_field(st, "PrimAttrs");
    f->a_scount = find_field(st, "StrAttrCount");
    f->a_strs = find_field(st, "StrAttrs");
    if (f->a_pcount < 0 || f->a_prims < 0 || f->a_scount < 0 || f->a_strs < 0)
        return ffs_err(c->what, c->off, "GenericAttributes without its four fields");
    const bp5_ffs_field *pf = &st->fields[f->a_prims], *sf = &st->fields[f->a_strs];
    if (pf->base != BP5_FT_SUB || pf->ndims != 1 || pf->ctrl[0] != f->a_pcount ||
        sf->base != BP5_FT_SUB || sf->ndims != 1 || sf->ctrl[0] != f->a_scount)
        return ffs_err(c->what, c->off, "GenericAttributes: PrimAttrs or StrAttrs is not an array");
    const bp5_ffs_struct *ps = &f->structs[pf->sub], *ss = &f->structs[sf->sub];
    f->a_pname = find_field(ps, "name");
    f->a_psize = find_field(ps, "TotalElementSize");
    f->a_pvals = find_field(ps, "Values");
    f->a_sname = find_field(ss, "name");
    f->a_scount_e = find_field(ss, "ElementCount");
    f->a_svals = find_field(ss, "Values");
    int ok = f->a_pname >= 0 && f->a_psize >= 0 && f->a_pvals >= 0 && f->a_sname >= 0 &&
             f->a_scount_e >= 0 && f->a_svals >= 0;
    ok = ok && ps->fields[f->a_pname].base == BP5_FT_STRING && !ps->fields[f->a_pname].ndims &&
         ss->fields[f->a_sname].base == BP5_FT_STRING && !ss->fields[f->a_sname].ndims &&
         ps->fields[f->a_pvals].ndims == 1 && ps->fields[f->a_pvals].ctrl[0] == f->a_psize &&
         ps->fields[f->a_pvals].size == 1 && ps->fields[f->a_pvals].base != BP5_FT_SUB &&
         ps->fields[f->a_pvals].base != BP5_FT_STRING &&
         ss->fields[f->a_svals].base == BP5_FT_STRING && ss->fields[f->a_svals].ndims == 1 &&
         ss->fields[f->a_svals].ctrl[0] == f->a_scount_e;
    if (!ok) return ffs_err(c->what, c->off, "GenericAttributes: PrimAttr or StrAttr is malformed");
    return GPUBP_OK;
}

int bp5_format_parse(bp5_format *f, const uint8_t id[BP5_ID_LEN], const uint8_t *p, size_t n,
                     uint64_t file_off, const char *what)
{
    memset(f, 0, sizeof *f);
    fctx c = {f, what, file_off};
    memcpy(f->id, id, BP5_ID_LEN);
    f->file_off = file_off;
    if (n < 8) return ffs_err(what, file_off, "top header is truncated (%zu bytes)", n);
    size_t total = (size_t)p[0] << 8 | p[1];
    if (p[3] > 0) total |= (size_t)p[6] << 24 | (size_t)p[7] << 16;
    if (p[2] > 1 || p[3] > 2 || p[5] != 0)
        return ffs_err(what, file_off, "byte order %u, version %u, recursive %u", p[2], p[3], p[5]);
    if (total < 8 || total > n)
        return ffs_err(what, file_off, "length %zu in an entry of %zu bytes", total, n);
    for (size_t i = total; i < n; i++)
        if (p[i]) return ffs_err(what, file_off + i, "non-zero bytes after the description");
    f->big_endian = p[2];
    f->rep_version = p[3];
    size_t ns = (size_t)p[4] + 1;
    f->desc = gbp_malloc(total);
    f->structs = gbp_calloc(ns, sizeof *f->structs);
    if (!f->desc || !f->structs) {
        bp5_format_free(f);
        return GPUBP_ERR_NOMEM;
    }
    memcpy(f->desc, p, total);
    f->desc_len = total;
    int rc = GPUBP_OK;
    size_t at = 8;
    for (size_t i = 0; i < ns && !rc; i++) {
        size_t sl = 0;
        rc = parse_struct(&c, f->desc + at, total - at, at, &f->structs[i], &sl);
        f->nstructs = i + 1;
        at += sl;
    }
    if (!rc && at != total) rc = ffs_err(what, file_off + at, "structures end before the description");
    /* resolve sub-structure names; a structure may not contain itself */
    for (size_t i = 0; i < ns && !rc; i++) {
        bp5_ffs_struct *st = &f->structs[i];
        for (uint32_t j = 0; j < st->nfields && !rc; j++) {
            bp5_ffs_field *fl = &st->fields[j];
            if (fl->base != BP5_FT_SUB) continue;
            const char *t = fl->type, *br = strchr(t, '[');
            size_t bl = br ? (size_t)(br - t) : strlen(t);
            for (size_t k = i + 1; k < ns; k++)
                if (strlen(f->structs[k].name) == bl && memcmp(f->structs[k].name, t, bl) == 0)
                    fl->sub = (int)k;
            if (fl->sub < 0)
                rc = ffs_err(what, file_off, "field '%s': no later sub-structure '%.*s'", fl->name,
                             (int)bl, t);
            else if (fl->size < f->structs[fl->sub].record_length)
                rc = ffs_err(what, file_off, "field '%s': element size %d below its structure's %d",
                             fl->name, fl->size, f->structs[fl->sub].record_length);
        }
    }
    if (rc) {
        bp5_format_free(f);
        return rc;
    }
    /* variant: any pointer, or a variant sub-structure (sub-structures come later: walk back) */
    {
        uint8_t var[256] = {0};
        for (size_t i = ns; i-- > 0;) {
            const bp5_ffs_struct *st = &f->structs[i];
            for (uint32_t j = 0; j < st->nfields; j++)
                if (st->fields[j].is_ptr || (st->fields[j].sub > 0 && var[st->fields[j].sub]))
                    var[i] = 1;
        }
        f->variant = var[0];
    }
    const char *mn = f->structs[0].name;
    if (strcmp(mn, "MetaData") == 0) {
        f->kind = BP5_FMT_METADATA;
        rc = setup_metadata(&c);
    } else if (strcmp(mn, "GenericAttributes") == 0) {
        f->kind = BP5_FMT_ATTRS;
        rc = setup_attrs(&c);
    } else if (strcmp(mn, "Attributes") == 0) {
        f->kind = BP5_FMT_OLD_ATTRS;
    }
    if (rc) bp5_format_free(f);
    return rc;
}

/* ---- struct variables ------------------------------------------------------------------------ */

/* The GPUBP type of one field of a struct description, -1 when none (strings, pointers). As
 * ADIOS2's reader maps them (TranslateFFSType2ADIOS), and "char" as char (which ADIOS2 writes but
 * cannot read back). */
static int struct_field_type(const bp5_format *f, const bp5_ffs_field *fl)
{
    if (fl->is_ptr) return -1;
    switch (fl->base) {
    case BP5_FT_INT:
    case BP5_FT_UINT: {
        int u = fl->base == BP5_FT_UINT;
        switch (fl->size) {
        case 1: return u ? GPUBP_TYPE_UINT8 : GPUBP_TYPE_INT8;
        case 2: return u ? GPUBP_TYPE_UINT16 : GPUBP_TYPE_INT16;
        case 4: return u ? GPUBP_TYPE_UINT32 : GPUBP_TYPE_INT32;
        case 8: return u ? GPUBP_TYPE_UINT64 : GPUBP_TYPE_INT64;
        default: return -1;
        }
    }
    case BP5_FT_FLOAT:
        return fl->size == 4 ? GPUBP_TYPE_FLOAT : fl->size == 8 ? GPUBP_TYPE_DOUBLE
               : fl->size == 16                ? GPUBP_TYPE_LONG_DOUBLE
                                               : -1;
    case BP5_FT_CHAR: return fl->size == 1 ? GPUBP_TYPE_CHAR : -1;
    case BP5_FT_SUB: {
        const char *sn = f->structs[fl->sub].name;
        if (strcmp(sn, "complex4") == 0 && fl->size == 8) return GPUBP_TYPE_FLOAT_COMPLEX;
        if (strcmp(sn, "complex8") == 0 && fl->size == 16) return GPUBP_TYPE_DOUBLE_COMPLEX;
        return -1;
    }
    default: return -1;
    }
}

int bp5_struct_def(const bp5_format *f, size_t esize, gbp_struct_def **out, const char **why)
{
    *out = NULL;
    const bp5_ffs_struct *st = &f->structs[0];
    if (f->kind != BP5_FMT_OTHER || (size_t)st->record_length != esize) {
        *why = "a struct variable whose description does not fit its records";
        return GPUBP_OK;
    }
    gbp_struct_def *d = gbp_calloc(1, sizeof *d);
    if (!d || !(d->name = gbp_strdup(st->name)) ||
        !(d->fields = gbp_calloc(st->nfields ? st->nfields : 1, sizeof *d->fields))) {
        gbp_struct_def_free(d);
        return gbp_nomem();
    }
    memcpy(d->id, f->id, sizeof d->id);
    d->size = esize;
    for (uint32_t i = 0; i < st->nfields; i++) {
        const bp5_ffs_field *fl = &st->fields[i];
        gbp_struct_field *o = &d->fields[d->nfields];
        o->type = struct_field_type(f, fl);
        o->count = fl->ndims == 1 && fl->ctrl[0] < 0 ? (size_t)fl->dim[0] : 1;
        o->offset = (size_t)fl->offset;
        if (o->type < 0 || fl->ndims > 1 || (fl->ndims == 1 && fl->ctrl[0] >= 0) ||
            fl->offset < 0 || o->count == 0 || o->count > esize ||
            o->offset + o->count * (size_t)fl->size > esize) {
            *why = o->type < 0 ? "a struct variable with a field of a type it cannot copy (a string "
                                 "or pointer)"
                               : "a struct variable whose description does not fit its records";
            gbp_struct_def_free(d);
            return GPUBP_OK;
        }
        if (!(o->name = gbp_strdup(fl->name))) {
            gbp_struct_def_free(d);
            return gbp_nomem();
        }
        d->nfields++;
    }
    *out = d;
    return GPUBP_OK;
}

/* ---- mmd.0 --------------------------------------------------------------------------------------- */

void bp5_formats_init(bp5_formats *ft)
{
    memset(ft, 0, sizeof *ft);
}

void bp5_formats_free(bp5_formats *ft)
{
    if (!ft) return;
    for (size_t i = 0; i < ft->n; i++) {
        bp5_format_free(ft->v[i]);
        gbp_free(ft->v[i]);
    }
    gbp_free(ft->v);
    memset(ft, 0, sizeof *ft);
}

const bp5_format *bp5_formats_find(bp5_formats *ft, const uint8_t id[BP5_ID_LEN])
{
    if (ft->last < ft->n && memcmp(ft->v[ft->last]->id, id, BP5_ID_LEN) == 0) return ft->v[ft->last];
    for (size_t i = 0; i < ft->n; i++)
        if (memcmp(ft->v[i]->id, id, BP5_ID_LEN) == 0) {
            ft->last = i;
            return ft->v[i];
        }
    return NULL;
}

int bp5_formats_parse(bp5_formats *ft, const uint8_t *p, size_t n, int partial_ok,
                      const char *what)
{
    size_t at = ft->parsed;
    while (at < n) {
        if (n - at < 16 + BP5_ID_LEN) break;
        uint64_t idl = bp5_ld64(p + at, ft->big_endian), il = bp5_ld64(p + at + 8, ft->big_endian);
        if (idl != BP5_ID_LEN)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: format id of %llu bytes", what,
                             at, (unsigned long long)idl);
        if (il > n - at - 16 - BP5_ID_LEN) {
            if (il > (uint64_t)1 << 32)
                return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: format of %llu bytes", what,
                                 at + 8, (unsigned long long)il);
            break;
        }
        const uint8_t *id = p + at + 16, *d = id + BP5_ID_LEN;
        const bp5_format *old = bp5_formats_find(ft, id);
        if (old) {
            size_t dl = (size_t)il < old->desc_len ? (size_t)il : old->desc_len;
            if (dl != old->desc_len || memcmp(old->desc, d, dl) != 0)
                return gbp_error(GPUBP_ERR_FORMAT, 0,
                                 "%s: offset %zu: a second, different description under a known id",
                                 what, at);
        } else {
            GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ft->v, &ft->cap, ft->n + 1, sizeof *ft->v));
            bp5_format *f = gbp_calloc(1, sizeof *f);
            if (!f) return GPUBP_ERR_NOMEM;
            int rc = bp5_format_parse(f, id, d, (size_t)il, (uint64_t)(at + 16 + BP5_ID_LEN), what);
            if (rc) {
                gbp_free(f);
                return rc;
            }
            ft->v[ft->n++] = f;
        }
        at += 16 + BP5_ID_LEN + (size_t)il;
        ft->parsed = at;
    }
    if (at < n && !partial_ok)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: entry is truncated (%zu bytes left)",
                         what, at, n - at);
    return GPUBP_OK;
}
