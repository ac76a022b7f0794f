/* BP4 encoding: headers, md.idx records, data.K process groups and records, md.0 entries.
 * Layouts follow docs/format/bp4.md sections 3, 4, 5 and 6 field by field. */
#include "format/bp4_encode.h"

#include <stdio.h>

void bp4_make_header(uint8_t out[BP4_HEADER_SIZE], int kind, int active)
{
    static const char *kinds[] = {"Index Table", "Metadata", "Data"};
    memset(out, 0, BP4_HEADER_SIZE);
    char tag[40];
    int n = snprintf(tag, sizeof tag, "ADIOS-BP v2.<.0 %s", kinds[kind]);
    memcpy(out, tag, (size_t)(n < 32 ? n : 32));
    out[32] = '2';
    out[33] = '<'; /* minor 12 as '0' + 12, as ADIOS 2.12 writes it */
    out[34] = '0';
    out[36] = 0;   /* little-endian */
    out[37] = 4;   /* BP4 */
    out[BP4_IDX_ACTIVE_AT] = (uint8_t)(active ? 1 : 0);
}

void bp4_make_idx_record(uint8_t out[BP4_IDX_RECORD_SIZE], const bp4_idx_record *r)
{
    uint64_t v[8] = {r->step, r->rank, r->pg_off, r->var_off, r->attr_off, r->end, r->timestamp, 0};
    memcpy(out, v, sizeof v);
}

size_t bp4_vmd_header_size(size_t name_len, int type, size_t ndims, int array)
{
    size_t chars = array ? 3 + 2 * gbp_type_size(type) : 0;
    return 35 + name_len + 27 * ndims + chars;
}

static void put_minmax(gbp_buf *b, int type, const uint8_t *mm)
{
    size_t es = gbp_type_size(type);
    gbp_buf_u8(b, BP4_CHR_MINMAX);
    gbp_buf_u16(b, 1); /* one sub-block */
    gbp_buf_put(b, mm, es);
    gbp_buf_put(b, mm + 16, es);
}

void bp4_put_vmd_header(gbp_buf *b, uint32_t member_id, const char *name, int type,
                        const gbp_block *blk, int local, uint64_t payload_len)
{
    size_t nl = strlen(name), nd = blk->ndims;
    size_t hs = bp4_vmd_header_size(nl, type, nd, blk->has_minmax);
    gbp_buf_put(b, "[VMD", 4);
    gbp_buf_u64(b, (uint64_t)(hs - 4) + payload_len);
    gbp_buf_u32(b, member_id);
    gbp_buf_bpstr(b, name, nl);
    gbp_buf_u8(b, 'K');
    gbp_buf_u8(b, 0);
    gbp_buf_u8(b, (uint8_t)type);
    gbp_buf_u8(b, 'n');
    gbp_buf_u8(b, (uint8_t)nd);
    gbp_buf_u16(b, (uint16_t)(27 * nd));
    for (size_t i = 0; i < nd; i++) {
        gbp_buf_u8(b, 'n');
        gbp_buf_u64(b, GBP_COUNT(blk)[i]);
        if (local) {
            gbp_buf_zero(b, 18);
        } else {
            gbp_buf_u8(b, 'n');
            gbp_buf_u64(b, GBP_SHAPE(blk)[i]);
            gbp_buf_u8(b, 'n');
            gbp_buf_u64(b, GBP_START(blk)[i]);
        }
    }
    if (blk->has_minmax) {
        gbp_buf_u8(b, 1);
        gbp_buf_u32(b, (uint32_t)(3 + 2 * gbp_type_size(type)));
        put_minmax(b, type, blk->mm);
    } else {
        gbp_buf_u8(b, 0);
        gbp_buf_u32(b, 0);
    }
    gbp_buf_u8(b, 4);
    gbp_buf_put(b, "VMD]", 4);
}

size_t bp4_pg_head_size(size_t io_name_len, uint32_t step)
{
    char s[16];
    int sl = snprintf(s, sizeof s, "%u", step);
    return 4 + 8 + 1 + 2 + io_name_len + 4 + 2 + (size_t)sl + 4 + 1 + 2 + 3 + 4 + 8;
}

