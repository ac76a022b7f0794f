/* lib/format: the BP4 on-disk format in memory (docs: shared/docs/bp4-format.md). Encoding and
 * decoding only: no I/O, no CUDA. Every read is bounds-checked; failures are GPUBP_ERR_FORMAT
 * with the file name and offset in the message. */
#ifndef GBP_BP4_H
#define GBP_BP4_H

#include <stdint.h>

#include "common.h"

#define BP4_HEADER_SIZE 64
#define BP4_IDX_RECORD_SIZE 64
#define BP4_LOCAL_VALUE_DIM ((uint64_t)-3)
#define BP4_JOINED_DIM ((uint64_t)-2)
#define BP4_MAX_OP_NAME 32

enum { BP4_KIND_INDEX = 0, BP4_KIND_METADATA = 1, BP4_KIND_DATA = 2 };

/* Characteristic ids (bp4-format.md 5.5). */
enum {
    BP4_CHR_VALUE = 0, BP4_CHR_MIN = 1, BP4_CHR_MAX = 2, BP4_CHR_OFFSET = 3, BP4_CHR_DIMENSIONS = 4,
    BP4_CHR_VAR_ID = 5, BP4_CHR_PAYLOAD_OFFSET = 6, BP4_CHR_FILE_INDEX = 7, BP4_CHR_TIME_INDEX = 8,
    BP4_CHR_BITMAP = 9, BP4_CHR_STAT = 10, BP4_CHR_TRANSFORM = 11, BP4_CHR_MINMAX = 12
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

/* Operator (compression) record of a block: characteristic 11. */
typedef struct bp4_op {
    char name[BP4_MAX_OP_NAME + 1];
    uint8_t pre_type;
    uint64_t raw_size;  /* uncompressed bytes */
    uint64_t size;      /* compressed bytes at payload_offset */
} bp4_op;

/* One block of a variable in one step, as the metadata describes it. dims points at 3 * ndims
 * values: count[ndims], shape[ndims], start[ndims] (storage owned by whoever built the block). */
typedef struct bp4_block {
    uint64_t vmd_offset;
    uint64_t payload_offset;
    uint64_t *dims;
    char *str;          /* string value (NUL-terminated), or NULL */
    bp4_op *op;         /* NULL when not compressed */
    uint32_t file_index;
    uint32_t step;      /* time index, 1-based */
    uint32_t str_len;
    uint8_t ndims;
    uint8_t has_minmax;
    uint8_t has_value;
    uint8_t mm[32];     /* min in [0,16), max in [16,32); or the value in [0,16) */
} bp4_block;

#define BP4_COUNT(b) ((b)->dims)
#define BP4_SHAPE(b) ((b)->dims + (b)->ndims)
#define BP4_START(b) ((b)->dims + 2 * (b)->ndims)

/* ---- encoding ------------------------------------------------------------------------------ */

/* Bytes of a [VMD record before its payload, for a variable of this name, type and ndims.
 * `array` says whether it carries a minmax characteristic (arrays; not values or strings). */
size_t bp4_vmd_header_size(size_t name_len, int type, size_t ndims, int array);

/* Appends a [VMD header (through "VMD]"); the payload of `payload_len` bytes follows it in the
 * file. local: a local array (only counts are written). */
void bp4_put_vmd_header(gbp_buf *b, uint32_t member_id, const char *name, int type,
                        const bp4_block *blk, int local, uint64_t payload_len);

/* Appends a PG record's head: "[PGI", length placeholder, flags, name, step, method, and the
 * placeholders for the variable count and length. Returns the offset of the length field. */
size_t bp4_pg_head(gbp_buf *b, int column_major, const char *io_name, uint32_t step);
size_t bp4_pg_head_size(size_t io_name_len, uint32_t step);

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
void bp4_put_var_charset(gbp_buf *b, int type, int kind, const bp4_block *blk);
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

/* A parsed attribute value (numeric: n elements in data; strings: n NUL-terminated strings). */
typedef struct bp4_attr {
    char *name;
    int type;       /* 9 and 12 are reported as GPUBP_TYPE_STRING, is_array set for 12 */
    int is_array;
    size_t n;
    uint8_t *data;  /* numeric values */
    char **strings; /* string values */
    uint32_t step;
} bp4_attr;

void bp4_attr_free(bp4_attr *a);

/* Callbacks from parsing one step's metadata. A non-zero return stops parsing and is returned. */
#define BP4_SINK_COUNT 1 /* var_begin: count this entry's blocks, do not parse them */

typedef struct bp4_step_sink {
    void *ctx;
    /* the step's first process-group entry has been read: its column-major flag */
    int (*step_begin)(void *ctx, int column_major);
    /* a variable entry: name (not NUL-terminated), type id, number of characteristic sets, and
     * where the entry is in md.0 (offset of its length field, and that length) */
    int (*var_begin)(void *ctx, const char *name, size_t name_len, int type, uint64_t nsets,
                     uint64_t entry_off, uint32_t entry_len);
    /* one block of the variable last begun (dims and strings must be copied if kept) */
    int (*var_block)(void *ctx, const bp4_block *blk);
    int (*attr)(void *ctx, bp4_attr *a); /* takes ownership of *a's contents */
    /* when var_begin returned BP4_SINK_COUNT: the entry's characteristic sets are only counted
     * (each set's length checked), then var_count gets the count */
    int (*var_count)(void *ctx, uint64_t nblocks);
} bp4_step_sink;

/* Parses the step block of record r, calling the sink. p holds md.0 bytes [base, base + n), which
 * must cover the step. *column_major receives the first PG entry's flag. Unknown variable types
 * are skipped. */
int bp4_parse_step(const uint8_t *p, uint64_t base, size_t n, const bp4_idx_record *r,
                   int *column_major, const bp4_step_sink *sink, const char *what);
/* Parses the variable entries in p[0, n) (md.0 bytes starting at offset base). */
int bp4_parse_var_entries(const uint8_t *p, uint64_t base, size_t n, const bp4_step_sink *sink,
                          const char *what);



/* ---- the reader's index ---------------------------------------------------------------------
 * Built by one streaming pass over md.0 that keeps, per variable, only what listings need: the
 * steps it appears in (with where its entry is in md.0 and its block count), the shape of each
 * step (deduplicated), and min/max over everything. The blocks of a (variable, step) are parsed
 * on demand from md.0 through a read callback, and kept. Memory thus grows with what is asked.
 * Dims and strings live in an arena owned by the index; nothing moves once added. */

/* Reads n bytes of md.0 at off into buf (exactly, or an error). */
typedef int (*bp4_read_fn)(void *ctx, uint64_t off, size_t n, uint8_t *buf);

typedef struct bp4_var_step {
    uint32_t step;        /* dataset step, 0-based */
    uint32_t nblocks;
    uint64_t entry_off;   /* md.0 offset of the entry's length field */
    uint32_t entry_len;   /* bytes after the length field */
    uint32_t shape_id;    /* global and joined arrays: this step's shape in bp4_var.shapes */
    bp4_block *blocks;    /* NULL until loaded */
} bp4_var_step;

typedef struct bp4_var {
    char *name;
    int type;
    int kind;             /* gpubp_shape_kind, from the first block */
    size_t ndims;         /* of the first block */
    bp4_var_step *steps;
    size_t nsteps, cap_steps;
    uint64_t *shapes;     /* ndims values per distinct consecutive shape */
    size_t nshapes, cap_shapes;
    int has_mm;
    uint8_t mm[32];       /* min in [0,16), max in [16,32) over every block of every step */
    uint64_t joined;      /* pass scratch: running sum along the joined dimension */
    size_t sum_pos;       /* summary pass: index of the next var-step to summarize */
    uint32_t sum_seen;    /* summary pass: blocks seen in the current var-step */
    size_t loaded;        /* var-steps whose blocks are loaded */
    size_t pos;           /* index in bp4_index.vars */
} bp4_var;

typedef struct bp4_arena_chunk bp4_arena_chunk;

typedef struct bp4_index {
    bp4_var **vars;       /* in order of first appearance */
    size_t nvars, cap_vars;
    size_t *hash;         /* open addressing: index + 1 into vars, 0 = empty */
    size_t hash_cap;
    bp4_attr *attrs;      /* latest value of each attribute, in order of first appearance */
    size_t nattrs, cap_attrs;
    size_t nsteps;        /* steps added */
    uint8_t *colmajor;    /* per step: written by a column-major writer */
    size_t cap_colmajor;
    bp4_arena_chunk *arena;
    size_t steps_hint;    /* steps expected in all (md.idx records): sizes per-variable arrays */
    int light;            /* the pass counts the blocks of known variables without parsing them;
                             shapes and min/max then come from bp4_index_summarize_step */
    int summarized;       /* shapes and min/max of every step are known */
    size_t sum_steps;     /* steps summarized so far */
    bp4_read_fn read;     /* md.0 access for on-demand loads */
    void *read_ctx;
    /* parse state */
    bp4_var *cur;
    size_t cur_pos;
    bp4_var_step *cur_vs;
    uint32_t cur_step;
    int cur_colmajor;
    bp4_block *load;      /* blocks being loaded */
    size_t nload, cap_load;
} bp4_index;

void bp4_index_init(bp4_index *ix, bp4_read_fn read, void *read_ctx);
void bp4_index_free(bp4_index *ix);
/* Adds the step of record r as the index's next step; p holds md.0 bytes [base, base + n). */
int bp4_index_add_step(bp4_index *ix, const uint8_t *p, uint64_t base, size_t n,
                       const bp4_idx_record *r, const char *what);
/* The summary pass (after a light pass): shapes and min/max of step r, the index's
 * ix->sum_steps-th step. When every step is done, ix->summarized is set. */
int bp4_index_summarize_step(bp4_index *ix, const uint8_t *p, uint64_t base, size_t n,
                             const bp4_idx_record *r, const char *what);
bp4_var *bp4_index_find(const bp4_index *ix, const char *name);
const bp4_attr *bp4_index_find_attr(const bp4_index *ix, const char *name);
/* The var's entry for dataset step s (0-based), or NULL when the variable is absent there. */
const bp4_var_step *bp4_var_find_step(const bp4_var *v, size_t s);
/* The blocks of the variable's step vs (an index into v->steps), loaded on first use. */
int bp4_index_blocks(bp4_index *ix, bp4_var *v, size_t vs, const bp4_block **blocks,
                     const char *what);
/* The shape (ndims values) of a global or joined array at its step vs. */
static inline const uint64_t *bp4_var_shape(const bp4_var *v, size_t vs)
{
    return v->shapes + (size_t)v->steps[vs].shape_id * v->ndims;
}

#endif /* GBP_BP4_H */
