/* lib/format: the BP4 on-disk format in memory (docs/format/bp4.md). Encoding and
 * decoding only: no I/O, no CUDA. Every read is bounds-checked; failures are GPUBP_ERR_FORMAT
 * with the file name and offset in the message. */
#ifndef GBP_BP4_H
#define GBP_BP4_H

#include <stdint.h>

#include "common/common.h"
#include "format/index.h"

#define BP4_HEADER_SIZE 64
#define BP4_IDX_RECORD_SIZE 64
/* The header byte that says a writer is still active (md.idx): 1 while writing, 0 once closed. */
#define BP4_IDX_ACTIVE_AT 38
/* The BP4 type id of a string array (attributes only); 9 is a single string. */
#define BP4_TYPE_STRING_ARRAY 12
#define BP4_LOCAL_VALUE_DIM GBP_LOCAL_VALUE_DIM
#define BP4_JOINED_DIM GBP_JOINED_DIM

enum { BP4_KIND_INDEX = 0, BP4_KIND_METADATA = 1, BP4_KIND_DATA = 2 };

/* Characteristic ids (docs/format/bp4.md 5.4). */
enum {
    BP4_CHR_VALUE = 0, BP4_CHR_MIN = 1, BP4_CHR_MAX = 2, BP4_CHR_OFFSET = 3, BP4_CHR_DIMENSIONS = 4,
    BP4_CHR_VAR_ID = 5, BP4_CHR_PAYLOAD_OFFSET = 6, BP4_CHR_FILE_INDEX = 7, BP4_CHR_TIME_INDEX = 8,
    BP4_CHR_BITMAP = 9, BP4_CHR_STAT = 10, BP4_CHR_TRANSFORM = 11, BP4_CHR_MINMAX = 12
};
/* The statistics of a BP4_CHR_STAT characteristic, in the order they follow each other (the bits
 * of the BP4_CHR_BITMAP before it). libgpubp writes only BP4_STAT_CNT: the split marker. */
enum {
    BP4_STAT_MIN = 0, BP4_STAT_MAX = 1, BP4_STAT_CNT = 2, BP4_STAT_SUM = 3, BP4_STAT_SUM_SQUARE = 4,
    BP4_STAT_HIST = 5, BP4_STAT_FINITE = 6
};

/* The 64-byte header of md.idx, md.0 and data.K, claiming ADIOS 2.12.0 and BP version 4. */
void bp4_make_header(uint8_t out[BP4_HEADER_SIZE], int kind, int active);

typedef struct bp4_idx_record {
    uint64_t step, rank, pg_off, var_off, attr_off, end, timestamp;
} bp4_idx_record;

void bp4_make_idx_record(uint8_t out[BP4_IDX_RECORD_SIZE], const bp4_idx_record *r);
/* Checks md.idx's header (BP version 4, little-endian). `what` names the file in messages. */
int bp4_check_idx_header(const uint8_t *p, size_t n, const char *what);
/* Parses record i (0-based) of md.idx (p is the whole file) and checks it: step == i + 1, the
 * four md.0 pointers ordered and within [64, md0_size]. */
int bp4_parse_idx_record(const uint8_t *p, size_t n, size_t i, uint64_t md0_size,
                         bp4_idx_record *r, const char *what);

/* ---- encoding ------------------------------------------------------------------------------ */

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

/* Merges the step blocks of n writers into one (appended to out), as ADIOS2's BP4 writer merges
 * its ranks' metadata: blk[r] (len[r] bytes) is rank r's step block laid out as in md.0 (PG
 * index, variable index, attribute index; no header), with offsets already absolute. The PG
 * entries are concatenated in rank order; each variable gets one entry with every rank's blocks
 * in rank order (header from the first rank that has it, set count summed); each attribute comes
 * from the first rank that has it. Errors: FORMAT (a damaged block, naming the rank),
 * TYPE_MISMATCH (one variable with two types, naming the ranks), NOMEM. `what` names the
 * dataset in messages. */
int bp4_merge_steps(gbp_buf *out, size_t n, const uint8_t *const *blk, const size_t *len,
                    const char *what);

/* ---- decoding ------------------------------------------------------------------------------ */

/* Parses the step block of record r, calling the sink. p holds md.0 bytes [base, base + n), which
 * must cover the step. *column_major receives the first PG entry's flag. Unknown variable types
 * are skipped. */
int bp4_parse_step(const uint8_t *p, uint64_t base, size_t n, const bp4_idx_record *r,
                   int *column_major, const gbp_step_sink *sink, const char *what);
/* Parses the variable entries in p[0, n) (md.0 bytes starting at offset base). */
int bp4_parse_var_entries(const uint8_t *p, uint64_t base, size_t n, const gbp_step_sink *sink,
                          const char *what);



/* ---- filling the reader's index (index.h) -----------------------------------------------------
 * One streaming pass over md.0 keeps, per variable, only what listings need: the steps it appears
 * in (with where its entry is in md.0 and its block count), the shape of each step (deduplicated),
 * and min/max over everything. The blocks of a (variable, step) are parsed on demand from md.0 by
 * the loader hook bp4_index_load, and kept. Memory thus grows with what is asked. */

/* Reads n bytes of md.0 at off into buf (exactly, or an error). */
typedef int (*bp4_read_fn)(void *ctx, uint64_t off, size_t n, uint8_t *buf);

/* The loader context of a BP4 index: md.0 through read(ctx, ...). */
typedef struct bp4_md0 {
    bp4_read_fn read;
    void *ctx;
} bp4_md0;

/* gbp_index_init(ix, bp4_index_load, md0): an empty index whose blocks are parsed from md.0
 * through *md0 (which must outlive the index). */
void bp4_index_init(gbp_index *ix, const bp4_md0 *md0);
/* The loader hook (gbp_load_fn) of a BP4 index; ctx: a const bp4_md0 *. */
int bp4_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what);
/* Adds the step of record r as the index's next step; p holds md.0 bytes [base, base + n). */
int bp4_index_add_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                       const bp4_idx_record *r, const char *what);
/* The summary pass (after a light pass): shapes and min/max of step r, the index's
 * ix->sum_steps-th step. When every step is done, ix->summarized is set. */
int bp4_index_summarize_step(gbp_index *ix, const uint8_t *p, uint64_t base, size_t n,
                             const bp4_idx_record *r, const char *what);

#endif /* GBP_BP4_H */