size_t bp4_pg_head(gbp_buf *b, int column_major, const char *io_name, uint32_t step)
{
    char s[16];
    int sl = snprintf(s, sizeof s, "%u", step);
    gbp_buf_put(b, "[PGI", 4);
    size_t at = b->len;
    gbp_buf_u64(b, 0); /* patched: bytes from here through "PGI]" */
    gbp_buf_u8(b, column_major ? 'y' : 'n');
    gbp_buf_bpstr(b, io_name, strlen(io_name));
    gbp_buf_u32(b, 0);
    gbp_buf_bpstr(b, s, (size_t)sl);
    gbp_buf_u32(b, step);
    gbp_buf_u8(b, 1);   /* one transport method */
    gbp_buf_u16(b, 3);
    gbp_buf_u8(b, 2);   /* POSIX */
    gbp_buf_u16(b, 0);
    gbp_buf_u32(b, 0);  /* patched: [VMD count */
    gbp_buf_u64(b, 0);  /* patched: [VMD bytes */
    return at;
}

void bp4_put_amd(gbp_buf *b, uint32_t member_id, const char *name, int type, const void *data,
                 size_t n, const char *const *strings, size_t *payload_off)
{
    size_t start = b->len;
    gbp_buf_put(b, "[AMD", 4);
    size_t lenat = b->len;
    gbp_buf_u32(b, 0);
    gbp_buf_u32(b, member_id);
    gbp_buf_bpstr(b, name, strlen(name));
    gbp_buf_u16(b, 0);
    gbp_buf_u8(b, 'n');
    gbp_buf_u8(b, (uint8_t)type);
    *payload_off = b->len;
    if (type == GPUBP_TYPE_STRING) {
        size_t l = strlen(strings[0]);
        gbp_buf_u32(b, (uint32_t)l);
        gbp_buf_put(b, strings[0], l);
    } else if (type == BP4_TYPE_STRING_ARRAY) {
        gbp_buf_u32(b, (uint32_t)n);
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(strings[i]);
            gbp_buf_u32(b, (uint32_t)(l + 1));
            gbp_buf_put(b, strings[i], l + 1);
        }
    } else {
        size_t bytes = n * gbp_type_size(type);
        gbp_buf_u32(b, (uint32_t)bytes);
        gbp_buf_put(b, data, bytes);
    }
    gbp_buf_put(b, "AMD]", 4);
    gbp_buf_set_u32(b, lenat, (uint32_t)(b->len - lenat));
    (void)start;
}

size_t bp4_entry_begin(gbp_buf *b, uint32_t member_id, const char *name, int type, int is_attr,
                       uint64_t nsets)
{
    size_t at = b->len;
    gbp_buf_u32(b, 0); /* patched */
    gbp_buf_u32(b, member_id);
    gbp_buf_u16(b, 0); /* empty group name */
    gbp_buf_bpstr(b, name, strlen(name));
    gbp_buf_u8(b, is_attr ? 0 : 'K');
    gbp_buf_u8(b, 0);
    gbp_buf_u8(b, (uint8_t)type);
    gbp_buf_u64(b, nsets);
    return at;
}

void bp4_entry_end(gbp_buf *b, size_t at) { gbp_buf_set_u32(b, at, (uint32_t)(b->len - at - 4)); }

static void put_dims(gbp_buf *b, size_t nd, const uint64_t *count, const uint64_t *shape,
                     const uint64_t *start)
{
    gbp_buf_u8(b, BP4_CHR_DIMENSIONS);
    gbp_buf_u8(b, (uint8_t)nd);
    gbp_buf_u16(b, (uint16_t)(24 * nd));
    for (size_t i = 0; i < nd; i++) {
        gbp_buf_u64(b, count[i]);
        gbp_buf_u64(b, shape ? shape[i] : 0);
        gbp_buf_u64(b, start ? start[i] : 0);
    }
}

