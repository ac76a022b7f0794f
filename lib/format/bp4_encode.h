/* lib/format/bp4_encode.h: see bp4_encode.c: BP4 encoding (headers, md.idx records, data.K process
 * groups and records, md.0 entries). */
#ifndef GBP_FORMAT_BP4_ENCODE_H
#define GBP_FORMAT_BP4_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp4.h"

/* The 64-byte header of md.idx, md.0 and data.K, claiming ADIOS 2.12.0 and BP version 4. */
void bp4_make_header(uint8_t out[BP4_HEADER_SIZE], int kind, int active);

void bp4_make_idx_record(uint8_t out[BP4_IDX_RECORD_SIZE], const bp4_idx_record *r);

/* Bytes of a [VMD record before its payload, for a variable of this name, type and ndims.
 * `array` says whether it carries a minmax characteristic (arrays; not values or strings). */
size_t bp4_vmd_header_size(size_t name_len, int type, size_t ndims, int array);

/* Appends a [VMD header (through "VMD]"); the payload of `payload_len` bytes follows it in the
 * file. local: a local array (only counts are written). */
void bp4_put_vmd_header(gbp_buf *b, uint32_t member_id, const char *name, int type,
                        const gbp_block *blk, int local, uint64_t payload_len);

/* Appends a PG record's head: "[PGI", length placeholder, flags, name, step, method, and the
 * placeholders for the variable count and length. Returns the offset of the length field. */
size_t bp4_pg_head(gbp_buf *b, int column_major, const char *io_name, uint32_t step);
size_t bp4_pg_head_size(size_t io_name_len, uint32_t step);

/* Appends one entry of the PG index: writer `rank`'s process group of `step` (1-based), named
 * io_name, at data-file offset pg_start. */
void bp4_put_pg_entry(gbp_buf *one, const char *io_name, uint32_t step, uint32_t rank,
                      uint64_t pg_start);

/* Appends one [AMD attribute record; *payload_off receives the offset (in b) of the u32 that
 * follows the type byte, which the md.0 entry records. strings: n strings for type 9/12. */
void bp4_put_amd(gbp_buf *b, uint32_t member_id, const char *name, int type, const void *data,
                 size_t n, const char *const *strings, size_t *payload_off);

/* md.0 element entries. bp4_entry_begin appends the header with a placeholder length and
 * returns its offset; bp4_entry_end patches the length. */
size_t bp4_entry_begin(gbp_buf *b, uint32_t member_id, const char *name, int type, int is_attr,
                       uint64_t nsets);
void bp4_entry_end(gbp_buf *b, size_t at);

/* Appends one characteristic set for a variable block. kind: GPUBP_SHAPE_*. */
void bp4_put_var_charset(gbp_buf *b, int type, int kind, const gbp_block *blk);
/* Appends the characteristic set of an attribute. */
void bp4_put_attr_charset(gbp_buf *b, int type, uint32_t step, uint32_t file_index,
                          uint64_t amd_off, uint64_t payload_off, const void *data, size_t n,
                          const char *const *strings);

#endif /* GBP_FORMAT_BP4_ENCODE_H */