void bp4_put_var_charset(gbp_buf *b, int type, int kind, const gbp_block *blk)
{
    size_t head = b->len;
    gbp_buf_u8(b, 0);  /* patched: count */
    gbp_buf_u32(b, 0); /* patched: length */
    size_t body = b->len;
    uint8_t n = 0;
    gbp_buf_u8(b, BP4_CHR_TIME_INDEX);
    gbp_buf_u32(b, blk->step);
    gbp_buf_u8(b, BP4_CHR_FILE_INDEX);
    gbp_buf_u32(b, blk->subfile);
    n += 2;
    if (type == GPUBP_TYPE_STRING) {
        /* strings: value before dimensions, as ADIOS writes them */
        gbp_buf_u8(b, BP4_CHR_VALUE);
        gbp_buf_bpstr(b, blk->str ? blk->str : "", blk->str_len);
        put_dims(b, blk->ndims, GBP_COUNT(blk), GBP_SHAPE(blk), GBP_START(blk)); /* local values: 1 */
        n += 2;
    } else {
        int local = kind == GPUBP_SHAPE_LOCAL_ARRAY;
        put_dims(b, blk->ndims, GBP_COUNT(blk), local ? NULL : GBP_SHAPE(blk),
                 local ? NULL : GBP_START(blk));
        n++;
        if (blk->has_value) {
            gbp_buf_u8(b, BP4_CHR_VALUE);
            gbp_buf_put(b, blk->mm, gbp_type_size(type));
            n++;
        } else if (blk->has_minmax) {
            put_minmax(b, type, blk->mm);
            n++;
        }
    }
    gbp_buf_u8(b, BP4_CHR_OFFSET);
    gbp_buf_u64(b, blk->vmd_offset);
    gbp_buf_u8(b, BP4_CHR_PAYLOAD_OFFSET);
    gbp_buf_u64(b, blk->payload_offset);
    n += 2;
    if (blk->split) {
        /* a sub-block of a split put: the statistics bitmap with only the "count" statistic,
         * which carries the marker (ADIOS2 parses it and ignores it; docs/format/bp4.md) */
        gbp_buf_u8(b, BP4_CHR_BITMAP);
        gbp_buf_u32(b, (uint32_t)1 << BP4_STAT_CNT);
        gbp_buf_u8(b, BP4_CHR_STAT);
        gbp_buf_u32(b, blk->split);
        n += 2;
    }
    if (blk->op) {
        /* the operator record: name, then the uncompressed type and dims, then 16 bytes of
         * operator metadata: input size and output (payload) size (docs/format/bp4.md section 7) */
        int local = kind == GPUBP_SHAPE_LOCAL_ARRAY;
        size_t nl = strlen(blk->op->name);
        gbp_buf_u8(b, BP4_CHR_TRANSFORM);
        gbp_buf_u8(b, (uint8_t)nl);
        gbp_buf_put(b, blk->op->name, nl);
        gbp_buf_u8(b, (uint8_t)type);
        gbp_buf_u8(b, blk->ndims);
        gbp_buf_u16(b, (uint16_t)(24 * blk->ndims));
        for (size_t i = 0; i < blk->ndims; i++) {
            gbp_buf_u64(b, GBP_COUNT(blk)[i]);
            gbp_buf_u64(b, local ? 0 : GBP_SHAPE(blk)[i]);
            gbp_buf_u64(b, local ? 0 : GBP_START(blk)[i]);
        }
        gbp_buf_u16(b, 16);
        gbp_buf_u64(b, blk->op->raw_size);
        gbp_buf_u64(b, blk->op->size);
        n++;
    }
    if (b->failed) return;
    b->data[head] = n;
    gbp_buf_set_u32(b, head + 1, (uint32_t)(b->len - body));
}

void bp4_put_attr_charset(gbp_buf *b, int type, uint32_t step, uint32_t file_index,
                          uint64_t amd_off, uint64_t payload_off, const void *data, size_t n,
                          const char *const *strings)
{
    size_t head = b->len;
    gbp_buf_u8(b, 6);
    gbp_buf_u32(b, 0); /* patched */
    size_t body = b->len;
    gbp_buf_u8(b, BP4_CHR_TIME_INDEX);
    gbp_buf_u32(b, step);
    gbp_buf_u8(b, BP4_CHR_FILE_INDEX);
    gbp_buf_u32(b, file_index);
    uint64_t cnt = n;
    put_dims(b, 1, &cnt, NULL, NULL);
    gbp_buf_u8(b, BP4_CHR_VALUE);
    if (type == GPUBP_TYPE_STRING || type == BP4_TYPE_STRING_ARRAY) {
        for (size_t i = 0; i < n; i++) gbp_buf_bpstr(b, strings[i], strlen(strings[i]));
    } else {
        gbp_buf_put(b, data, n * gbp_type_size(type));
    }
    gbp_buf_u8(b, BP4_CHR_OFFSET);
    gbp_buf_u64(b, amd_off);
    gbp_buf_u8(b, BP4_CHR_PAYLOAD_OFFSET);
    gbp_buf_u64(b, payload_off);
    gbp_buf_set_u32(b, head + 1, (uint32_t)(b->len - body));
}

void bp4_put_pg_entry(gbp_buf *one, const char *io_name, uint32_t step, uint32_t rank,
                      uint64_t pg_start)
{
    char s[16];
    int sl = snprintf(s, sizeof s, "%u", step);
    size_t el = 2 + strlen(io_name) + 1 + 4 + 2 + (size_t)sl + 4 + 8;
    gbp_buf_u16(one, (uint16_t)el);
    gbp_buf_bpstr(one, io_name, strlen(io_name));
    gbp_buf_u8(one, 'n');
    gbp_buf_u32(one, rank);
    gbp_buf_bpstr(one, s, (size_t)sl);
    gbp_buf_u32(one, step);
    gbp_buf_u64(one, pg_start);
}
